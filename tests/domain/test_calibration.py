"""The calibration's arithmetic (fits, held-out errors, intervals) and the pre-load estimate's terms.

Expected values come from hand arithmetic written here and from the figures real logs printed
(tests/data/calibration/, each record's source there)."""

from __future__ import annotations

import pytest

from kvtop.domain.calibration.estimate import planned_capacity, preload_estimate
from kvtop.domain.calibration.fit import least_squares, non_negative_least_squares, quantile
from kvtop.domain.calibration.linear import fit_term
from kvtop.domain.calibration.node import NodeMeasure, model_key, runtime_settings
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_config_file
from tests.data_paths import CONFIGS

LLAMA_8B = CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"
H100 = gpu_total_bytes("H100")


def test_least_squares_recovers_a_line_and_drops_a_negative_part() -> None:
    rows = [(1.0, 0.0), (1.0, 1.0), (1.0, 2.0)]
    assert least_squares(rows, [2.0, 5.0, 8.0]) == pytest.approx([2.0, 3.0])  # y = 2 + 3x
    # y = 5 − x: memory cannot be given back, so the slope is dropped and the constant is the mean
    assert non_negative_least_squares(rows, [5.0, 4.0, 3.0]) == pytest.approx([4.0, 0.0])


def test_a_terms_error_is_the_90th_percentile_of_its_held_out_errors() -> None:
    # a constant fitted on 1, 2, 3 GiB (each row its own source): leaving each out predicts 2.5, 2.0, 1.5 →
    # |errors| 1.5, 0, 1.5; the 90th percentile's rank ⌈3 × 0.9⌉ = 3 of 3 → 1.5 GiB (the least-squares ridge of 1e-9
    # moves a prediction by about a byte)
    fit = fit_term("t", ("1 GiB",), [((1.0,), 1.0), ((1.0,), 2.0), ((1.0,), 3.0)])
    assert fit.coefficients == (2.0,)
    assert quantile([1.5, 0.0, 1.5], 0.9) == 1.5
    assert abs(fit.error_bytes - round(1.5 * GIB)) <= 2 and fit.records == 3 and fit.sources == 3


def vllm_plan(*flags: str, measured: MeasuredInputs | None = None):  # type: ignore[no-untyped-def]
    model = load_config_file(LLAMA_8B)
    settings = parse_flags("vllm", [*flags]).model_copy(update={"model": str(LLAMA_8B)})
    return planned_capacity(model, settings, gpu_total_bytes=H100, gpu_name="H100", measured=measured)


def test_the_v019_fit_gives_the_activation_and_total_an_h100_log_printed() -> None:
    """llm-d-planner's v0.19.0 run of Llama-3.1-8B-Instruct on an H100 printed an activation peak of
    1.89 GiB and a total of 79.19 GiB (tests/data/calibration/vllm.jsonl): the committed fits (which that
    record is one of) give both within their stated errors."""
    plan = vllm_plan("--engine-version", "0.19.0", "--max-model-len", "8192", "--gpu-memory-utilization", "0.95")
    activation, total = plan.estimate.term(Term.ACTIVATION), plan.estimate.term(Term.CUDA_TOTAL)
    assert activation is not None and total is not None
    assert activation.source == total.source == "calibrated"
    assert abs(activation.bytes - 1.89 * GIB) <= activation.error_bytes + 0.005 * GIB
    assert abs(total.bytes - 79.19 * GIB) <= total.error_bytes + 0.005 * GIB
    # and the KV memory it logged (58.11 GiB) lies in the plan's interval
    assert plan.kv_budget_min_bytes <= 58.11 * GIB <= plan.kv_budget_max_bytes


def test_the_interval_brackets_the_plan_and_its_widest_term_is_named() -> None:
    plan = vllm_plan("--engine-version", "0.19.0")
    assert plan.token_capacity_min < plan.ledger.token_capacity < plan.token_capacity_max
    widest = max(plan.estimate.terms, key=lambda term: term.error_bytes)
    assert plan.dominant == widest
    assert plan.spread_tokens == max(plan.ledger.token_capacity - plan.token_capacity_min,
                                     plan.token_capacity_max - plan.ledger.token_capacity)  # fmt: skip


def test_a_what_if_moves_the_interval() -> None:
    """The sampler's logits are max_num_seqs × vocab × 4 B: a quarter of the seqs takes most of the peak off."""
    full = vllm_plan("--engine-version", "0.19.0")
    fewer = vllm_plan("--engine-version", "0.19.0", "--max-num-seqs", "256")
    assert fewer.estimate.term(Term.ACTIVATION).bytes < full.estimate.term(Term.ACTIVATION).bytes  # type: ignore[union-attr]
    assert fewer.token_capacity_min > full.token_capacity_min and fewer.ledger.token_capacity > full.ledger.token_capacity


def test_what_was_measured_replaces_its_term_at_the_figure_measured() -> None:
    """The README's seed case: total, weights and runtime memory given, so the interval is the capacity. Pinned to
    0.33.0, where the budget is the share of the total: from 0.34.0 the extensible KV cache also takes the free memory
    at the worker's start (the total less the calibrated CUDA context, extensible_kv.py), so a calibrated term stays."""
    model = load_config_file(CONFIGS / "Qwen--Qwen2.5-7B-Instruct.json")
    flags = ["--gpu-memory-utilization", "0.9", "--max-model-len", "32768", "--engine-version", "0.33.0"]
    settings = parse_flags("vllm", flags)
    measured = MeasuredInputs(gpu_total_bytes=24 * GIB, weights_bytes=15 * GIB, non_kv_bytes=2 * GIB)
    plan = planned_capacity(model, settings, gpu_total_bytes=24 * GIB, measured=measured)
    assert {term.source for term in plan.estimate.terms} == {"measured"}
    by_term = {term.term: term.bytes for term in plan.estimate.terms}
    assert by_term == {Term.CUDA_TOTAL: 24 * GIB, Term.WEIGHTS: 15 * GIB, Term.ACTIVATION: 2 * GIB}
    assert plan.exact and plan.ledger.token_capacity == 86_128  # int(5,383 blocks ÷ 2,048 × 32,768)


def test_an_sglang_plan_given_its_free_memory_measures_the_context() -> None:
    model = load_config_file(LLAMA_8B)
    settings = parse_flags("sglang", ["--tp", "1"])
    plan = planned_capacity(model, settings, gpu_total_bytes=H100, gpu_name="H100",
                            measured=MeasuredInputs(free_before_load_bytes=78 * GIB))  # fmt: skip
    context, total = plan.estimate.term(Term.CONTEXT), plan.estimate.term(Term.CUDA_TOTAL)
    assert context is not None and total is not None
    assert context.source == "measured" and total.bytes - context.bytes == 78 * GIB


def test_a_launch_that_recasts_its_weights_counts_the_cast() -> None:
    """`--dtype float32` on a BF16 checkpoint doubles the resident weights (llm-d-planner: 29.98 GiB against
    14.99): the term is the book of the cast model, calibrated (test_calibration_weights.py)."""
    weights = vllm_plan("--dtype", "float32").estimate.term(Term.WEIGHTS)
    rope = 131_072 * 128 * 4  # vLLM's rope cos/sin cache beside the book, float32 too (weights_held.py)
    assert weights is not None and weights.source == "calibrated" and weights.bytes == 2 * 16_060_522_496 + rope


def node(model_path=LLAMA_8B, gpu: str = "H100", **settings: object) -> NodeMeasure:  # type: ignore[no-untyped-def]
    model = load_config_file(model_path)
    launch = parse_flags("vllm", ["--engine-version", "0.19.0"]).model_copy(update=settings)
    return NodeMeasure(date="2026-11-30", engine="vllm", engine_version="0.19.0", gpu=gpu, tp=1, pp=1,
                       model_key=model_key(model), model_type=model.model_type, settings=runtime_settings(launch),
                       terms={Term.CUDA_TOTAL: 79 * GIB, Term.WEIGHTS: 15 * GIB, Term.ACTIVATION: 3 * GIB,
                              Term.NON_TORCH: 0, Term.CUDA_GRAPHS: 0})  # fmt: skip


def test_this_nodes_own_start_of_the_same_launch_replaces_the_fits() -> None:
    model = load_config_file(LLAMA_8B)
    settings = parse_flags("vllm", ["--engine-version", "0.19.0"])
    ledger = predict(model, settings, gpu_total_bytes=H100, gpu_name="H100")
    mine = preload_estimate(ledger, node_measures=(node(),))
    assert mine.node_note == "calibrated on this node, 2026-11-30"
    assert {term.term: (term.bytes, term.source) for term in mine.terms}[Term.ACTIVATION] == (3 * GIB, "measured")
    # another GPU model, another model, another profiled batch: not the same launch's figures
    assert preload_estimate(ledger, node_measures=(node(gpu="H200"),)).node_note is None
    other = CONFIGS / "Qwen--Qwen2.5-7B-Instruct.json"
    assert preload_estimate(ledger, node_measures=(node(model_path=other),)).node_note is None
    batch = preload_estimate(ledger, node_measures=(node(max_num_batched_tokens=2048),))
    assert batch.node_note is not None  # the weights still apply
    assert batch.term(Term.ACTIVATION).source == "calibrated"  # type: ignore[union-attr]
    # a start that kept only its runtime charge gives another batch nothing: the plan does not say it used it
    runtime_only = node(max_num_batched_tokens=2048).model_copy(update={"terms": {Term.CUDA_TOTAL: 79 * GIB,
                                                                                  Term.ACTIVATION: 3 * GIB}})
    assert preload_estimate(ledger, node_measures=(runtime_only,)).node_note is None


def test_a_start_of_no_known_release_feeds_only_a_plan_of_the_rules_it_was_read_under() -> None:
    """A store line whose release is not known (a log with no version line, explained as NOT_STATED) was solved
    under the newest release kvtop modelled then; a plan naming no release is planned under today's newest. vLLM's
    newest is v0.34.0 (release_calendar.CALENDAR), whose extensible KV cache sizes from the free memory after warmup
    (extensible_kv.py): a line read under v0.33.0's profiling rules, or by a kvtop that did not keep `read_as`, must
    not feed it, and the plan says why."""
    from kvtop.domain.calibration.node import rules_release, unused_start

    model = load_config_file(LLAMA_8B)
    settings = parse_flags("vllm", [])
    assert settings.engine_version is None and rules_release("vllm", None) == "0.34.0"
    ledger = predict(model, settings, gpu_total_bytes=H100, gpu_name="H100")
    unknown = node().model_copy(update={"engine_version": None})  # written before read_as was kept
    assert preload_estimate(ledger, node_measures=(unknown,)).node_note is None
    older = unknown.model_copy(update={"read_as": "0.33.0"})
    assert preload_estimate(ledger, node_measures=(older,)).node_note is None
    said = unused_start((older,), "vllm", None, "H100", model, settings)
    assert said is not None and "read under v0.33.0's rules, this plan under v0.34.0's" in said
    same = unknown.model_copy(update={"read_as": "0.34.0"})
    assert preload_estimate(ledger, node_measures=(same,)).node_note == "calibrated on this node, 2026-11-30"
    assert unused_start((same,), "vllm", None, "H100", model, settings) is None
    # a stated release matches as it did: by its name alone
    assert node().same_rules("0.19.0") and not node().same_rules(None)


def test_the_nodes_weights_reach_the_budget_not_only_the_terms_table() -> None:
    """The node's 15 GiB of weights (`node()`) are what the plan's ranks hold, in place of the book's
    16,060,522,496 B (test_a_launch_that_recasts_its_weights_counts_the_cast) and its calibrated rope cache."""
    model = load_config_file(LLAMA_8B)
    settings = parse_flags("vllm", ["--engine-version", "0.19.0"])
    plan = planned_capacity(model, settings, gpu_total_bytes=H100, gpu_name="H100", node_measures=(node(),))
    assert {rank.weights.total_bytes for rank in plan.ledger.ranks} == {15 * GIB}


def test_an_nvml_name_keys_the_gpu_model_its_totals_are_fitted_on() -> None:
    """NVML's names ('NVIDIA H100 80GB HBM3', 'NVIDIA GeForce RTX 4090') and `--gpu`'s ('H100') meet on
    one key, so a live node's GPU finds the CUDA total its logs printed; an unknown name keeps its own."""
    from kvtop.domain.gpus import gpu_model_key

    assert gpu_model_key("NVIDIA H100 80GB HBM3") == gpu_model_key("H100") == "H100"
    assert gpu_model_key("NVIDIA GeForce RTX 4090") == "RTX4090"
    assert gpu_model_key("NVIDIA H200") == "H200"
    assert gpu_model_key(None) == ""


def test_a_sized_model_is_keyed_with_the_board_between_its_name_and_size() -> None:
    """NVML names the A100 boards 'NVIDIA A100-SXM4-80GB' and 'NVIDIA A100 80GB PCIe' (tests/data/samples/
    nvidia_smi): both are the 'A100-80GB' whose CUDA total the corpus measured, not the plain 'A100' (which has
    none: the mean gap stood in, 0.40 GiB above the 79.15 GiB logged); the 40GB boards are the 'A100-40GB'."""
    from kvtop.domain.gpus import gpu_model_key

    assert gpu_model_key("NVIDIA A100-SXM4-80GB") == gpu_model_key("NVIDIA A100 80GB PCIe") == "A100-80GB"
    assert gpu_model_key("NVIDIA A100-SXM4-40GB") == gpu_model_key("NVIDIA A100-PCIE-40GB") == "A100-40GB"
    assert gpu_model_key("Tesla V100-SXM2-32GB") == "V100-32GB"
    assert gpu_model_key("Tesla V100-SXM2-16GB") == "V100"


def test_the_context_grows_per_doubling_of_tp_only_where_nvlink_joins_the_gpus() -> None:
    """(1, log2 TP on NVLink, log2 TP on PCIe): TP 8 on H100s is 3 doublings on NVLink; on RTX 4090s on PCIe."""
    from kvtop.domain.calibration.estimate import calibration_inputs
    from kvtop.domain.calibration.features import tp_features

    model = load_config_file(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")
    h100 = predict(model, parse_flags("sglang", ["--tp", "8"]), gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100")
    rtx = predict(model, parse_flags("sglang", ["--tp", "8"]), gpu_total_bytes=gpu_total_bytes("RTX4090"),
                  gpu_name="NVIDIA GeForce RTX 4090")  # fmt: skip
    assert tp_features(calibration_inputs(h100)) == (1.0, 3.0, 0.0)
    assert tp_features(calibration_inputs(rtx)) == (1.0, 0.0, 3.0)


def test_an_inputs_range_is_its_terms_within_their_held_out_errors_together() -> None:
    """The range `explain --gpu` gives a missing input (issue 28 item 7): SGLang's free memory before load on an
    H100 at TP 2 is CUDA's total less the context fit (the part per 100 SMs of 2,048 threads × the H100's 132 + one doubling on NVLink),
    ± the root of the two errors' squares × SGLang's interval scale (`INTERVAL_SCALE`, coverage.py), the context's the
    error of its group (NVLink TP > 1) where wider than the pool's. TensorRT-LLM's context is one process's by the
    GPU's resident threads since session 54 (the engine-neutral fit, `cuda_context.py`: 0.446 GiB per 100 SMs of 2,048 threads), calibrated: the
    H100's 132 SMs, ± the root of the total's and the context fit's errors × TensorRT-LLM's interval scale."""
    from kvtop.domain.calibration.gpu_totals import CUDA_TOTAL_FITS
    from kvtop.domain.calibration.ranges import free_before_load_range, runtime_range
    from kvtop.domain.engines.sglang.calibration import FITS, INTERVAL_SCALE

    model = load_config_file(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")
    h100 = gpu_total_bytes("H100")
    sglang = preload_estimate(predict(model, parse_flags("sglang", ["--tp", "2"]), gpu_total_bytes=h100, gpu_name="H100"))
    found = free_before_load_range(sglang)
    total, context, scale = CUDA_TOTAL_FITS["cuda_total.H100"], FITS["sglang.context"], INTERVAL_SCALE
    by_hand = round(total.coefficients[0] * GIB) - round((context.coefficients[0] * 1.32 + context.coefficients[1]) * GIB)
    nvlink = max(dict(context.group_errors).get("100 SMs of 2,048 threads + log2(TP) on NVLink GPUs", 0), context.error_bytes)
    assert scale is not None
    error = round(scale.factor * (total.error_bytes**2 + nvlink**2) ** 0.5)
    assert found is not None and found.source == "calibrated"
    assert abs(found.value_bytes - by_hand) <= 1 and abs(found.error_bytes - error) <= 2
    assert runtime_range(sglang) is None  # SGLang charges no profiled runtime term
    trtllm = preload_estimate(predict(model, parse_flags("trtllm", []), gpu_total_bytes=h100, gpu_name="H100"))
    assert trtllm.term(Term.CONTEXT) is not None and trtllm.term(Term.CONTEXT).source == "calibrated"  # type: ignore[union-attr]
    from kvtop.domain.calibration.cuda_context import CUDA_CONTEXT_FITS, CUDA_CONTEXT_KEY
    from kvtop.domain.engines.trtllm.calibration import INTERVAL_SCALE as TRTLLM_SCALE

    one_process = CUDA_CONTEXT_FITS[CUDA_CONTEXT_KEY]
    ranged = free_before_load_range(trtllm)
    assert ranged is not None and ranged.source == "calibrated" and TRTLLM_SCALE is not None
    assert abs(ranged.value_bytes - (round(total.coefficients[0] * GIB) - round(one_process.coefficients[0] * 1.32 * GIB))) <= 1
    error = TRTLLM_SCALE.factor * (total.error_bytes**2 + one_process.error_bytes**2) ** 0.5
    assert abs(ranged.error_bytes - error) <= 2
