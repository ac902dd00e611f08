"""`kvtop plan` as a user runs it: the JSON contract, engine flag spellings, and bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from kvtop.cli import main
from kvtop.domain.ledger import CALIBRATED_WEIGHTS_ROW
from tests.calibrated_figures import SGLANG_LLAMA_70B_SEGMENT_TAILS
from tests.cli_in_process import run_kvtop
from tests.conftest import CASES, CONFIGS

QWEN = str(CONFIGS / "Qwen--Qwen2.5-7B-Instruct.json")
LLAMA = str(CONFIGS / "meta-llama--Meta-Llama-3-70B.json")
GPT_OSS = str(CONFIGS / "openai--gpt-oss-120b.json")
MIXTRAL = str(CONFIGS / "mistralai--Mixtral-8x7B-v0.1.json")
DEEPSEEK = str(CONFIGS / "deepseek-ai--DeepSeek-V3.json")
QWEN3_30B_FP8 = str(CONFIGS / "Qwen--Qwen3-30B-A3B-FP8.json")
NVFP4 = str(CONFIGS / "nvidia--Qwen3-235B-A22B-NVFP4.json")
GEMMA3 = str(CONFIGS / "google--gemma-3-27b-it.json")
C17_LOG = str(CASES / "sglang" / "C17" / "engine.log")


def plan_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["plan", "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_json_contract_keys_and_types(capsys: pytest.CaptureFixture[str]) -> None:
    out = plan_json(capsys, "--model", LLAMA, "--tp", "8", "--gpu", "H100")
    for key in (
        "token_capacity",
        "kv_bytes_per_token",
        "weights_bytes",
        "max_running_requests",
        "max_concurrency",
        "fits",
        "ranks",
    ):
        assert key in out
    assert isinstance(out["token_capacity"], int) and out["token_capacity"] > 0
    assert out["max_concurrency"] is None  # SGLang has no such expression
    assert len(out["ranks"]) == 8
    rank = out["ranks"][0]
    for key in ("rank", "weights_bytes", "kv_bytes_per_token", "kv_pool_bytes", "token_capacity", "weights"):
        assert key in rank
    assert {row["component"] for row in rank["weights"]} == {
        "embedding",
        "attention",
        "mlp",
        "norms",
        "lm_head",
        CALIBRATED_WEIGHTS_ROW,  # SGLang's float32 rope cos/sin cache: 8,192 positions × 128 × 4 B
    }
    beside = 8_192 * 128 * 4 + SGLANG_LLAMA_70B_SEGMENT_TAILS[8]  # and the allocator's segment tails
    assert sum(row["bytes"] for row in rank["weights"]) == rank["weights_bytes"] == 17_640_734_720 + beside


def test_a_reserve_below_the_engines_own_is_in_the_json(capsys: pytest.CaptureFixture[str]) -> None:
    """SGLang 0.5.9's automatic fraction on an H100 is 0.818 (docs/engines/sglang.md §5): it keeps
    pre-load × 0.182; 0.95 keeps pre-load × 0.05. The pool fits; the JSON says by how much the
    reserve is short, as the planner's "at risk" does (a review found it only in a note)."""
    # the free memory before load given (80,535 MiB: the H100's 81,559 less 1 GiB), so that the engine's
    # arithmetic, not the calibrated context, is what this checks
    out = plan_json(capsys, "--model", LLAMA, "--tp", "8", "--gpu", "H100", "--engine-version", "0.5.9",
                    "--mem-fraction-static", "0.95", "--free-memory", "80535MiB")  # fmt: skip
    pre_load = out["gpu"]["total_bytes"] - (1 << 30)
    assert out["fits"] is True
    assert out["reserve_bytes"] == round(pre_load * 0.05)
    assert out["reserve_needed_bytes"] == round(pre_load * (1 - 0.818))
    assert out["reserve_short_bytes"] == out["reserve_needed_bytes"] - out["reserve_bytes"]


def test_every_spelling_of_tp_and_cmd_agree(capsys: pytest.CaptureFixture[str]) -> None:
    a = plan_json(capsys, "--model", LLAMA, "--tp-size", "4", "--mem-fraction-static", "0.85")
    b = plan_json(
        capsys,
        "--model",
        LLAMA,
        "--engine",
        "sglang",
        "--tensor-parallel-size",
        "4",
        "--mem-fraction-static=0.85",
    )
    c = plan_json(
        capsys,
        "--cmd",
        f"python -m sglang.launch_server --model-path {LLAMA} --tp 4 --mem-fraction-static 0.85 --port 30000",
    )
    assert a["token_capacity"] == b["token_capacity"] == c["token_capacity"] > 0
    assert a["kv_bytes_per_token"] == 81_920


def test_a_layout_that_does_not_fit_is_still_a_plan(capsys: pytest.CaptureFixture[str]) -> None:
    out = plan_json(capsys, "--model", LLAMA, "--tp", "1", "--gpu", "H100", "--free-memory", "80535MiB")
    assert out["fits"] is False and out["token_capacity"] == 0
    # 141.1 GB whole on one rank, and SGLang's float32 rope cos/sin cache (8,192 positions × 128 × 4 B)
    # and the caching allocator's tails (docs/engines/sglang.md §20.2): at TP 1 every matrix is a whole number of
    # 2 MiB, the 4 MiB rope cache opens a 20 MiB segment (16 MiB unused) and the norms' 2,637,824 B two 2 MiB ones
    weights = 70_553_706_496 * 2 + 8_192 * 128 * 4 + 16 * 2**20 + (4 * 2**20 - 2_637_824)
    assert out["ranks"][0]["weights_bytes"] == weights
    pre = (81559 << 20) - (1 << 30)  # H100 total − the estimated CUDA context
    # SGLang's latest auto rule at TP1, with 58 piecewise prefill-graph sizes of 8 MiB (on since v0.5.10rc0)
    mfs = round((81559 - (512 + 1.5 * 8192 + 128 + 2 * 256 + 58 * 8)) / 81559, 3)
    assert out["memory_fraction"]["value"] == mfs == 0.830
    shortfall = -int(((pre - weights) / 2**30 - pre / 2**30 * (1 - mfs)) * 2**30)
    assert abs(out["shortfall_bytes"] - shortfall) <= 1
    assert main(["plan", "--model", LLAMA, "--tp", "1", "--require-fit"]) == 1


#: Bad input to `kvtop plan`, each with what its one line of error must say
BAD_INPUT = [
    (["--model", "/nonexistent/config.json"], "not found"),
    (["--model", QWEN, "--tp", "3"], "--tp"),
    (["--model", QWEN, "--gpu-memory", "-5GiB"], "negative"),
    # a value like a negative size after any option: the field's own check, not argparse's "expected one argument"
    (["--model", QWEN, "--host-cache", "-5GiB"], "--host-cache: a size cannot be negative"),
    (["--model", QWEN, "--tp", "-2"], "--tp: must be at least 1"),
    (["--model", QWEN, "--kv-cache-dtype", "fp3"], "--kv-cache-dtype"),
    (["--model", QWEN, "--tpp", "2"], "--tpp"),
    (
        ["--model", QWEN, "--cmd", "vllm serve 'x"],
        "--cmd: cannot read the command (No closing quotation)",
    ),
    # SGLang's SWA:full ratio must be in (0, 1]: -1 divided by zero, 0 became 0.8, -2 "did not fit"
    (["--model", GPT_OSS, "--swa-full-tokens-ratio=-1"], "--swa-full-tokens-ratio: must be in (0, 1]"),
    (["--model", GPT_OSS, "--swa-full-tokens-ratio=0"], "--swa-full-tokens-ratio: must be in (0, 1]"),
    (["--model", GPT_OSS, "--swa-full-tokens-ratio=-2"], "--swa-full-tokens-ratio: must be in (0, 1]"),
    (["--model", GPT_OSS, "--swa-full-tokens-ratio=1.5"], "--swa-full-tokens-ratio: must be in (0, 1]"),
    # counts are at least 1, named as the user spelled them
    (["--model", QWEN, "--max-running-requests", "-3"], "--max-running-requests: must be at least 1"),
    (["--model", QWEN, "--max-running-requests", "0"], "--max-running-requests: must be at least 1"),
    (["--model", QWEN, "--engine", "vllm", "--max-num-seqs", "0"], "--max-num-seqs: must be at least 1"),
    (["--model", QWEN, "--max-total-tokens", "-10"], "--max-total-tokens: must be at least 1"),
    (["--model", QWEN, "--engine", "vllm", "--max-num-batched-tokens", "-5"], "--max-num-batched-tokens"),
    (["--model", QWEN, "--chunked-prefill-size", "0"], "or -1 turns chunked prefill off"),
    (["--model", QWEN, "--engine", "vllm", "--max-model-len", "-1"], "--max-model-len: -1"),
    # expert parallelism beyond the ranks that hold the experts; DCP that does not divide TP
    (["--model", MIXTRAL, "--tp", "2", "--ep", "8"], "--ep: expert parallel size 8 must divide tp 2"),
    (["--model", DEEPSEEK, "--tp", "8", "--ep", "16"], "--ep: expert parallel size 16 must divide tp 8"),
    (["--model", MIXTRAL, "--engine", "vllm", "--tp", "2", "--dp", "2", "--ep", "8"], "tp × dp = 4"),
    (["--model", QWEN, "--engine", "vllm", "--tp", "4", "--dcp", "3"], "--dcp: decode context parallel"),
    (["--model", QWEN, "--engine", "vllm", "--dcp", "16"], "must divide tp 1"),
    # launches SGLang refuses (docs/engines/sglang.md §4.5): 768 ÷ 4 = 192 breaks the 128-wide FP8 blocks;
    # ModelOpt NVFP4 needs compute capability 10.0 before SGLang 0.5.13
    (["--model", QWEN3_30B_FP8, "--tp", "4"], "--tp: SGLang refuses block-FP8 MoE weights"),
    (["--model", NVFP4, "--tp", "4", "--gpu", "H100", "--engine-version", "0.5.12"], "--gpu: SGLang 0.5.12"),
    # a memory size without a unit would be read as bytes
    (["--model", QWEN, "--gpu-memory", "80"], "--gpu-memory: '80' has no unit"),
    (["--model", QWEN, "--gpu-memory", "100B"], "too small for a GPU"),
    (["--model", QWEN, "--free-memory", "70"], "--free-memory: '70' has no unit"),
    (["--model", QWEN, "--weights-memory", "15"], "--weights-memory: '15' has no unit"),
    # one field typed twice at two values: the engine's argparse keeps the last silently; was planned at TP4
    (["--model", QWEN, "--engine", "vllm", "--tp", "2", "--tensor-parallel-size", "4"],
     "--tensor-parallel-size: given twice, at two values: --tp 2 and --tensor-parallel-size 4"),
    (["--model", QWEN, "--context-length", "4096", "--context-length", "8192"], "--context-length: given twice"),
    # an empty --gpu (an unset shell variable) was planned as the default H100
    (["--model", QWEN, "--gpu", ""], "--gpu: empty"),
    (["--model", QWEN, "--gpu", " ", "--gpu-memory", "80GiB"], "--gpu: empty"),
]


@pytest.mark.parametrize(("args", "needle"), BAD_INPUT)
def test_bad_input_is_one_clear_line(args: list[str], needle: str) -> None:
    result = run_kvtop("plan", *args)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1 and needle in result.stderr


@pytest.mark.parametrize(("args", "needle"), BAD_INPUT[:2])
def test_bad_input_in_a_fresh_process_exits_2_with_one_clear_line(args: list[str], needle: str) -> None:
    """`python -m kvtop` itself, not `main` in this process: the interpreter's exit status and stderr."""
    result = subprocess.run(
        [sys.executable, "-m", "kvtop", "plan", *args], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1 and needle in result.stderr


@pytest.mark.parametrize("gpu_memory", ["80", "1", "100B"])
def test_explain_rejects_a_gpu_memory_without_a_unit(gpu_memory: str) -> None:
    """Once a ZeroDivisionError deep in the SGLang rules: 80 was read as 80 bytes."""
    result = run_kvtop("explain", C17_LOG, "--model", QWEN, "--gpu-memory", gpu_memory)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1 and "--gpu-memory" in result.stderr and "80GiB" in result.stderr


def test_sglang_enable_multimodal_typed_to_kvtop_is_kept(capsys: pytest.CaptureFixture[str]) -> None:
    """Gemma-3 is text-only to SGLang unless --enable-multimodal (sglang.md §4.4): then 100 MiB is reserved."""
    text = plan_json(capsys, "--model", GEMMA3, "--gpu", "H100", "--mem-fraction-static", "0.85")
    vlm = plan_json(capsys, "--model", GEMMA3, "--gpu", "H100", "--mem-fraction-static", "0.85", "--enable-multimodal")
    assert text["kv_budget_bytes"] - vlm["kv_budget_bytes"] == 100 << 20


def test_documented_special_values_and_wide_vllm_ep_still_plan(capsys: pytest.CaptureFixture[str]) -> None:
    given = ("--free-memory", "80535MiB")  # the H100 less 1 GiB: the engine's arithmetic, not the calibration
    chunked = plan_json(capsys, "--model", MIXTRAL, "--tp", "2", "--gpu", "H100", *given)
    unchunked = plan_json(
        capsys, "--model", MIXTRAL, "--tp", "2", "--gpu", "H100", "--chunked-prefill-size", "-1", *given
    )
    # -1 turns chunking off: the activation reserve follows max_prefill_tokens (16,384), not 8,192, and no
    # prefill sizes are captured; chunked: (81,559 − 14,032) / 81,559 = 0.828 at 65,536 B per token (TP2). The
    # weights include SGLang's float32 rope cos/sin cache whole on each rank (32,768 positions × 128 × 4 B = 16 MiB):
    # 256 cells of 65,536 B fewer than the book alone gives (354,279 and 167,438)
    rope_cells = 32_768 * 128 * 4 // 65_536
    # and the caching allocator's tails (docs/engines/sglang.md §20.2): the embedding and LM head shards, 16,000 ×
    # 4,096 × 2 B = 125 MiB each in 126 MiB segments (2 MiB), the routers' and norms' 2,629,632 B in two 2 MiB small
    # segments (1,564,672 B): 3,661,824 B, 55.9 cells, 56 fewer after the floor
    tail_cells = 56
    assert (chunked["token_capacity"], unchunked["token_capacity"]) == (
        354_279 - rope_cells - tail_cells, 167_438 - rope_cells - tail_cells
    )
    vllm_ep = plan_json(
        capsys, "--model", MIXTRAL, "--engine", "vllm", "--tp", "2", "--dp", "4", "--ep", "8", "--gpu", "H100"
    )
    # EP 8 over tp × dp = 8 ranks, and vLLM's rope cos/sin cache whole on each (32,768 positions × 128 × 2 B)
    assert vllm_ep["ranks"][0]["weights_bytes"] == 12_881_240_064 + 32_768 * 128 * 2
    bytes_exact = plan_json(capsys, "--model", MIXTRAL, "--tp", "2", "--gpu-memory", "85899345920B")
    assert (
        bytes_exact["token_capacity"]
        == plan_json(capsys, "--model", MIXTRAL, "--tp", "2", "--gpu-memory", "80GiB")["token_capacity"]
    )


def test_malformed_and_unknown_configs_name_the_field(tmp_path) -> None:
    (tmp_path / "trunc.json").write_text('{"hidden_size": 4096,')
    (tmp_path / "frob.json").write_text('{"architectures": ["FrobForCausalLM"], "model_type": "frob"}')
    cfg = json.loads((CONFIGS / "Qwen--Qwen2.5-7B-Instruct.json").read_text())
    cfg["num_hidden_layers"] = "28"  # absent, it would be Qwen2Config's default (32), as transformers reads it
    (tmp_path / "nolayers.json").write_text(json.dumps(cfg))
    for name, needle in (
        ("trunc", "malformed JSON"),
        ("frob", "hidden_size: missing (a generic reading of 'frob' needs it)"),  # no entry: read generically
        ("nolayers", "num_hidden_layers"),
    ):
        result = run_kvtop("plan", "--model", str(tmp_path / f"{name}.json"))
        assert result.returncode == 2 and needle in result.stderr and "Traceback" not in result.stderr


def test_domain_and_plan_help_load_neither_textual_nor_torch() -> None:
    probe = (
        "import sys, kvtop.domain.ledger, kvtop.domain.node\n"
        "from kvtop.cli import main\n"
        "try:\n    main(['plan', '--help'])\nexcept SystemExit:\n    pass\n"
        "bad = [m for m in ('textual', 'torch', 'pynvml') if m in sys.modules]\n"
        "print('LOADED', bad)\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert "LOADED []" in result.stdout, result.stdout[-300:] + result.stderr[-300:]


def test_kv_cache_memory_bytes_in_gib_is_the_byte_count_handed_to_vllm(capsys) -> None:
    """`--kv-cache-memory-bytes 20GiB` plans as vLLM's own `20G` (2^30 per G) and copies as bytes."""
    from kvtop.cli import main

    assert main(["plan", "--model", "llama-3.1-8b", "--engine", "vllm", "--kv-cache-memory-bytes", "20GiB"]) == 0
    gib_text = capsys.readouterr().out
    assert main(["plan", "--model", "llama-3.1-8b", "--engine", "vllm", "--kv-cache-memory-bytes", "20G"]) == 0
    assert capsys.readouterr().out == gib_text
    assert "engine flags: --kv-cache-memory-bytes 21474836480" in gib_text
    # 20 GiB of 16-token blocks of 131,072 B (Llama-3.1-8B bf16: 32 layers × 2 × 8 heads × 128 × 2 B)
    assert f"Token capacity      {20 * (1 << 30) // (16 * 131_072) * 16:,} tokens per rank" in gib_text


def test_a_layout_refusal_names_the_flag_as_the_engine_spells_it(capsys) -> None:
    """LMDeploy's `--cp 2` on one GPU: the refusal leads with --cp, the flag typed, then kvtop's --dcp."""
    from kvtop.cli import main

    assert main(["plan", "--model", "llama-3.1-8b", "--engine", "lmdeploy", "--cp", "2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kvtop: error: --cp/--dcp: decode context parallel size 2 must divide attention TP 1")


def test_engine_version_latest_asks_for_the_latest_rules_as_headers_print_it(capsys) -> None:
    from kvtop.cli import main

    assert main(["plan", "--model", "llama-3.1-8b", "--engine-version", "latest"]) == 0
    latest = capsys.readouterr().out
    assert main(["plan", "--model", "llama-3.1-8b"]) == 0
    assert latest == capsys.readouterr().out and "SGLang latest" in latest.splitlines()[0]


def test_a_checkpoints_config_json_is_named_by_its_folder(tmp_path, capsys) -> None:
    from kvtop.cli import main
    from tests.data_paths import CONFIGS

    folder = tmp_path / "Llama-3.1-8B-Instruct"
    folder.mkdir()
    (folder / "config.json").write_text((CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json").read_text())
    assert main(["plan", "--model", str(folder / "config.json")]) == 0
    assert capsys.readouterr().out.startswith("Llama-3.1-8B-Instruct  ·  SGLang latest")


def test_budget_left_by_a_fixed_kv_size_is_unused_not_runtime_reserve(capsys) -> None:
    """vLLM with --kv-cache-memory-bytes skips profiling: of its 0.92 share, the runtime keeps the 2 GiB
    estimate and the rest stays free; it was all called "runtime reserve"."""
    import json

    from kvtop.cli import main

    args = ["plan", "--model", "llama-3.1-8b", "--engine", "vllm", "--gpu-memory", "80GiB",
            "--gpu-memory-utilization", "0.9", "--kv-cache-memory-bytes", "20GiB"]  # fmt: skip
    assert main([*args, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    requested = -(-80 * (1 << 30) * 9 // 10)  # ceil(total × 0.9)
    rest = requested - out["weights_bytes"] - 20 * (1 << 30)
    assert out["reserve_bytes"] == 2 * (1 << 30)
    assert out["unused_budget_bytes"] == rest - 2 * (1 << 30) + out["kv_budget_bytes"] - out["kv_pool_bytes"]
    assert main(args) == 0
    assert "; unused budget " in capsys.readouterr().out


def test_a_plan_that_does_not_fit_names_its_defaults_and_the_smallest_layout_that_fits(capsys) -> None:
    """Llama-3-70B (the first preset) on kvtop's default TP1 H100 does not fit; TP4 is the fewest GPUs
    that do under SGLang (TP2: 70.5 GB of weights per rank leave no room for the reserve)."""
    import json

    from kvtop.cli import main

    assert main(["plan", "--model", "llama-3-70b"]) == 0
    text = capsys.readouterr().out
    assert "DOES NOT FIT" in text and "assumed (not given): --tp 1 and --gpu H100" in text
    assert main(["plan", "--model", "llama-3-70b", "--tp", "4", "--json"]) == 0
    at_tp4 = json.loads(capsys.readouterr().out)
    assert at_tp4["fits"] and at_tp4["smallest_fit"] is None and at_tp4["assumed"] == ["--gpu H100"]
    assert main(["plan", "--model", "llama-3-70b", "--tp", "2", "--json"]) == 0
    assert not json.loads(capsys.readouterr().out)["fits"]  # so TP4 is the smallest
    tokens = f"{at_tp4['token_capacity']:,}"
    assert f"smallest layout that fits: 4× H100 (79.65 GiB), {tokens} tokens per rank (engine flags: --tp-size 4)" in text
    assert main(["plan", "--model", "llama-3-70b", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["smallest_fit"] == {"gpus": 4, "token_capacity": at_tp4["token_capacity"], "engine_flags": ["--tp-size", "4"],
                                 "engine_env": {}}


def test_a_memory_share_that_fits_no_layout_is_named_with_the_layout_at_the_engines_own(capsys) -> None:
    """Llama-3-70B under vLLM with --gpu-memory-utilization 0.0001: vLLM budgets ceil(79.19 GiB × 0.0001) = 8.1 MiB
    per GPU, below 141 GB of bf16 weights ÷ 32 ranks = 4.4 GB, so no layout up to 32 H100s fits and the flag is why;
    at vLLM's own share (0.92) TP 2 is the fewest GPUs that do: 65.71 GiB of weights per rank under 72.85 GiB, TP 1's
    131 GiB over the whole GPU. Pinned to v0.26.0: from v0.27.0 the V2 runner's sampler state (1,024 seqs × 128,256
    int32 counts and two bitmasks, 0.52 GiB a rank, v2_sampler_state.py) is charged too and TP 2 then falls 0.47 GiB
    short at the model's 8,192 tokens, so the fewest GPUs would be four."""
    import json

    from kvtop.cli import main

    base = ["plan", "--model", "llama-3-70b", "--engine", "vllm", "--gpu", "H100", "--engine-version", "0.26.0"]
    assert main([*base, "--gpu-memory-utilization", "0.0001"]) == 0
    text = capsys.readouterr().out
    assert main([*base, "--tp", "2", "--json"]) == 0
    at_tp2 = json.loads(capsys.readouterr().out)
    assert at_tp2["fits"]
    assert (
        "no layout up to 32× H100 (79.65 GiB) fits with --gpu-memory-utilization 0.0001; at the engine's own share "
        f"2× H100 (79.65 GiB) fits, {at_tp2['token_capacity']:,} tokens per rank (engine flags: --tensor-parallel-size 2)"
    ) in text
    assert main([*base, "--gpu-memory-utilization", "0.0001", "--json"]) == 0
    fit = json.loads(capsys.readouterr().out)["smallest_fit"]
    dropped = {"setting": "gpu_memory_utilization", "flag": "--gpu-memory-utilization", "value": 0.0001}
    assert (fit["gpus"], fit["dropped"]) == (2, dropped)


@pytest.mark.parametrize(
    ("args", "field", "says"),
    [(["--context-length", "262144"], "--context-length", "SGLang latest refuses --context-length 262,144 above the model's 131,072 positions"),
     (["--engine", "vllm", "--kv-cache-dtype", "fp8_ds_mla"], "--kv-cache-dtype", "vLLM latest has no attention backend for fp8_ds_mla"),
     (["--engine", "vllm", "--kv-cache-dtype", "nvfp4", "--gpu", "H100"], "--kv-cache-dtype", "vLLM latest refuses nvfp4 KV on H100 (sm90)")],
)  # fmt: skip
def test_a_launch_the_engine_refuses_is_refused_in_one_line_naming_the_flag(capsys, args, field, says) -> None:
    from kvtop.cli import main

    assert main(["plan", "--model", "llama-3.1-8b", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"kvtop: error: {field}: {says}") and err.count("\n") == 1


def test_an_interval_that_fits_at_neither_end_is_not_called_measured(capsys: pytest.CaptureFixture[str]) -> None:
    """Llama-3-70B at TP 1 on one H100: 141 GB of bf16 weights on an 80 GB card does not fit at either end of
    the calibrated interval (0 = 0), yet its CUDA total and context are calibrated, not measured: the interval
    line must not say "every input is measured" (it did: equal ends were taken for exact)."""
    assert main(["plan", "--model", LLAMA, "--gpu", "H100", "--no-calibration-store"]) == 0
    interval = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("Interval"))
    assert "every input is measured" not in interval
    assert "0 tokens at both ends" in interval and "(calibrated)" in interval


def test_an_interval_with_every_input_measured_is_exact(capsys: pytest.CaptureFixture[str]) -> None:
    """Free memory before load and the weights given: nothing left to estimate under SGLang's rule."""
    args = ["plan", "--model", LLAMA, "--tp", "8", "--gpu", "H100", "--free-memory", "77GiB",
            "--weights-memory", "16.43GiB", "--no-calibration-store"]  # fmt: skip
    assert main(args) == 0
    interval = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("Interval"))
    assert interval.endswith("tokens: every input is measured"), interval


def test_a_long_weights_row_keeps_the_columns_aligned(capsys: pytest.CaptureFixture[str]) -> None:
    """vLLM's calibrated row ('held beyond the checkpoint (calibrated)', 39 characters) is wider than the 16-character component
    column: every row's bytes column must still end where the header's does."""
    assert main(["plan", "--model", str(CONFIGS / "deepseek-ai--DeepSeek-V3.2.json"), "--engine", "vllm",
                 "--tp", "8", "--gpu", "H200", "--no-calibration-store"]) == 0  # fmt: skip
    lines = capsys.readouterr().out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Weights per rank"))
    header, *rows = lines[start + 1 : lines.index("", start)]
    assert any(row.lstrip().startswith("held beyond the checkpoint (calibrated) ") for row in rows)
    assert not any("_" in row.split("  ")[1] for row in rows)  # words, never the book's keys (routed_experts)
    end = header.index("bytes") + len("bytes")
    assert all(row[:end].endswith(("GiB)", "MiB", "KiB")) for row in rows)  # a row under 0.01 GB in MiB


def test_a_row_under_a_hundredth_of_a_gb_shows_its_bytes_not_zeros(capsys: pytest.CaptureFixture[str]) -> None:
    """Llama-3-70B TP8 on SGLang: the norms row, 80 layers × 2 norms × 8,192 + the final 8,192 = 1,318,912
    params × 2 B = 2,637,824 B, and the rope cache beyond the book, 8,192 positions × 128 × 4 B = 4,194,304 B,
    read '0.00 GB (0.00 GiB)' (and '0  0.000  1' for the latter's params, B/param and shards)."""
    assert main(["plan", "--model", "llama-3-70b", "--tp", "8", "--no-calibration-store"]) == 0
    out = capsys.readouterr().out.splitlines()
    rows = {line.split()[0]: line.split() for line in out if line.startswith("  ")}
    assert rows["norms"][1:] == ["1,318,912", "2.000", "1", f"{2_637_824 / (1 << 20):.2f}", "MiB"]  # 2.52 MiB
    beside = next(line for line in out if line.startswith("  held beyond the checkpoint (calibrated) "))
    # beside the book: the rope cache and the caching allocator's tails, 4,194,304 + 21,479,424 B = 25,673,728 B
    # (tests/calibrated_figures.py), under a tenth of a GB, where two decimals of GB keep one digit: in MiB (24.48)
    assert beside.split()[5:10] == ["—", "—", "—", f"{25_673_728 / (1 << 20):.2f}", "MiB"]


def test_a_field_typed_twice_at_one_value_is_one_setting(capsys: pytest.CaptureFixture[str]) -> None:
    """`--tp 2 --tensor-parallel-size 2` says one thing twice: planned at TP2 (two values are refused: BAD_INPUT)."""
    data = plan_json(capsys, "--model", QWEN, "--engine", "vllm", "--tp", "2", "--tensor-parallel-size", "2")
    assert data["layout"]["tp"] == 2


@pytest.mark.parametrize("engine", ["sglang", "vllm", "lmdeploy", "trtllm", "llamacpp"])
def test_no_plan_line_ends_in_blanks(engine: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A budget step with neither source nor note ('available KV memory', llama.cpp's slots) ended in two blanks,
    a DP-gathered MoE row without a basis in one: what a diff or a pasted report shows as noise."""
    assert main(["plan", "--model", QWEN, "--engine", engine]) == 0
    out = capsys.readouterr().out
    assert [line for line in out.splitlines() if line != line.rstrip()] == []
