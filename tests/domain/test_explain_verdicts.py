"""`explain` verdicts the token count alone cannot give: pool geometry, the tightest vLLM rank, a
refused start, and logs that are not (or not the named) engine's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.cli import main
from kvtop.domain.engine_log import Measured
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.registry import ENGINE_IDS, display_name
from kvtop.domain.errors import InputError
from kvtop.domain.explain import explain
from kvtop.domain.explain_request import ExplainRequest
from kvtop.domain.launch import parse_flags
from kvtop.domain.model import ModelSpec
from kvtop.sources.engine_logs import parse_engine_log, read_engine_log
from kvtop.sources.hub import load_model
from tests.conftest import CASES, CONFIGS

H100_BYTES = 81_559 << 20  # the driver's 79.65 GiB for an "80 GB" H100


def _derived(tmp_path: Path, base: str, name: str, **facts: object) -> ModelSpec:
    """A config from tests/data narrowed to another size of the same family (none is shipped)."""
    cfg = json.loads((CONFIGS / base).read_text())
    cfg.update(facts)
    (tmp_path / name).write_text(json.dumps(cfg))
    return load_model(str(tmp_path / name))


def _qwen25_05b(tmp_path: Path) -> ModelSpec:
    """Qwen2.5-0.5B: 24 layers, 2 KV heads × 64 → 6,144 B of K (and of V) per token in bf16."""
    return _derived(tmp_path, "Qwen--Qwen2.5-7B-Instruct.json", "qwen2.5-0.5b.json", hidden_size=896,
                    num_hidden_layers=24, num_attention_heads=14, num_key_value_heads=2,
                    intermediate_size=4864, tie_word_embeddings=True)  # fmt: skip


def _qwen3_14b(tmp_path: Path) -> ModelSpec:
    """Qwen3-14B: 40 layers, 8 KV heads × 128 (docs/engines/vllm.md §8)."""
    return _derived(tmp_path, "Qwen--Qwen3-32B.json", "qwen3-14b.json", num_hidden_layers=40,
                    hidden_size=5120, num_attention_heads=40, intermediate_size=17408)  # fmt: skip


C17_FLAGS = ["--max-total-tokens", "20480"]


def test_c17_with_the_wrong_model_is_a_geometry_mismatch_not_a_match() -> None:
    """C17 ran Qwen2.5-0.5B with a 20,480-token cap; told Llama-3-70B, the cap still gives 20,480
    tokens, but 0.12 GB of K cannot hold 20,481 rows × 163,840 B (= 3.125 GiB)."""
    log = read_engine_log(CASES / "sglang/C17/engine.log")
    model = load_model(str(CONFIGS / "meta-llama--Meta-Llama-3-70B.json"))
    result = explain(ExplainRequest(
        log=log, model=model, settings=parse_flags("sglang", C17_FLAGS), gpu_total_bytes=H100_BYTES,
    ))
    assert result.token_capacity == result.logged.token_capacity == 20_480  # the cap agrees for any model
    k_check = result.pool_checks[0]
    assert (k_check.name, k_check.logged_text, k_check.rows) == ("K", "0.12", 20_481)
    assert k_check.predicted_bytes == 20_481 * 163_840 == 3_355_607_040 and not k_check.within_rounding
    assert result.verdict == "mismatch" and result.gap_tokens == 0
    assert result.gap_bytes == 0  # the capacity agrees; the printed K and V pools do not
    assert result.pool_gap_bytes == 2 * (Measured.from_text("0.12").value_bytes - 3_355_607_040)
    for named in ("meta-llama--Meta-Llama-3-70B", "bf16 KV", "TP 1", "327,680 B per token"):
        assert named in (result.cause or "")


def test_c17_with_its_own_model_matches_and_its_pool_sizes_are_within_rounding(tmp_path: Path) -> None:
    log = read_engine_log(CASES / "sglang/C17/engine.log")
    result = explain(ExplainRequest(
        log=log, model=_qwen25_05b(tmp_path), settings=parse_flags("sglang", C17_FLAGS),
        gpu_total_bytes=H100_BYTES,
    ))
    assert [(c.name, c.predicted_bytes, c.within_rounding) for c in result.pool_checks] == [
        ("K", 20_481 * 6_144, True), ("V", 20_481 * 6_144, True),  # 0.117 GiB prints as 0.12
    ]  # fmt: skip
    assert result.verdict == "match" and result.cause is None


def test_c01_without_its_tp_is_a_geometry_mismatch_even_though_the_budget_lines_are_missing() -> None:
    """C01 is TP4; at TP1 the 8.23 GB K pool is a quarter of what 367,405 rows would need."""
    log = read_engine_log(CASES / "sglang/C01/engine.log")
    result = explain(ExplainRequest(
        log=log, model=load_model(str(CONFIGS / "Qwen--Qwen3-235B-A22B-FP8.json")),
        settings=parse_flags("sglang", []),
    ))
    assert result.pool_checks[0].predicted_bytes == 367_405 * 96_256
    assert result.verdict == "mismatch" and result.gap_tokens is None
    # 4 KV heads: TP 4 and TP 8 would both keep one head per rank (96,256 B per token), but SGLang refuses
    # TP 8 for this block-FP8 checkpoint: 1,536 ÷ 8 = 192 breaks the 128-wide expert blocks (sglang.md §4.5)
    # so the one launch that rebuilds the log is C01's own
    assert "TP 4" in (result.cause or "") and "TP 8" not in (result.cause or "")
    assert result.cause_flags == ("--tp-size", "4")


def test_vllm_available_memory_is_the_least_over_the_ranks_glm53() -> None:
    """glm53: rank 0 prints `Available KV cache memory: 17.79 GiB`; the ledgers say 17.79, 17.73,
    18.04 — the pool is sized by TP1's 17.73 (case notes). The EngineCore is not a rank."""
    log = read_engine_log(CASES / "vllm/glm53-flash-nvfp4-tp3-lilab-fork/engine.log")
    result = explain(ExplainRequest(
        log=log, model=load_model(str(CONFIGS / "meta-llama--Llama-3.1-8B.json")),
        settings=parse_flags("vllm", []),
    ))
    assert result.logged.available_kv_bytes == Measured.from_text("17.73").value_bytes
    assert (result.logged.available_kv_rank, result.logged.ranks_seen) == ("TP1 EP1", 3)


V3_LOG = """\
(Worker_TP0 pid=11) INFO 08-20 17:22:37 [gpu_worker.py:560] Available KV cache memory: 6.51 GiB
(EngineCore pid=10) INFO 08-20 17:22:37 [kv_cache_utils.py:2177] GPU KV cache size: 83,872 tokens
(EngineCore pid=10) INFO 08-20 17:22:37 [kv_cache_utils.py:2178] Maximum concurrency for 32,768 tokens per request: 2.56x
(Worker_TP0 pid=11) INFO 08-20 17:28:08 [gpu_worker.py:857] Free memory on device (23.10/23.58 GiB) on startup. \
Desired GPU memory utilization is (0.92, 21.7 GiB). Actual usage is 14.0 GiB for weight, 1.0 GiB for peak activation, \
0.19 GiB for non-torch memory, and 0.1 GiB for CUDAGraph memory. Current kv cache memory in use is 6.51 GiB.
(Worker_TP1 pid=12) INFO 08-20 17:28:08 [gpu_worker.py:857] Free memory on device (23.00/23.58 GiB) on startup. \
Desired GPU memory utilization is (0.92, 21.7 GiB). Actual usage is 14.0 GiB for weight, 1.1 GiB for peak activation, \
0.2 GiB for non-torch memory, and 0.1 GiB for CUDAGraph memory. Current kv cache memory in use is 6.40 GiB.
"""


def test_vllm_tp2_tokens_follow_from_the_tightest_rank(tmp_path: Path) -> None:
    """No case holds a TP>1 vLLM log of a shipped model with per-rank ledgers, so this one is written
    here: 6.40 GiB ÷ 1,310,720 B per 16-token block (TP2) = 5,242 blocks; int(5242/2048 × 32,768)."""
    log = parse_engine_log(V3_LOG)
    result = explain(ExplainRequest(
        # no 'Memory after warmup' line: a release before 0.34.0 (its block of 16), pinned to 0.33.0
        log=log, model=_qwen3_14b(tmp_path), settings=parse_flags("vllm", ["--tp", "2", "--engine-version", "0.33.0"]),
    ))
    assert result.logged.ranks_seen == 2 and result.logged.available_kv_rank == "TP1"
    assert result.token_capacity == 83_872 == int(5242 / 2048 * 32768)
    assert result.verdict == "match"


@pytest.mark.parametrize(
    ("case", "quote"),
    [
        ("sglang/C26", "ValueError: Loaded weights leave no GPU memory for the KV cache"),
        ("vllm/vllm-27508-gpt-oss-120b-h100", "EngineCore failed to start."),
        ("vllm/vllm-34076-qwen3-coder-30b-fp8-pp2-hetero", "ValueError: To serve at least one request"),
        ("vllm/spark-vllm-docker-396-minimax-m27-awq-tp2", "ValueError: To serve at least one request"),
        ("vllm/vllm-15871-deepseek-v2-lite-offload", "ValueError: To serve at least one request"),
    ],
)
def test_a_refused_start_is_said_and_asks_for_nothing(case: str, quote: str) -> None:
    engine = case.split("/")[0]
    log = read_engine_log(CASES / case / "engine.log")
    model = load_model(str(CONFIGS / "meta-llama--Llama-3.1-8B.json"))  # the verdict needs no geometry
    result = explain(ExplainRequest(
        log=log, model=model, settings=parse_flags(engine, []),
    ))  # type: ignore[arg-type]
    assert result.verdict == "failed_start" and result.missing == ()
    assert (result.startup_error or "").startswith(quote)


def test_spark_396_keeps_the_figures_its_refused_start_printed() -> None:
    log = read_engine_log(CASES / "vllm/spark-vllm-docker-396-minimax-m27-awq-tp2/engine.log")
    result = explain(ExplainRequest(
        log=log, model=load_model(str(CONFIGS / "meta-llama--Llama-3.1-8B.json")),
        settings=parse_flags("vllm", []),
    ))
    assert result.logged.available_kv_bytes == Measured.from_text("22.5").value_bytes
    assert "23.25 GiB KV cache is needed" in (result.startup_error or "")


def test_spark_396_estimated_length_pins_the_blocks_vllm_counted() -> None:
    """MiniMax-M2.7 at TP 2 (heldout config: 62 layers, 8 KV heads of 128, bf16): 62 × 2 × 4 × 128 × 2 B = 126,976 B a
    token, 2,031,616 B a block of 16. The log: 196,608 tokens need 12,288 blocks = 23.25 GiB ('23.25 GiB KV cache is
    needed'), 'the estimated maximum model length is 190272' = 11,892 blocks the check counted. At v0.29.1 the check
    counts the memory less the null block (vLLM PR #47272), so the pool holds 11,893 blocks; 22.5 GiB read as printed
    makes 11,891 (24,159,191,040 // 2,031,616), whose estimate, one block held back, would be 190,240."""
    log = read_engine_log(CASES / "vllm/spark-vllm-docker-396-minimax-m27-awq-tp2/engine.log")
    flags = ["--tensor-parallel-size", "2", "--max-model-len", "196608", "--engine-version", "0.29.1"]
    result = explain(ExplainRequest(
        log=log, model=load_model(str(CONFIGS / "heldout/MiniMaxAI--MiniMax-M2.7.json")),
        settings=parse_flags("vllm", flags),
    ))  # type: ignore[arg-type]
    assert result.ledger is not None
    engine = result.ledger.engine
    assert engine.num_blocks == 11_892 + 1 and not engine.fits
    assert engine.block_bytes == 62 * 2 * 4 * 128 * 2 * 16 == 2_031_616
    assert engine.estimated_max_model_len == (11_893 - 1) * 16 == 190_272  # the log's printed estimate
    assert "--max-model-len 190272 or less starts" in engine.steps[-1].note
    assert any("11,892 blocks of 16 counted + 1 held back" in note for note in result.notes)


def test_spark_396_refusal_names_the_max_model_len_kvtop_explains_with(capsys) -> None:
    """The refusal reads 'To serve at least one request with the model's max seq len (196608)': vLLM's
    max_model_len, which no other line of the excerpt prints. Explained with it (not the config's 204,800), one
    request needs ceil(196,608 ÷ 16) = 12,288 blocks, the log's '23.25 GiB KV cache is needed' (12,288 × 2,031,616 B
    = 23.25 GiB at TP 2)."""
    assert int(23.25 * 2**30) == 12_288 * 2_031_616
    log = read_engine_log(CASES / "vllm/spark-vllm-docker-396-minimax-m27-awq-tp2/engine.log")
    assert "max_model_len=196608" in log.decisions
    argv = ["explain", str(CASES / "vllm/spark-vllm-docker-396-minimax-m27-awq-tp2/engine.log"), "--engine", "vllm",
            "--model", str(CONFIGS / "heldout/MiniMaxAI--MiniMax-M2.7.json"), "--gpu", "GB10",
            "--no-calibration-store", "--tensor-parallel-size", "2",
            "--engine-version", "0.33.0"]  # fmt: skip  # its blocks of 16: pinned to 0.33.0 (0.34.0's default is 64)
    assert main(argv) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "one request needs 12,288 blocks" in text and "max seq len (196608)" in text
    assert "204800" not in text and "204,800" not in text


def test_spark_396_estimate_kvtop_cannot_make_names_its_block() -> None:
    """Told neither TP 2 nor the release, kvtop builds MiniMax-M2.7 at TP 1 (8 KV heads a rank): 62 × 2 × 8 × 128 × 2
    B × 16 = 4,063,232 B a block; the log's 11,892 + 1 blocks of that would be 45 GiB, not 22.5: kvtop says its
    block is what differs, and keeps the printed memory."""
    log = read_engine_log(CASES / "vllm/spark-vllm-docker-396-minimax-m27-awq-tp2/engine.log")
    result = explain(ExplainRequest(
        log=log, model=load_model(str(CONFIGS / "heldout/MiniMaxAI--MiniMax-M2.7.json")),
        settings=parse_flags("vllm", ["--engine-version", "0.33.0"]),  # blocks of 16: 0.33.0's (pinned)
    ))  # type: ignore[arg-type]
    said = "which 22.5 GiB cannot make at kvtop's 4,063,232 B a block"
    assert any(said in note and "the printed memory kept" in note for note in result.notes)
    assert result.logged.available_kv_bytes == Measured.from_text("22.5").value_bytes


@pytest.mark.parametrize("text", ["\x00\x01\xff garbage", "lorem ipsum 12.5 GB avail mem\n" * 20])
def test_a_log_with_no_engine_line_is_an_input_error(text: str) -> None:
    shown = [display_name(engine) for engine in ENGINE_IDS]
    names = ", ".join(shown[:-1]) + f" or {shown[-1]}"  # "SGLang, vLLM, LMDeploy or TensorRT-LLM"
    with pytest.raises(InputError, match=f"no {names} startup lines: weird.log"):
        parse_engine_log(text, source="weird.log").engine_for()


@pytest.mark.parametrize(("text", "said"), [("", "the file is empty"), ("\n \n", "blank lines only")])
def test_a_log_without_text_is_an_input_error_that_says_so(text: str, said: str) -> None:
    with pytest.raises(InputError, match=rf"no text \({said}\): weird.log"):
        parse_engine_log(text, source="weird.log").engine_for()


def test_an_engine_flag_the_log_contradicts_is_an_input_error() -> None:
    log = read_engine_log(CASES / "vllm/lmcache-1739-qwen3-14b/engine.log")
    with pytest.raises(InputError, match=r"are vLLM's \(3 recognised, none SGLang's\): pass --engine vllm"):
        log.engine_for("sglang")
    assert log.engine_for("vllm") == log.engine_for() == "vllm"


def test_c09_judges_the_pool_of_the_run_it_explains() -> None:
    """C09 holds two runs: the first prints (975,424 + 64) × (656 + 132) × 61 B = 43.67 GB (fp8 KV with
    the DSA index, docs/engines/sglang.md §9.2); the second, older build excluded the index, so only it differs."""
    log = read_engine_log(CASES / "sglang/C09/engine.log")
    flags = [
        "--tp",
        "8",
        "--dp",
        "8",
        "--enable-dp-attention",
        "--page-size",
        "64",
        "--kv-cache-dtype",
        "fp8_e4m3",
    ]
    model = load_model(str(CONFIGS / "deepseek-ai--DeepSeek-V3.2.json"))
    result = explain(ExplainRequest(log=log, model=model, settings=parse_flags("sglang", flags)))
    assert [(c.rows, c.predicted_bytes_per_token, c.within_rounding) for c in result.pool_checks] == [
        (975_488, 48_068, True), (1_462_848, 48_068, False),
    ]  # fmt: skip
    assert result.verdict == "insufficient"  # no load lines; not a geometry mismatch


def test_without_gpu_the_gpu_memory_step_is_named_a_stand_in_never_measured() -> None:
    """C13 names no GPU total: the 80 GiB kvtop stands in with must not read as a measurement."""
    log = read_engine_log(CASES / "sglang/C13/engine.log")
    model = load_model(str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"))
    settings = parse_flags("sglang", ["--mem-fraction-static", "0.88"])
    steps = explain(ExplainRequest(
        log=log, model=model, settings=settings,
    )).ledger.engine.steps  # type: ignore[union-attr]
    gpu_step = next(step for step in steps if step.label.startswith("GPU memory"))
    assert gpu_step.label == "GPU memory (a stand-in: pass --gpu)"
    assert gpu_step.bytes == 80 * 2**30 and not gpu_step.measured
    given = explain(ExplainRequest(
        log=log, model=model, settings=settings, gpu_total_bytes=79 * 2**30,
    )).ledger.engine.steps  # type: ignore[union-attr]
    assert any(step.label == "GPU memory" for step in given)


def test_trtllm_cpp_log_total_is_the_gpu_memory_step_measured() -> None:
    """TensorRT-LLM issue 4275 (C++ runtime, v0.19): `Memory usage when calculating max tokens in paged kv
    cache: total: 31.84 GiB` is the GPU's total as the engine saw it; without --gpu the step reads it as logged
    (it read an 80 GiB stand-in before)."""
    case = CASES / "trtllm/trtllm-4275-llama31-8b-fp8kv-rtx5090-v019"
    log = read_engine_log(case / "engine.log")
    model = load_model(str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"))
    steps = explain(ExplainRequest(
        log=log, model=model, settings=parse_flags("trtllm", []),
    )).ledger.engine.steps  # type: ignore[union-attr]
    gpu_step = next(step for step in steps if step.label.startswith("GPU memory"))
    assert gpu_step.measured and gpu_step.bytes == round(31.84 * 2**30)


V2_LINES = """\
(EngineCore pid=1) INFO 10-03 16:22:17 [gpu_worker.py:298] Available KV cache memory: 0.018310546875 GiB
(EngineCore pid=1) INFO 10-03 16:22:17 [kv_cache_utils.py:864] GPU KV cache size: 1,600 tokens
(EngineCore pid=1) INFO 10-03 16:22:17 [kv_cache_utils.py:868] Maximum concurrency for 1,000 tokens per request: 1.59x
"""
V2_VERSION = "INFO 10-03 16:20:00 [api_server.py:1] vLLM API server version 0.10.2\n"


def test_vllm_before_pr_41069_prints_blocks_times_block_size(tmp_path: Path) -> None:
    """No case log of vLLM < 0.21 prints both budget and tokens, so one is written here: Qwen2.5-0.5B,
    0.018310546875 GiB ÷ 196,608 B per block = 100 blocks, L = 1,000. vLLM 0.10.2 printed
    100 // 1 group × 16 = 1,600 (docs/engines/vllm.md §5 History); today's rule gives int(100/63 × 1,000) = 1,587."""
    model = _qwen25_05b(tmp_path)
    old = parse_engine_log(V2_VERSION + V2_LINES)
    assert old.engine_version == "0.10.2"
    settings = parse_flags("vllm", ["--engine-version", "0.10.2"])  # as `kvtop explain` reads it from the log
    result = explain(ExplainRequest(log=old, model=model, settings=settings))
    assert result.verdict == "match" and result.token_capacity == 1_600 == 100 // 1 * 16
    # as `kvtop explain` reads the unversioned lines now (no 'Memory after warmup' line: before v0.34.0, eras.
    # resolve_version), the rules of 0.33.0
    unversioned = explain(ExplainRequest(
        log=parse_engine_log(V2_LINES), model=model, settings=parse_flags("vllm", ["--engine-version", "0.33.0"]),
    ))
    assert unversioned.token_capacity == 1_587 == int(100 / 63 * 1000)
    assert unversioned.verdict == "mismatch" and unversioned.gap_tokens == 13


def test_vllm_020_1_onward_prints_the_concurrency_expression(tmp_path: Path) -> None:
    """PR #41069 ships in v0.20.1 (in its sdist, not in v0.20.0's): int(blocks ÷ cdiv(1,000, 16) × 1,000) = 1,587,
    not the 1,600 = 100 blocks × 16 these lines print, so at v0.20.1 kvtop's figure differs."""
    settings = parse_flags("vllm", ["--engine-version", "0.20.1"])
    result = explain(ExplainRequest(
        log=parse_engine_log(V2_LINES), model=_qwen25_05b(tmp_path), settings=settings,
    ))
    assert result.token_capacity == 1_587 and result.verdict == "mismatch"
    old = explain(ExplainRequest(
        log=parse_engine_log(V2_LINES), model=_qwen25_05b(tmp_path),
        settings=parse_flags("vllm", ["--engine-version", "0.20.0"]),
    ))
    assert old.token_capacity == 1_600 and old.verdict == "match"


GPT_OSS_LINES = """\
(EngineCore_DP0 pid=1) INFO 10-31 15:07:49 [gpu_worker.py:298] Available KV cache memory: 10.5 GiB
(EngineCore_DP0 pid=1) INFO 10-31 15:07:49 [kv_cache_utils.py:1] GPU KV cache size: 287,537 tokens
(EngineCore_DP0 pid=1) INFO 10-31 15:07:49 [kv_cache_utils.py:1] Maximum concurrency for 131,072 tokens per request: 2.19x
"""


def test_vllm_window_blocks_need_the_batch_or_the_gpu_never_the_stand_in() -> None:
    """gpt-oss-120b: 10.5 GiB ÷ 589,824 B = 19,114 blocks; with H100's default 8,192 tokens in flight (one
    batch: --no-async-scheduling) a request takes 8,192 + cdiv(8,319, 16) + 1 = 8,713 blocks ⇒
    int(19,114/8,713 × 131,072) = 287,537. With neither --gpu nor --max-num-batched-tokens the default
    (8192, or 2048 on A100) is unknown."""
    log = parse_engine_log(GPT_OSS_LINES)
    model = load_model(str(CONFIGS / "openai--gpt-oss-120b.json"))
    one_batch = ["--no-async-scheduling", "--engine-version", "0.33.0"]  # blocks of 16: 0.33.0's (pinned)
    unknown = explain(ExplainRequest(log=log, model=model, settings=parse_flags("vllm", one_batch)))
    assert unknown.verdict == "insufficient" and "--max-num-batched-tokens, or --gpu" in unknown.missing[0]
    on_h100 = explain(ExplainRequest(
        log=log, model=model, settings=parse_flags("vllm", one_batch), gpu_total_bytes=H100_BYTES,
        gpu_name="H100",
    ))
    assert on_h100.verdict == "match" and on_h100.token_capacity == 287_537
    flagged = explain(ExplainRequest(
        log=log, model=model, settings=parse_flags("vllm", ["--max-num-batched-tokens", "2048", *one_batch]),
    ))
    assert (
        flagged.token_capacity == int(19_114 / 8_329 * 131_072) == 300_793 and flagged.verdict == "mismatch"
    )


def test_measured_flags_fill_what_the_c01_log_lacks_and_say_so() -> None:
    log = read_engine_log(CASES / "sglang/C01/engine.log")
    model = load_model(str(CONFIGS / "Qwen--Qwen3-235B-A22B-FP8.json"))
    given = MeasuredInputs(free_before_load_bytes=78 << 30, free_after_load_bytes=20 << 30)
    result = explain(ExplainRequest(
        log=log, model=model, settings=parse_flags("sglang", ["--tp", "4"]), gpu_total_bytes=H100_BYTES,
        given=given,
    ))
    assert result.verdict != "insufficient" and result.ledger is not None
    assert result.ledger.measured.free_after_load_bytes == 20 << 30
    assert result.logged.free_before_load_bytes is None  # the log's figures stay the log's
    assert "free before load 78.00 GiB: from --free-memory, not the log" in result.notes
    assert "free after load 20.00 GiB: from --free-after-load, not the log" in result.notes


def test_a_vllm_mismatch_blames_geometry_never_a_memory_fraction() -> None:
    log = read_engine_log(CASES / "vllm/lmcache-1739-qwen3-14b/engine.log")
    result = explain(ExplainRequest(
        log=log, model=load_model(str(CONFIGS / "Qwen--Qwen3-32B.json")),
        settings=parse_flags("vllm", ["--engine-version", "0.33.0"]),  # its block of 16: 0.33.0's (pinned)
    ))
    assert result.verdict == "mismatch" and result.cause is not None
    assert result.cause.startswith("cause unknown: vLLM logged the KV memory it had, so the geometry differs")
    assert result.cause_flags is None  # no single change kvtop tried rebuilds 14B's figure with 32B's layers
    assert "block size (16)" in result.cause and "max_model_len (32,768)" in result.cause
    assert "memory fraction" not in result.cause and "allocated between" not in result.cause


def test_the_logs_kv_dtype_is_used_and_a_contradicting_flag_is_said() -> None:
    log = read_engine_log(CASES / "sglang/C13/engine.log")
    text = (
        (CASES / "sglang/C13/engine.log")
        .read_text()
        .replace("KV Cache is allocated.", "KV Cache is allocated. dtype: torch.float8_e4m3fn,")
    )
    fp8_log = parse_engine_log(text)
    model = load_model(str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"))
    flags = ["--mem-fraction-static", "0.88"]
    assert explain(ExplainRequest(
        log=log, model=model, settings=parse_flags("sglang", flags),
    )).ledger.kv_bytes_per_token == 131_072  # type: ignore[union-attr]
    from_log = explain(ExplainRequest(log=fp8_log, model=model, settings=parse_flags("sglang", flags)))
    assert from_log.kv_bytes_per_token == 65_536  # fp8: half of bf16's 131,072
    assert (
        from_log.notes[0]
        == "KV dtype fp8_e4m3: from the log (torch.float8_e4m3fn); no --kv-cache-dtype was given"
    )
    told = explain(ExplainRequest(
        log=fp8_log, model=model, settings=parse_flags("sglang", [*flags, "--kv-cache-dtype", "bf16"]),
    ))
    assert told.notes[0] == "KV dtype: kvtop was told bf16 but the log states torch.float8_e4m3fn"
    assert told.kv_bytes_per_token == 131_072


def test_c13_with_a_70b_model_never_asks_for_more_memory_than_the_gpu_has() -> None:
    log = read_engine_log(CASES / "sglang/C13/engine.log")
    model = load_model(str(CONFIGS / "meta-llama--Llama-3.1-70B-Instruct.json"))
    result = explain(ExplainRequest(
        log=log, model=model, settings=parse_flags("sglang", ["--mem-fraction-static", "0.88"]),
    ))
    assert result.verdict == "mismatch" and result.cause is not None
    # `K size: 27.13 GB, V size: 27.13 GB` over 0.4.1's `max_total_num_tokens=444500` (+ 1 page): about 131,071 B per
    # token of K+V, not the 70B's 327,680 (B4: the pool check reads the scheduler's tokens where #tokens is absent)
    assert result.cause.startswith(
        "cause unknown: KV geometry: the log's K+V pool (27.13 GiB + 27.13 GiB for 444,501 rows, about 131,071 B per"
    )
    # 444,500 logged tokens × 327,680 B = 135.65 GiB, against 63.72 GiB (+ rounding) free after load
    assert "the logged 444,500 tokens at 327,680 B per token would need 135.65 GiB" in result.cause
    assert "63.73 GiB free after weight load" in result.cause and "geometry differs" in result.cause
    assert "more memory than" not in result.cause
