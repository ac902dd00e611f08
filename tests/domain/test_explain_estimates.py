"""A log that lacks an input, with the GPU named: estimate it as `plan` does (issue 28, causes 7, 2, 8).

`explain` never says "insufficient" where the operator gave enough to estimate: it solves the engine's budget
with the pre-load estimate `plan` uses (its terms and their errors: the free memory before load is the plan's CUDA total less its
context term, calibrated or assumed, `ranges.free_before_load_range`), judges the logged capacity against that interval, and says which value of the input the
logged capacity implies. And a model kvtop does not model still gets its log and refusal read.
"""

from __future__ import annotations

import json
from pathlib import Path

from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.explain import explain
from kvtop.domain.explain_request import ExplainRequest
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.quant import quant_from_config
from kvtop.domain.wording import GIB
from kvtop.sources.engine_logs import parse_engine_log, read_engine_log
from kvtop.sources.hub import load_model
from tests.cli_in_process import run_kvtop
from tests.conftest import CASES, CONFIGS

# Llama-3.1-8B at TP 1 as SGLang's plan holds it: the book, the rope cache and the caching allocator's rounding
PLANNED_WEIGHTS = 16_060_522_496 + 131_072 * 128 * 4 + (2 << 20) - (32 * 2 * 4_096 * 2 + 4_096 * 2)


def test_an_excerpt_without_its_load_lines_matches_with_a_calibrated_estimate() -> None:
    """SGLang C13 (docs.sglang.ai) without its two `Load weight` lines, as excerpts are pasted: on an H100 the
    pre-load estimate is the calibration's (issue 28 item 7): CUDA's total fitted for the H100 less SGLang's
    context fit at TP 1 (its constant: log2(1) = 0), within their held-out errors together × SGLang's interval
    scale (`INTERVAL_SCALE`; the committed fits, docs/calibration.md). The logged 444,500 tokens × 131,072 B =
    54.26 GiB of KV = 0.88 × before −
    weights (Llama-3.1-8B as `plan` holds it: the book's 16,060,522,496 B, the rope's float32 cos/sin cache 131,072 ×
    128 × 4 B = 67,108,864 B and the caching allocator's small-pool tail, 32 × 2 × 4,096 × 2 B + 8,192 B = 532,480 B
    of norms in one 2 MiB segment: 1,564,672 B; in all 16,129,196,032 B) → before ≈ (54.26 + 15.02) ÷ 0.88 ≈ 78.73
    GiB implied, inside the calibrated interval; the log's own line said 78.81 GiB (its weights were 78.81 − 63.72 =
    15.09 GiB, 0.07 GiB above the planned 15.02). Until session 53 both lay inside; its refit (a7014c84) narrowed
    SGLang's scale 0.8886 -> 0.5905 (22 plans of 20 sources, was 19 of 18; a 90 % interval by construction,
    coverage.IntervalScale) and the context fit's error 615,282,231 -> 510,730,680 B, so the interval is 78.49 ± 0.29
    GiB and the log's figure lies 0.03 GiB above it: less than the weights' own miss read back (0.07 ÷ 0.88 = 0.08
    GiB), which the pre-load estimate does not carry."""
    from kvtop.domain.calibration.gpu_totals import CUDA_TOTAL_FITS
    from kvtop.domain.engines.sglang.calibration import FITS, INTERVAL_SCALE

    text = (CASES / "sglang/C13/engine.log").read_text()
    excerpt = "\n".join(line for line in text.splitlines() if "Load weight" not in line)
    model = load_model(str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"))
    settings = parse_flags("sglang", ["--mem-fraction-static", "0.88"])
    h100 = gpu_total_bytes("H100")
    result = explain(ExplainRequest(
        log=parse_engine_log(excerpt), model=model, settings=settings, gpu_total_bytes=h100, gpu_name="H100",
    ))
    assert result.verdict == "match" and not result.missing
    estimated = result.estimated
    assert estimated is not None and estimated.field == "free_before_load_bytes"
    total, context, scale = CUDA_TOTAL_FITS["cuda_total.H100"], FITS["sglang.context"], INTERVAL_SCALE
    # TP 1: the part per 100 SMs alone, × the H100's 132 SMs (NVIDIA's datasheet)
    by_hand = round(total.coefficients[0] * GIB) - round(context.coefficients[0] * 1.32 * GIB)
    assert scale is not None
    error = round(scale.factor * (total.error_bytes**2 + context.error_bytes**2) ** 0.5)
    assert estimated.source == "calibrated" and "sglang.context" in estimated.basis
    assert abs(estimated.value_bytes - by_hand) <= 1
    assert abs(estimated.low_bytes - (by_hand - error)) <= 2 and abs(estimated.high_bytes - (by_hand + error)) <= 2
    implied = (444_500 * 131_072 + PLANNED_WEIGHTS) / 0.88  # the budget read backwards, by hand
    assert estimated.implied_bytes is not None
    assert abs(estimated.implied_bytes - implied) <= 2 << 20  # to the MiB grid the search walks
    assert abs(estimated.implied_bytes / GIB - 78.81) < 0.2  # the log's own figure, within 0.25 %
    assert estimated.low_bytes <= estimated.implied_bytes <= estimated.high_bytes
    weights_miss_read_back = ((78.81 - 63.72) * GIB - PLANNED_WEIGHTS) / 0.88  # the log's weights less the plan's
    assert estimated.low_bytes <= 78.81 * GIB <= estimated.high_bytes + weights_miss_read_back
    without_gpu = explain(ExplainRequest(log=parse_engine_log(excerpt), model=model, settings=settings))
    assert without_gpu.verdict == "insufficient"  # no GPU named: nothing to estimate from


def test_a_vllm_log_without_its_profile_line_estimates_the_non_kv_memory_from_the_calibration() -> None:
    """vllm#10517 (v0.6.4, RTX 3090, Llama-3.1-8B, max_model_len 20000, utilisation 0.9) without its
    `Memory profiling results` line: the non-KV memory is the calibration's (the V0 activation fit; v0.6.4's
    non-torch memory, which holds the worker's CUDA context, as the growth fit `v0` plus one process's context,
    `cuda_context.one_process`, since session 51: it was the `v06` fit's), not a flat 2 GiB. The dropped line's figures give the truth by hand: ceil(23.58 × 0.9) −
    14.99 − 3.81 = 2.42 GiB of non-KV memory (activation 17.06 − 14.99 = 2.07 GiB, non-torch 0.35 GiB), and
    the logged 1,952 blocks imply it again; it lies inside the calibrated interval."""
    text = (CASES / "vllm/vllm-10517-llama31-8b-3090-v0/engine.log").read_text()
    excerpt = "\n".join(line for line in text.splitlines() if "Memory profiling results" not in line)
    model = load_model(str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"))
    settings = parse_flags("vllm", ["--engine-version", "0.6.4", "--max-model-len", "20000",
                                    "--gpu-memory-utilization", "0.9"])  # fmt: skip
    rtx3090 = gpu_total_bytes("RTX3090")
    result = explain(ExplainRequest(
        log=parse_engine_log(excerpt), model=model, settings=settings, gpu_total_bytes=rtx3090,
        gpu_name="RTX3090",
    ))
    estimated = result.estimated
    assert estimated is not None and estimated.field == "non_kv_bytes"
    assert "vllm.activation.v0" in estimated.basis and "vllm.non_torch.v0," in estimated.basis
    assert "cuda_context.one_process" in estimated.basis
    assert estimated.source == "calibrated"
    assert result.verdict == "match" and result.logged.token_capacity == 1_952 * 16
    truth = 23.58 * 0.9 - 14.99 - 3.81  # the dropped line's own figures, GiB
    assert abs(truth - 2.42) < 0.005
    assert estimated.low_bytes <= truth * GIB <= estimated.high_bytes
    assert estimated.implied_bytes is not None and abs(estimated.implied_bytes / GIB - truth) < 0.05


def test_a_triton_log_without_its_budget_is_judged_against_an_estimate_on_the_named_gpu() -> None:
    """TensorRT-LLM#224 (A10, Triton, fraction 0.95, tokens per block 16, v0.8's lines): `Using 10718 tokens` alone.
    On the A10 the estimate is judged, never 'insufficient': with plan's v0.8 runtime (max_num_tokens 8,192 × vocab
    32,000 × 4 B of logits, test_explain_terms_are_plans.py) the logged tokens need a free memory outside the
    estimated range (the engine's 4096-token, 25-request context memory is far above what kvtop charges). Since
    session 52 TensorRT-LLM's CUDA context is the engine-neutral one-process context by SM count (calibrated:
    cuda_context.one_process), not 0.75 GiB assumed, so the free memory before the weights is calibrated: the A10's
    CUDA total 22.07 GiB less 0.31 GiB, 21.55–21.96 GiB, still far above the 19.04 GiB the logged tokens need."""
    log = read_engine_log(CASES / "trtllm/trtllm-224-llama2-7b-a10-fraction/engine.log")
    model = load_model(str(CONFIGS / "meta-llama--Llama-2-7b-hf.json"))
    settings = parse_flags("trtllm", ["--kv_cache_free_gpu_mem_fraction", "0.95", "--tokens_per_block", "16",
                                      "--engine-version", "0.8.0"])  # the release the log's lines name (the CLI's)
    a10 = gpu_total_bytes("A10")
    result = explain(ExplainRequest(
        log=log, model=model, settings=settings, gpu_total_bytes=a10, gpu_name="A10",
    ))
    assert result.verdict == "mismatch" and result.estimated is not None
    assert result.estimated.source == "calibrated" and "cuda_context.one_process" in result.estimated.basis
    assert result.token_capacity_min is not None and result.token_capacity_max is not None
    assert not result.token_capacity_min <= 10_718 <= result.token_capacity_max
    implied = result.estimated.implied_bytes
    assert implied is not None and implied < result.estimated.low_bytes
    assert "outside that range" in (result.cause or "")
    assert explain(ExplainRequest(log=log, model=model, settings=settings)).verdict == "insufficient"


def test_the_cli_says_match_with_an_estimated_input(tmp_path) -> None:
    excerpt = tmp_path / "c13-excerpt.log"
    excerpt.write_text(
        "\n".join(line for line in (CASES / "sglang/C13/engine.log").read_text().splitlines() if "Load weight" not in line)
    )
    completed = run_kvtop("explain", str(excerpt), "--model",
                          str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"), "--mem-fraction-static", "0.88", "--gpu", "H100")  # fmt: skip
    assert completed.returncode == 0, completed.stderr
    verdict = next(line for line in completed.stdout.splitlines() if line.startswith("verdict:"))
    assert verdict.startswith(
        "verdict: MATCH with an estimated input — the logged capacity lies inside the predicted interval: "
        "free memory before the weights load ≈ 78.7"  # (444,500 × 131,072 B + the weights with the rope cache) ÷ 0.88
    )
    from kvtop.domain.calibration.gpu_totals import CUDA_TOTAL_FITS
    from kvtop.domain.engines.sglang.calibration import FITS

    central = CUDA_TOTAL_FITS["cuda_total.H100"].coefficients[0] - FITS["sglang.context"].coefficients[0] * 1.32
    assert f"GiB implied (kvtop's estimate {central:.2f} GiB: GPU memory as CUDA reports it" in verdict
    assert "calibrated range and the error of the weights (± " in completed.stdout  # no `Load weight`: the book's


def test_a_model_kvtop_does_not_model_still_gets_its_log_and_refusal_read(tmp_path: Path) -> None:
    """DeepSeek-V4's multimodal wrapper (vLLM's DeepseekV4ForConditionalGeneration) is not modelled; the refused vLLM
    start of vllm#11230 is still read: its 1,280 tokens and its refusal, exit 0, with what cannot be derived named."""
    v4 = json.loads((CONFIGS / "heldout/deepseek-ai--DeepSeek-V4-Flash.json").read_text())
    wrapped = tmp_path / "config.json"
    wrapped.write_text(json.dumps({**v4, "architectures": ["DeepseekV4ForConditionalGeneration"], "model_type": "v4_vl"}))
    completed = run_kvtop("explain", str(CASES / "vllm/vllm-11230-qwen25-72b-gptq-v064-refusal/engine.log"),
                          "--model", str(wrapped),
                          "--json")  # fmt: skip
    assert completed.returncode == 0 and "Traceback" not in completed.stderr, completed.stderr
    out = json.loads(completed.stdout)
    assert out["verdict"] == "failed_start" and out["logged"]["token_capacity"] == 1_280
    assert out["startup_error"].startswith("The model's max seq len (8192)")
    assert out["capacity_verdict"] == "insufficient" and not out["missing"]
    assert "DeepseekV4ForConditionalGeneration (model_type 'v4_vl') is not modelled by kvtop" in out["unsolved"]
    assert any("is not modelled by kvtop" in note for note in out["notes"])


def test_an_unmodelled_weight_format_is_a_model_kvtop_does_not_model() -> None:
    """An unmodelled `quant_method` (HQQ here) stopped explain with exit 2 before it read the log; it is now the
    same 'not modelled' error as an architecture, which explain answers by reading the log."""
    try:
        quant_from_config({"quant_method": "hqq", "nbits": 4, "group_size": 64})
    except UnsupportedModelError as error:
        assert "quantization method 'hqq' is not modelled yet" in str(error)
    else:
        raise AssertionError("HQQ is not modelled: the reader must say so")


def test_the_estimates_range_never_goes_below_nothing() -> None:
    """On a 1 GiB GPU (CUDA's total measured) the assumed context of 0.75 GiB ± 1.80 GiB at TP 1 leaves 0.25 GiB free,
    its low end 0 B, not −1.55 GiB. (Before, explain's own fallback said 0–0.75 GiB here: GPU total − 1 GiB within
    0.25–2 GiB; the range is now the plan's context term's, `free_before_load_range`.)"""
    from kvtop.domain.calibration.features import context_estimate
    from kvtop.domain.calibration.ranges import free_before_load_range
    from kvtop.domain.calibration.terms import PreloadEstimate, Term, TermEstimate

    total = TermEstimate(term=Term.CUDA_TOTAL, label="total", bytes=GIB, error_bytes=0, source="measured", basis="m")
    inputs = _inputs(tp=1)
    context = context_estimate("none.context", "context", {}, inputs, None)
    assert context.source == "assumed" and context.bytes == round(0.75 * GIB)
    found = free_before_load_range(PreloadEstimate(engine="sglang", terms=(total, context)))
    assert found is not None and found.source == "assumed"
    assert (found.low_bytes, found.value_bytes) == (0, GIB - round(0.75 * GIB))
    assert found.high_bytes == GIB - round(0.75 * GIB) + context.error_bytes  # unscaled: its error alone


def _inputs(tp: int):  # type: ignore[no-untyped-def]
    from kvtop.domain.calibration.inputs import CalibrationInputs
    from kvtop.domain.engines.versions import ResolvedVersion
    from kvtop.domain.launch import LaunchSettings
    from kvtop.domain.layout import ParallelLayout

    model = load_model(str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"))
    return CalibrationInputs(model=model, settings=LaunchSettings(engine="sglang", tp=tp), layout=ParallelLayout(tp=tp),
                             gpu_name=None, gpu_total_bytes=GIB, version=ResolvedVersion(text=None),
                             weights_bytes=GIB, context_length=model.max_position_embeddings)  # fmt: skip


def test_an_excerpt_without_its_load_end_line_implies_the_free_memory_that_line_said() -> None:
    """SGLang C13 without `Load weight end`: the free memory after the load is the logged 78.81 GiB before it
    less the weights plan charges (16,129,196,032 B: the test above), within the weights term's calibrated error.
    The logged 444,500 tokens imply the
    free memory after the load the engine printed and this excerpt dropped: 63.72 GiB (0.88 fraction:
    444,500 × 131,072 B + 78.81 GiB × 0.12 = 63.72 GiB)."""
    text = (CASES / "sglang/C13/engine.log").read_text()
    excerpt = "\n".join(line for line in text.splitlines() if "Load weight end" not in line)
    model = load_model(str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"))
    settings = parse_flags("sglang", ["--mem-fraction-static", "0.88"])
    result = explain(ExplainRequest(
        log=parse_engine_log(excerpt), model=model, settings=settings,
        gpu_total_bytes=gpu_total_bytes("H100"),
    ))
    assert result.verdict == "match" and result.estimated is not None
    assert result.estimated.field == "free_after_load_bytes"
    assert result.estimated.value_bytes == int(78.81 * GIB + 0.5) - PLANNED_WEIGHTS
    assert result.estimated.source == "calibrated"
    by_hand = (444_500 * 131_072 + 78.81 * GIB * 0.12) / GIB
    assert abs(by_hand - 63.72) < 0.005
    assert result.estimated.implied_bytes is not None
    assert abs(result.estimated.implied_bytes / GIB - 63.72) < 0.005  # the dropped line's own figure


def test_a_gpu_memory_given_is_the_engines_total_measured_in_the_estimate() -> None:
    """`--gpu-memory 80GiB` without a GPU name (as `plan --gpu-memory` takes it): the context fit reads the GPU's SM
    count, which no name gives, so the free memory before load is the plan's assumed context term's: 80 GiB less
    0.75 GiB (0.75 GiB + 0.75 GiB per doubling of TP, at TP 1), ± 1.80 GiB × SGLang's interval scale, as `plan
    --gpu-memory 80GiB` charges it, not a calibrated figure. (It moved from 79.00 GiB: explain's own fallback was GPU
    total − 1 GiB within 0.25–2 GiB, a second figure for the question plan answers.)"""
    text = (CASES / "sglang/C13/engine.log").read_text()
    excerpt = "\n".join(line for line in text.splitlines() if "Load weight" not in line)
    model = load_model(str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"))
    settings = parse_flags("sglang", ["--mem-fraction-static", "0.88"])
    result = explain(ExplainRequest(
        log=parse_engine_log(excerpt), model=model, settings=settings, gpu_total_bytes=80 * GIB,
    ))
    estimated = result.estimated
    assert estimated is not None and estimated.source == "assumed" and "assumed" in estimated.basis
    assert estimated.value_bytes == 80 * GIB - round(0.75 * GIB)
    from kvtop.domain.calibration.features import ASSUMED_CONTEXT_ERROR_GIB
    from kvtop.domain.engines.sglang.calibration import INTERVAL_SCALE

    assert INTERVAL_SCALE is not None  # the total was given (measured, no error): the context's error alone
    error = round(INTERVAL_SCALE.factor * round(ASSUMED_CONTEXT_ERROR_GIB * GIB))
    assert abs(estimated.high_bytes - (80 * GIB - round(0.75 * GIB) + error)) <= 1
    assert abs(estimated.low_bytes - (80 * GIB - round(0.75 * GIB) - error)) <= 1
    # the capacity read backwards gives the free memory the dropped `Load weight begin` line printed (78.81 GiB)
    # within 0.2 GiB; 80 GiB is more than an 80 GB card's CUDA total (the fitted one, below 80 GiB), so whether that lands inside
    # the fit's interval is the interval's call: a mismatch then names the estimate and the figure the log needs
    implied = estimated.implied_bytes
    assert implied is not None and abs(implied / GIB - 78.81) < 0.2
    inside = estimated.low_bytes <= implied <= estimated.high_bytes
    assert result.verdict == ("match" if inside else "mismatch")
    assert inside or f"needs {implied / GIB:.2f} GiB" in (result.cause or "")
