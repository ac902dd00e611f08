"""`kvtop explain` over the case logs (session 46, B4): what a trial over all 76 found, each with the log's own lines.

- a finding never advises the change the verdict says may already have run (trtllm-4275);
- every logged step says `measured`, in the JSON as in the text, with its line as note (trtllm-2268);
- a verdict built on logged KV memory does not move with --gpu (club3090-612);
- V0's refusal line reads as V0, and its pool is compared on its blocks (vllm-13061); an early V1 log is V1 (pr12569).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kvtop.cli import main
from tests.conftest import CASES, CONFIGS


def _explain(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main(["explain", *argv, "--no-calibration-store", "--json"]) == 0
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    return out


def test_a_finding_does_not_advise_what_the_verdict_says_may_have_run(capsys: pytest.CaptureFixture[str]) -> None:
    # trtllm#4275: `Number of blocks in KV cache primary pool: 8219`, `Allocated 16.05 GiB … (263008)`: 8,219 × 32 =
    # 263,008 tokens at 65,536 B (Llama-3.1-8B: 32 layers × 8 KV heads × 128 × 2 (K, V) × 1 B of fp8) = 16.05 GiB,
    # half the bf16 pool: the verdict names fp8 KV as one change that rebuilds it, so no finding may advise fp8
    log = CASES / "trtllm" / "trtllm-4275-llama31-8b-fp8kv-rtx5090-v019" / "engine.log"
    out = _explain(capsys, str(log), "--model", str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"))
    assert out["logged"]["token_capacity"] == 263_008
    assert "KV dtype fp8 (not auto)" in out["cause"]
    assert all(f["rule"] != "bf16_kv_where_fp8_supported" for f in out.get("findings", []))
    folded = [n for n in out["notes"] if n.startswith("finding “16-bit KV where the engine supports FP8 KV” (")]
    assert len(folded) == 1 and folded[0].endswith("folded into the verdict: its change is one the cause names as "
                                                   "rebuilding the logged figures")  # fmt: skip


def test_every_logged_step_says_measured_with_its_line(capsys: pytest.CaptureFixture[str]) -> None:
    # trtllm#2268: `Memory usage when calculating max tokens in paged kv cache: total: 39.39 GiB, available: 21.89 GiB`
    log = CASES / "trtllm" / "trtllm-2268-qwen15-7b-primary-pool" / "engine.log"
    out = _explain(capsys, str(log), "--model", str(CONFIGS / "meta-llama--Llama-2-7b-hf.json"))
    logged = [step for step in out["steps"] if step["measured"]]
    assert [round(step["bytes"] / 2**30, 2) for step in logged] == [39.39, 21.89]
    assert all(step["source"] == "measured" for step in logged)
    assert "total: 39.39 GiB" in logged[0]["note"] and "available: 21.89 GiB" in logged[1]["note"]


def test_the_gpu_does_not_move_a_verdict_on_logged_memory(capsys: pytest.CaptureFixture[str]) -> None:
    # club3090#612: `Available KV cache memory: 5.98 GiB`, `GPU KV cache size: 567,978 tokens`, nothing else: Qwen3.6's
    # GDN block aligns to 64 tokens on Hopper (FlashInfer's GDN prefill), to 16 on the RTX 5090 the issue ran
    log = CASES / "vllm" / "club3090-612-qwen36-35b-a3b-nvfp4-5090" / "engine.log"
    model = ["--model", str(CONFIGS / "heldout" / "nvidia--Qwen3.6-35B-A3B-NVFP4.json")]
    bare = _explain(capsys, str(log), *model)
    named = _explain(capsys, str(log), *model, "--gpu", "RTX5090")
    assert bare["logged"]["token_capacity"] == named["logged"]["token_capacity"] == 567_978
    assert bare["cause"].startswith("KV dtype fp8_e4m3 (not auto): with it kvtop rebuilds the logged 567,978 tokens")
    assert named["cause"].startswith("KV dtype fp8_e4m3 (not auto): with it kvtop rebuilds the logged 567,978 tokens")


def test_v0s_refusal_reads_as_v0_and_compares_its_blocks(capsys: pytest.CaptureFixture[str]) -> None:
    # vllm#13061: `The model's max seq len (131072) is larger than the maximum number of tokens that can be stored in
    # KV cache (81536)` (V0's worker; V1 words it `To serve at least one request …`): the pool it sized, 5,096 × 16
    log = CASES / "vllm" / "vllm-13061-r1-distill-qwen14b-2x4090-v0" / "engine.log"
    model = ["--model", str(CONFIGS / "heldout" / "wave3" / "Qwen--Qwen2.5-14B.json")]
    out = _explain(capsys, str(log), *model, "--gpu", "RTX4090", "--tp", "2")
    assert out["engine_version"] == "0.7.3" and "V0" in out["version_detail"]
    assert out["logged"]["token_capacity"] == 81_536 and out["logged"]["num_gpu_blocks"] == 5_096
    assert out["predicted"]["token_capacity"] % 16 == 0 and out["predicted"]["token_capacity"] > 0  # blocks × 16


def test_an_early_v1_log_is_not_called_v0(capsys: pytest.CaptureFixture[str]) -> None:
    # vllm PR 12569: `gpu_model_runner.py:848] Loading model weights took 67.7229 GB`, `kv_cache_utils.py:395] # GPU
    # blocks: 1381`: V1's files; 1,381 × 16 = 22,096 tokens
    log = CASES / "vllm" / "vllm-pr12569-llama31-70b-w8a8" / "engine.log"
    out = _explain(capsys, str(log), "--model", str(CONFIGS / "meta-llama--Llama-3.1-70B-Instruct.json"))
    assert out["logged"]["token_capacity"] == 22_096
    assert out["version_detail"].startswith("early V1 lines")


def test_a_negative_profile_is_a_failed_start_of_zero_tokens(capsys: pytest.CaptureFixture[str]) -> None:
    # SGLang C11: `max_total_tokens=131072 is larger than the profiled value -561981. Use the profiled value instead.`
    # after `Load weight end. … avail mem=21.73 GB, mem usage=166.59 GB`: the profile left nothing for the KV pool
    log = CASES / "sglang" / "C11" / "engine.log"
    out = _explain(capsys, str(log), "--model", str(CONFIGS / "deepseek-ai--DeepSeek-R1.json"), "--gpu-memory", "192GiB")
    assert (out["verdict"], out["logged"]["token_capacity"]) == ("failed_start", 0)
    assert out["missing"] == [] and any("profiled value -561981" in note for note in out["notes"])


def test_sglang_041s_pool_sizes_check_against_the_schedulers_tokens(capsys: pytest.CaptureFixture[str]) -> None:
    # SGLang C13 (0.4.1): `KV Cache is allocated. K size: 27.13 GB, V size: 27.13 GB.` with no #tokens, then
    # `max_total_num_tokens=444500`: (444,500 + 1 page) × 65,536 B (Llama-3.1-8B: 32 layers × 8 KV heads × 128 × 2 B)
    # = 29,130,817,536 B = 27.1304 GiB, each of K and V
    log = CASES / "sglang" / "C13" / "engine.log"
    out = _explain(capsys, str(log), "--model", str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"), "--gpu", "H100")
    checks = {check["name"]: check for check in out["pool_checks"]}
    assert set(checks) == {"K", "V"}
    assert all(c["rows"] == 444_501 and c["predicted_bytes"] == 29_130_817_536 and c["within_rounding"] for c in checks.values())


def test_a_refusal_after_logged_kv_memory_is_rebuilt_from_it(capsys: pytest.CaptureFixture[str]) -> None:
    # vllm#27508 (gpt-oss-120b, H100): `Available KV cache memory: 1.71 GiB`, then `EngineCore failed to start.`:
    # 1.71 GiB ÷ 589,824 B per block (18 layers of a group × 8 KV heads × 64 × 2 (K, V) × 2 B × 16 tokens) = 3,112
    # blocks, fewer than one 131,072-token request's 131,072 / 16 = 8,192 full-attention blocks alone: vLLM refuses
    log = CASES / "vllm" / "vllm-27508-gpt-oss-120b-h100" / "engine.log"
    # a v0.11-era log (no version line, no sized cache) with blocks of 16: pinned to 0.33.0 (0.34.0's block is 64)
    out = _explain(capsys, str(log), "--model", str(CONFIGS / "openai--gpt-oss-120b.json"), "--gpu", "H100",
                   "--engine-version", "0.33.0")  # fmt: skip
    assert (out["verdict"], out["logged"]["token_capacity"], out["predicted"]["token_capacity"]) == ("failed_start", None, 0)
    assert any("`Available KV cache memory: 1.71 GiB` before the refusal" in note for note in out["notes"])
    assert "3,112 blocks fit" in next(step["note"] for step in out["steps"] if step["label"].startswith("tokens:"))
