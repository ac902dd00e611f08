"""`kvtop diagnose` on the demo scenarios: what an expert would name, with the planner's numbers."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from kvtop.cli import main
from kvtop.commands.node_source import open_node_source
from kvtop.domain.calibration.estimate import calibrated_ledger
from kvtop.domain.engines.base import MeasuredInputs
from tests.calibrated_figures import (
    GIB,
    MIB,
    demo_llama_70b_tokens,
    demo_sglang_h100_pre_load_bytes,
)

# What a restart of the demo's SGLang finds free before the weights with nothing else on the GPU: CUDA's H100 total as
# the demo's NVML v2 reports it (its total less its reserve: the logged start's 79.19 GiB, measured on the node as on a
# live one) less SGLang's calibrated context at TP 8 on NVLink, fitted on the corpus (tests/calibrated_figures.py)
H100_RESTART_FREE = demo_sglang_h100_pre_load_bytes(8)


def diagnose_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code = main([*args, "--json"] if "diagnose" in args else ["diagnose", *args, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_healthy_demo_exits_0_with_no_findings_only_advice(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = diagnose_json(capsys, "--demo", "llama70b-tp8-sglang")
    assert code == 0 and out["findings"] == []
    assert [a["rule"] for a in out["advice"]] == ["bf16_kv_where_fp8_supported"]
    assert out["advice"][0]["fix_flags"] == ["--tp-size", "8", "--kv-cache-dtype", "fp8_e4m3"]


def test_foreign_process_on_gpu3_costs_every_rank_the_planners_tokens(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out = diagnose_json(capsys, "--demo", "llama70b-tp8-foreign-gpu3")
    assert code == 1
    (finding,) = out["findings"]
    assert finding["rule"] == "co_tenant" and finding["gpus"] == [3] and len(finding["ranks"]) == 8
    assert finding["fix"] == "stop pid 4242 (python, user ada, 6.00 GiB on GPU 3), then restart sglang:41000"
    # The planner: SGLang's pre-load free memory (min over ranks) with and without the 6 GiB, on
    # the demo's H100s (CUDA's total less SGLang's calibrated context, as kvtop predicts it), the
    # weights at the calibrated term (the book and SGLang's float32 rope cache, 8,192 × 128 × 4 B = 4,194,304).
    # KV budget = free − the weights 17,644,929,024 − free × (1 − 0.818), ÷ 40,960 B.
    ledger = open_node_source("llama70b-tp8-foreign-gpu3").collect().engines[0].ledger
    assert ledger is not None
    clean = H100_RESTART_FREE

    def capacity(free: int) -> int:
        measured = MeasuredInputs(free_before_load_bytes=free)
        return calibrated_ledger(
            ledger.model, ledger.settings, gpu_total_bytes=ledger.gpu_total_bytes, measured=measured
        ).token_capacity

    # 6 GiB × mfs 0.818 ÷ 40,960 B = 128,660.3 tokens; each pool is floored to whole tokens (SGLang's arithmetic by
    # hand, tests/calibrated_figures.py: at the fits of da524f1c 1,221,506.15 and 1,092,845.87), so the two are
    # 128,661 apart there (128,660 at the fits before)
    clean_tokens, squeezed = demo_llama_70b_tokens(8), demo_llama_70b_tokens(8, clean - 6 * GIB)
    assert capacity(clean) == clean_tokens and capacity(clean - 6 * GIB) == squeezed
    assert (
        finding["tokens"] == finding["gain_tokens"] == clean_tokens - squeezed
        and 128_660 <= clean_tokens - squeezed <= 128_661
    )
    assert finding["bytes"] == 6 * GIB
    # the finding is the waterfall's term: what the rank holds against clean, all of it this cause
    assert finding["cause"] == "other_processes" and finding["term_tokens"] == squeezed - clean_tokens


def test_the_co_tenants_alternative_is_sglangs_arithmetic_with_the_notebook_left_running(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Left running, the 6 GiB notebook leaves a restart the pre-load the demo's ledger stands on (CUDA's H100 total
    as the demo's NVML v2 reports it, measured again since the live prediction reads total − reserved, less SGLang's context at TP 8 on NVLink, tests/calibrated_figures.py) less 6 GiB free, the explained
    pool's basis (one figure for a restart as launched; NVML's reserve, 2,083,060 B less than the calibrated driver
    share, made it 41 tokens more before session 46); SGLang's reserve is that × (1 − share), its own × (1 − 0.818): 0.83
    takes it 0.86 GiB below (0.012 × 73,020.0 MiB at the fourth pass's SGLang context fit; 72,760.9 at da524f1c's),
    0.84 would take 1.57 GiB: kvtop's tolerance is 1 GiB. The weights are the calibrated term (the book 17,640,734,720,
    SGLang's rope cache 4,194,304 B and the caching allocator's segment tails 21,479,424 B, tests/calibrated_figures.py):
    at 0.83 the KV budget is 76,566,988,264 − 17,666,408,448 − 76,566,988,264 × 0.17 = 45,884,191,811 B ÷ 40,960
    = 1,120,219 tokens, at 0.818 1,097,787 (there, +22,432; SGLang's float arithmetic by hand in the helper)."""
    code, out = diagnose_json(capsys, "--demo", "llama70b-tp8-foreign-gpu3")
    alternative = out["findings"][0]["alternative"]
    ledger = open_node_source("llama70b-tp8-foreign-gpu3").collect().engines[0].ledger
    assert ledger is not None
    left = H100_RESTART_FREE - 6 * GIB
    # the premise: 0.83 is the least share (by 0.01) whose reserve is within 1 GiB of SGLang's own, whatever the fit
    assert 72_600 < left / MIB < 73_200 and (0.83 - 0.818) * left < GIB <= (0.84 - 0.818) * left

    def capacity(**settings: float) -> int:
        measured = MeasuredInputs(free_before_load_bytes=left)
        return calibrated_ledger(
            ledger.model, ledger.settings.model_copy(update=settings), gpu_total_bytes=ledger.gpu_total_bytes,
            measured=measured,
        ).token_capacity  # fmt: skip

    at_083, at_0818 = demo_llama_70b_tokens(8, left, fraction=0.83), demo_llama_70b_tokens(8, left)
    assert (alternative["fix"], alternative["limit"], alternative["pids"]) == ("--mem-fraction-static 0.83", "reserve", [4242])
    assert alternative["tokens"] == capacity(mem_fraction_static=0.83) == at_083
    assert alternative["restart_tokens"] == capacity() == at_0818
    assert alternative["gain_tokens"] == at_083 - at_0818 == capacity(mem_fraction_static=0.83) - capacity()
    assert alternative["flags"][-2:] == ["--mem-fraction-static", "0.83"]
    # the launch as SGLang takes it (server_args.py `--mem-fraction-static`, type=float), as `plan --json` writes it;
    # the share's words are `fix`'s alone (no second `words` key)
    assert alternative["launch"]["engine_flags"][-2:] == ["--mem-fraction-static", "0.83"]
    assert alternative["launch"]["engine_config"] is None and alternative["launch"]["engine_env"] == {}
    assert "words" not in alternative and "settings" not in alternative
    assert main(["diagnose", "--demo", "llama70b-tp8-foreign-gpu3"]) == 1
    text = capsys.readouterr().out
    said = f"  or:  keep pid 4242 running and restart sglang:41000 with --mem-fraction-static 0.83: +{at_083 - at_0818:,} tokens"
    assert said in text


def test_global_demo_flag_works_too(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = diagnose_json(capsys, "--demo", "llama70b-tp8-foreign-gpu3", "diagnose")
    assert code == 1 and out["source"] == "demo:llama70b-tp8-foreign-gpu3"


def test_orphaned_vllm_worker_is_named_with_its_kill(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = diagnose_json(capsys, "--demo", "orphan-vllm-worker")
    (finding,) = out["findings"]
    assert code == 1 and finding["rule"] == "orphan_worker" and finding["gpus"] == [1]
    assert finding["fix"].startswith("kill 2753461 (VLLM::Worker_TP1") and finding["bytes"] == 72090 * MIB
    assert finding["tokens"] == 0 and finding["whole_gpus"] == 1  # no engine runs on GPU 1: a GPU, not tokens


def test_lost_gpu_is_critical(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = diagnose_json(capsys, "--demo", "gpu5-lost")
    assert code == 1 and [(f["rule"], f["severity"], f["gpus"]) for f in out["findings"]] == [
        ("gpu_lost", "critical", [5])
    ]


def test_dp_attention_deepseek_on_vllm_is_healthy(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = diagnose_json(capsys, "--demo", "dsv3-dp-attention-vllm")
    assert code == 0 and out["findings"] == []  # DP8 + EP: the MLA latent is not copied


def test_text_output_leads_with_the_finding_and_its_fix(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diagnose", "--demo", "llama70b-tp8-foreign-gpu3"]) == 1
    text = capsys.readouterr().out
    cost = demo_llama_70b_tokens(8) - demo_llama_70b_tokens(8, H100_RESTART_FREE - 6 * GIB)  # 128,661 at the fits of da524f1c
    # a person reads the rule's title; the id (`co_tenant`) is `--json`'s, never the text's
    assert f"WARNING  Another process holds memory on an engine's GPU · GPU 3 · −{cost:,} tokens/rank" in text
    assert "fix: stop pid 4242 (python, user ada, 6.00 GiB on GPU 3), then restart sglang:41000" in text
    assert text.index("Another process holds memory") < text.index("advice (trade-offs")
    assert "co_tenant" not in text and "bf16_kv_where_fp8_supported" not in text
    assert "INFO     16-bit KV where the engine supports FP8 KV · GPUs 0,1,2,3,4,5,6,7 · +" in text


def test_unknown_scenario_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diagnose", "--demo", "no-such-scenario", "--json"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kvtop: error:") and err.count("\n") == 1



def test_text_prices_a_lost_gpu_as_a_whole_gpu_not_as_no_cost(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diagnose", "--demo", "gpu5-lost"]) == 1
    text = capsys.readouterr().out
    assert "CRITICAL GPU lost · GPU 5 · a whole GPU out of service  (79.65 GiB)" in text
    assert "INFO     Idle GPU · GPU 4 · a whole GPU unused" in text and "no token cost" not in text
    # the demo's lost-GPU message is NVML's kind (the fault), not a second fix: it said 'nvidia-smi -r -i 5' above
    # the finding's own 'nvidia-smi --gpu-reset -i 5' (session 67's walk)
    assert "nvidia-smi --gpu-reset -i 5" in text and "nvidia-smi -r" not in text


def test_json_and_text_carry_the_incidents_answer(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sentence a person pastes into a ticket: the finding's GPU, rank, tokens, pid, bytes and fix."""
    monkeypatch.setenv("COLUMNS", "100")  # a pipe's width (tests/conftest.py sets every other test's wide)
    code, out = diagnose_json(capsys, "--demo", "llama70b-tp8-foreign-gpu3")
    (finding,) = out["findings"]
    assert out["answer"].startswith(f"GPU 3 (rank TP3 of sglang:41000) loses {finding['tokens']:,} tokens to pid 4242 (python, 6.00 GiB, started ")
    alternative = finding["alternative"]
    assert out["answer"].endswith(
        " ago) — stop it, then restart sglang:41000 to recover them; or keep it and restart with "
        f"--mem-fraction-static 0.83 to win back {alternative['gain_tokens']:,} tokens per rank"
    )
    assert main(["diagnose", "--demo", "llama70b-tp8-foreign-gpu3"]) == 1
    # 252 columns said whole before (session 66); now wrapped at the width (100 piped), hung under `answer: `
    lines = capsys.readouterr().out.split("\n")
    said = [lines[1], *itertools.takewhile(lambda line: line.startswith(" " * 8), lines[2:])]
    assert len(said) == 3 and all(len(line) <= 100 for line in said), [len(line) for line in said]
    assert " ".join(line.strip() for line in said) == f"answer: {out['answer']}"


def test_advice_without_a_gain_says_so_not_plus_zero(capsys: pytest.CaptureFixture[str]) -> None:
    # DeepSeek-V3 at TP16 over two nodes: attention TP 16 copies the MLA latent on every rank, and no smaller
    # attention TP fits the weights on these GPUs, so the advice has no gain to state
    main(["diagnose", "--demo", "dsv3-tp16-sglang-node0"])
    text = capsys.readouterr().out
    assert "INFO     MLA latent copied by attention tensor parallel · GPUs 0,1,2,3,4,5,6,7 · no gain found" in text
    assert "+0 tokens" not in text and "mla_under_attention_tp" not in text


def test_the_tensorrt_llm_demos_fp8_advice_is_the_yaml_trtllm_serve_reads(capsys: pytest.CaptureFixture[str]) -> None:
    """The demo launches `trtllm-serve … --kv_cache_free_gpu_memory_fraction 0.9` at 1.1.0
    (examples/scenarios/llama70b-tp8-trtllm.json). FP8 KV is no serve option: it is `kv_cache_config: {dtype: fp8}` in
    the YAML `--extra_llm_api_options` names (serve.py's click options at NVIDIA/TensorRT-LLM 00209af1 declare no
    `--kv_cache_config.*`; KvCacheConfig.dtype, llmapi/llm_args.py), and with a kv_cache_config in the YAML the line's
    0.9 goes beside it (KvCacheConfig.free_gpu_memory_fraction), the line's option dropped."""
    code, out = diagnose_json(capsys, "--demo", "llama70b-tp8-trtllm")
    assert code == 0
    (advice,) = [item for item in out["advice"] if item["rule"] == "bf16_kv_where_fp8_supported"]
    launch = advice["fix_launch"]
    assert launch["engine_config"]["yaml"] == {"kv_cache_config": {"dtype": "fp8", "free_gpu_memory_fraction": 0.9}}
    assert launch["engine_config"]["option"] == "--extra_llm_api_options"
    assert launch["engine_flags"][-2:] == ["--extra_llm_api_options", launch["engine_config"]["file"]]
    assert launch["engine_flags"][:2] == ["--tp_size", "8"] and "--kv_cache_free_gpu_memory_fraction" not in launch["engine_flags"]
    assert launch["engine_env"] == {}
