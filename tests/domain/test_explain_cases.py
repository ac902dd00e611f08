"""`explain` over the real logs in tests/data/cases: what matches, what the logs lack, and why."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from kvtop.domain.engines.registry import ENGINE_IDS, display_name
from kvtop.domain.explain import explain
from kvtop.domain.explain_request import ExplainRequest
from kvtop.domain.launch import parse_flags
from kvtop.sources.engine_logs import read_engine_log
from kvtop.sources.hub import load_model
from tests.cli_in_process import Ran, run_kvtop
from tests.conftest import CASES, CONFIGS

_NAMES = [display_name(engine) for engine in ENGINE_IDS]
ENGINE_NAMES = ", ".join(_NAMES[:-1]) + f" or {_NAMES[-1]}"  # "SGLang, vLLM or TensorRT-LLM"


def run_explain(case: str, config: str, *flags: str):
    engine = case.split("/")[0]
    log = read_engine_log(CASES / case / "engine.log")
    return explain(ExplainRequest(
        log=log, model=load_model(str(CONFIGS / config)), settings=parse_flags(engine, list(flags)),
    ))  # type: ignore[arg-type]


def test_c13_llama31_8b_matches_inside_the_rounding_interval() -> None:
    result = run_explain(
        "sglang/C13", "meta-llama--Llama-3.1-8B-Instruct.json", "--mem-fraction-static", "0.88"
    )
    # 78.81 GiB before load, 63.72 after, mfs 0.88: rest = 63.72 − 78.81 × 0.12 = 54.2628 GiB ÷ 131,072 B per token
    assert result.logged.token_capacity == 444_500
    assert result.token_capacity == int(int((63.72 - 78.81 * 0.12) * 2**30) // 131_072) == 444_520
    assert result.token_capacity_min <= 444_500 <= result.token_capacity_max
    assert result.verdict == "match"


def test_c04_tp_is_read_from_the_rank_prefixes_where_no_launch_line_says_it() -> None:
    """C04 (sgl-project/sglang#11716) keeps lines of TP0, TP5 and TP7 and no server_args: ranks count from 0, so TP7
    means TP 8. Llama-3.1-70B at TP 8 holds 80 layers × (8 KV heads ÷ 8) × 128 × 2 B = 20,480 B of K a token, and
    (2,795,207 + 1) × 20,480 B = 53.31 GiB, the log's `K size: 53.31 GB` (at TP 1, 8 × that: the pool would differ)."""
    assert round((2_795_207 + 1) * 80 * 1 * 128 * 2 / 2**30, 2) == 53.31
    result = run_explain("sglang/C04", "meta-llama--Llama-3.1-70B-Instruct.json")
    assert any(note.startswith("TP 8: read from the log's rank prefixes (TP0, TP5, TP7") for note in result.notes)
    assert result.pool_checks and all(check.within_rounding for check in result.pool_checks)
    told = run_explain("sglang/C04", "meta-llama--Llama-3.1-70B-Instruct.json", "--tp", "4")
    assert "TP: kvtop was told 4, but the log's rank prefixes reach TP7 (TP0, TP5, TP7)" in told.notes


@pytest.mark.parametrize(
    ("case", "config", "flags", "k_text"),
    [
        ("sglang/C01", "Qwen--Qwen3-235B-A22B-FP8.json", ("--tp", "4"), "8.23"),
        ("sglang/C04", "meta-llama--Llama-3.1-70B-Instruct.json", ("--tp", "8"), "53.31"),
        ("sglang/C05", "Qwen--Qwen3-30B-A3B-FP8.json", ("--tp", "2", "--page-size", "64"), "25.32"),
        (
            "sglang/C12",
            "Qwen--Qwen3-Next-80B-A3B-Thinking.json",
            ("--tp", "4", "--dp", "4", "--enable-dp-attention"),
            "31.89",
        ),
    ],
)
def test_logged_kv_sizes_follow_from_bytes_per_token(
    case: str, config: str, flags: tuple[str, ...], k_text: str
) -> None:
    """These logs print #tokens and K/V sizes but not the load lines the budget needs: kvtop says so."""
    result = run_explain(case, config, *flags)
    assert result.pool_checks and all(check.within_rounding for check in result.pool_checks)
    assert result.pool_checks[0].logged_text == k_text
    assert result.verdict == "insufficient"
    assert any("Load weight" in missing for missing in result.missing)


@pytest.mark.parametrize(
    "case_dir",
    sorted(p for p in CASES.glob("*/*") if p.is_dir() and p.parent.name in ENGINE_IDS),
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_every_case_gets_a_verdict_and_never_a_traceback(case_dir) -> None:
    """Cases without a config in tests/data still run end to end with a stand-in model: honest verdicts only."""
    case = json.loads((case_dir / "case.json").read_text())
    config = (case.get("config") or "").split(" ")[0]
    model = str(CONFIGS / config) if config and (CONFIGS / config).is_file() else "llama-3.1-8b"
    result = run_kvtop("explain", str(case_dir / "engine.log"), "--model", model, "--engine", case_dir.parent.name,
                       "--json")  # fmt: skip
    assert "Traceback" not in result.stderr
    if not (case_dir / "engine.log").read_text().strip():  # C06: numbers from a PR text, its log one newline
        assert result.returncode == 2 and "log: no text (blank lines only): " in result.stderr
        return
    out = json.loads(result.stdout)
    assert out["verdict"] in ("match", "mismatch", "insufficient", "failed_start")
    if out["verdict"] == "insufficient":
        assert out["missing"] or out["unsolved"], "an insufficient verdict names what the log lacks, or why not"
    if out["verdict"] == "mismatch":  # a capacity gap, or a pool whose size the geometry cannot give
        gaps = (out["gap_tokens"], out["gap_bytes"], out["pool_gap_bytes"])
        assert out["cause"] and any(gap is not None for gap in gaps)
        if out["gap_tokens"]:  # the capacity gap in bytes is the tokens at the predicted bytes per token
            assert out["gap_bytes"] == out["gap_tokens"] * out["predicted"]["kv_bytes_per_token"]
    if out["verdict"] == "failed_start":  # the engine's error, or a pool of 0 tokens it cannot start with
        assert (out["startup_error"] or out["logged"]["token_capacity"] == 0) and not out["missing"]


def _cli(*argv: str) -> Ran:
    return run_kvtop("explain", *argv)


def test_refused_start_is_the_first_thing_said() -> None:
    result = _cli(
        str(CASES / "vllm/vllm-15871-deepseek-v2-lite-offload/engine.log"), "--model", "llama-3.1-8b"
    )
    lines = result.stdout.splitlines()
    assert result.returncode == 0
    assert lines[1].startswith("  the engine refused to start: ValueError: To serve at least one request")
    assert (
        "(0.95 GiB KV cache is needed, which is larger than the available KV cache memory (0.93 GiB)"
        in lines[1]
    )
    assert lines[-1].startswith("verdict: FAILED START") and "lacks" not in result.stdout


def test_log_without_engine_lines_is_one_line_and_exit_2(tmp_path) -> None:
    (tmp_path / "other.log").write_text("a file of text, no engine's line in it\n")
    result = _cli(str(tmp_path / "other.log"), "--model", "llama-3.1-8b")
    assert (result.returncode, result.stdout) == (2, "")
    assert (
        result.stderr.count("\n") == 1
        and f"no {ENGINE_NAMES} startup lines: {tmp_path}/other.log" in result.stderr
    )


@pytest.mark.parametrize(
    ("text", "said"), [("", "no text (the file is empty)"), ("\n \n\t\n", "no text (blank lines only)")]
)
def test_an_empty_or_blank_log_is_its_own_one_line_and_exit_2(tmp_path, text: str, said: str) -> None:
    """An empty file is no foreign file: it was said 'no SGLang, vLLM … startup lines' (session 67's walk)."""
    (tmp_path / "engine.log").write_text(text)
    result = _cli(str(tmp_path / "engine.log"), "--model", "llama-3.1-8b")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f"kvtop: error: log: {said}: {tmp_path}/engine.log\n"


def test_engine_flag_against_a_vllm_log_is_one_line_and_exit_2() -> None:
    result = _cli(
        str(CASES / "vllm/lmcache-1739-qwen3-14b/engine.log"), "--model", "llama-3.1-8b", "--engine", "sglang"
    )
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "pass --engine vllm" in result.stderr


def test_missing_log_file_is_one_clear_line() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "kvtop", "explain", "/nonexistent/engine.log", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr and result.stderr.count("\n") == 1


def test_vllm_qwen3_14b_log_matches_from_its_available_kv_memory(tmp_path) -> None:
    """lmcache-1739: Qwen3-14B (40 layers, 8 KV heads × 128) — geometry stated in docs/engines/vllm.md §8.

    No Qwen3-14B config is in tests/data, so the Qwen3-32B config is narrowed to the 14B's facts.
    """
    cfg = json.loads((CONFIGS / "Qwen--Qwen3-32B.json").read_text())
    cfg.update(num_hidden_layers=40, hidden_size=5120, num_attention_heads=40, intermediate_size=17408)
    (tmp_path / "qwen3-14b.json").write_text(json.dumps(cfg))
    log = read_engine_log(CASES / "vllm/lmcache-1739-qwen3-14b/engine.log")
    result = explain(ExplainRequest(
        log=log, model=load_model(str(tmp_path / "qwen3-14b.json")), settings=parse_flags("vllm", []),
    ))
    assert result.logged.available_kv_bytes is not None and result.logged.context_length == 32768
    per_block = 40 * 8 * 256 * 2 * 16  # 2,621,440 B per 16-token block
    assert result.kv_bytes_per_token * 16 == per_block
    assert result.logged.token_capacity == 42_656 == int(2666 / 2048 * 32768)
    assert result.token_capacity_min <= 42_656 <= result.token_capacity_max
    assert result.verdict == "match"


def test_vllm_version_b_log_matches_from_the_kv_memory_in_use(tmp_path) -> None:
    """ngc2608 (v0.27.1, GB10): no `Available KV cache memory` line; the startup ledger's
    `Current kv cache memory in use is 69.4 GiB` stands in. Qwen3-0.6B: 28 layers, 8 KV heads × 128."""
    cfg = json.loads((CONFIGS / "Qwen--Qwen3-32B.json").read_text())
    cfg.update(num_hidden_layers=28, hidden_size=1024, num_attention_heads=16, intermediate_size=3072,
               max_position_embeddings=40960)  # fmt: skip
    (tmp_path / "qwen3-0.6b.json").write_text(json.dumps(cfg))
    log = read_engine_log(CASES / "vllm/ngc2608-v0271-qwen3-0.6b-gb10/engine.log")
    result = explain(ExplainRequest(
        log=log, model=load_model(str(tmp_path / "qwen3-0.6b.json")),
        settings=parse_flags("vllm", ["--gpu-memory-utilization", "0.6"]),
    ))
    assert result.logged.token_capacity == 649_728 == int(40608 / 2560 * 40960)  # docs/engines/vllm.md §8
    assert result.verdict == "match" and result.token_capacity == 649_728


def test_a_launch_command_pasted_into_the_log_supplies_its_flags() -> None:
    """C01's first line is `… --tp 4 … --mem-fraction-static 0.93`: without flags, kvtop reads TP 4 and
    the fraction from it, so the pool checks hold at TP 4 and only the load lines are missing."""
    result = _cli(str(CASES / "sglang/C01/engine.log"), "--model", str(CONFIGS / "Qwen--Qwen3-235B-A22B-FP8.json"),
                  "--json")  # fmt: skip
    out = json.loads(result.stdout)
    k_check = out["pool_checks"][0]
    # 94 layers × 4 KV heads ÷ TP 4 × 128 × 2 B = 24,064 B per token for K (and as much for V)
    assert k_check["predicted_bytes_per_token"] == 24_064 and k_check["within_rounding"]
    assert all(check["within_rounding"] for check in out["pool_checks"])
    assert not any("mem_fraction_static" in missing for missing in out["missing"])


def test_the_dgx_spark_logs_own_device_total_replaces_the_80_gib_stand_in(capsys) -> None:
    """TensorRT-LLM's profiling line states `device total memory 119.70 GiB` (the GB10's unified memory,
    case.json's device_total_gib 119.7): explain showed "GPU memory (a stand-in: pass --gpu) 80.00 GiB"
    beside it. The log's figure is the GPU memory, measured, with or without --gpu (only --gpu-memory overrides it).
    The capacity is unchanged (the PyTorch backend sizes from the logged available memory): 86,656 central."""
    from kvtop.cli import main

    case = CASES / "trtllm" / "trtllm-dgxspark-gptoss120b-v110rc3"
    argv = ["explain", str(case / "engine.log"), "--model", str(CONFIGS / "openai--gpt-oss-120b.json"), "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["steps"][0] == {"label": "GPU memory (logged)", "bytes": round(119.70 * 2**30), "value": None,
                               "note": "the log's `device total memory 119.70 GiB`", "measured": True, "source": "measured",
                               "role": "gpu_total"}  # fmt: skip
    assert (out["verdict"], out["predicted"]["token_capacity"]) == ("match", 86_656)
    # --gpu names the GPU table's total, which the engine never sized from: the log's CUDA total still wins (B3),
    # and the table's 81,559 MiB = 79.65 GiB is said, 40.05 GiB below the logged 119.70 GiB
    assert main([*argv[:-1], "--gpu", "H100"]) == 0
    text = capsys.readouterr().out
    assert "GPU memory (logged)" in text and "by −40.05 GiB" in text
