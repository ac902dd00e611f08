"""The planner's arithmetic without widgets: text fields → settings → before/after ledgers."""

from __future__ import annotations

import pytest

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.errors import InputError
from kvtop.domain.launch import LaunchSettings
from kvtop.ui.planning import apply_edits, engine_flags, field_texts, plan
from tests.calibrated_figures import H100_CUDA_TOTAL_BYTES, llama_70b_tokens
from tests.ui.fakes import (
    H100_TOTAL_BYTES,
    SGLANG_TP8_CONTEXT_BYTES,
    llama_plan,
    llama_settings,
)


def test_field_texts_start_from_the_live_settings():
    texts = field_texts(llama_settings())
    assert texts["tp"] == "8" and texts["pp"] == "1" and texts["enable_dp_attention"] == "off"
    assert texts["memory_fraction"] == ""  # engine default


def test_apply_edits_replaces_values_and_leaves_the_base_alone():
    base = llama_settings()
    edited = apply_edits(base, {"tp": "4", "memory_fraction": "0.85", "context_length": ""})
    assert (edited.tp, edited.mem_fraction_static, edited.context_length) == (4, 0.85, None)
    assert base.tp == 8


@pytest.mark.parametrize(
    ("texts", "message"),
    [
        ({"tp": "0"}, "TP: must be at least 1 (got 0)"),
        ({"tp": ""}, "TP: needs a whole number"),
        ({"memory_fraction": "1.5"}, "memory fraction: must be above 0 and at most 1 (got 1.5)"),
        ({"kv_cache_dtype": "int3"}, "KV dtype: SGLang has no KV cache dtype 'int3'"),
    ],
)
def test_bad_text_names_its_field(texts, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        apply_edits(llama_settings(), texts)


def test_plan_gives_the_same_capacity_as_the_calibrated_prediction(llama):
    """The planner's before and after are `kvtop plan`'s: SGLang sized from CUDA's total less its calibrated
    context (the free memory before load, had it been measured, gives the same figure). By hand (SGLang 0.5.9,
    docs/engines/sglang.md §4-§5; tests/calibrated_figures.py, from the committed fits): pre-load = CUDA's H100 total
    less SGLang's context c + d × log2 TP GiB; KV budget = pre-load − weights − pre-load × (1 − the automatic
    fraction); tokens = budget // the cell per rank; the weights are the book plus SGLang's float32 rope cos/sin
    cache, whole on every rank (8,192 × 128 × 4 B = 4,194,304 B). At the fits of da524f1c (79.18806 GiB, c = 0.570448,
    d = 0.521322), TP8: 82,735,722,401 − (17,640,734,720 + 4,194,304) − 15,057,901,477 (× 0.182) = 50,032,891,900 B
    // 40,960 B = 1,221,506; TP4 (fraction 0.824): 83,295,487,637 − (35,278,831,616 + 4,194,304) − 14,660,005,824 =
    33,352,455,892 B (SGLang's float GiB truncated, 1 B under the whole terms) // 81,920 B = 407,134."""
    outcome = plan(llama, llama_settings(), {"tp": "4"}, gpu_total_bytes=H100_TOTAL_BYTES, gpu_name="H100")
    free_tp8 = MeasuredInputs(free_before_load_bytes=H100_CUDA_TOTAL_BYTES - SGLANG_TP8_CONTEXT_BYTES)
    assert outcome.before.token_capacity == llama_plan(tp=8).token_capacity == llama_70b_tokens(8)
    assert llama_plan(tp=8, measured=free_tp8).token_capacity == llama_70b_tokens(8)
    assert outcome.after.token_capacity == llama_plan(tp=4).token_capacity == llama_70b_tokens(4)


def test_an_invalid_layout_is_an_outcome_with_the_reason_and_its_field(llama):
    outcome = plan(llama, llama_settings(), {"tp": "3"}, gpu_total_bytes=H100_TOTAL_BYTES, gpu_name="H100")
    assert outcome.after is None
    assert outcome.error.startswith("TP: 64 attention heads do not divide over attention TP 3")  # the field's label
    assert outcome.error_field == "tp"


def test_engine_flags_use_the_engines_spelling():
    settings = llama_settings(tp=4).model_copy(update={"kv_cache_dtype": "fp8_e4m3"})
    assert engine_flags(settings, with_model=False, launch=None) == "--tp-size 4 --kv-cache-dtype fp8_e4m3"
    vllm = settings.model_copy(update={"engine": "vllm", "model": "meta-llama/Meta-Llama-3-70B"})
    assert (
        engine_flags(vllm, with_model=True, launch=None)
        == "--model meta-llama/Meta-Llama-3-70B --tensor-parallel-size 4 --kv-cache-dtype fp8_e4m3"
    )


def test_the_planner_plans_with_this_nodes_own_earlier_start(llama):
    """A start of the same launch on this node that measured 3 GiB of context before the weights (the
    calibration store): the planner's before and after plan on it, as `kvtop plan` does. SGLang then sizes
    from CUDA's total less 3 GiB, not less its calibrated 2.13 GiB (at the fits of da524f1c): fewer tokens."""
    from kvtop.domain.calibration.node import NodeMeasure, model_key, runtime_settings
    from kvtop.domain.calibration.terms import Term

    settings = llama_settings()
    mine = NodeMeasure(date="2026-11-30", engine="sglang", engine_version=settings.engine_version, gpu="H100", tp=8,
                       pp=1, model_key=model_key(llama), model_type=llama.model_type, settings=runtime_settings(settings),
                       terms={Term.CUDA_TOTAL: H100_CUDA_TOTAL_BYTES, Term.CONTEXT: 3 * 2**30})  # fmt: skip
    outcome = plan(llama, settings, {}, gpu_total_bytes=H100_TOTAL_BYTES, gpu_name="NVIDIA H100 80GB HBM3",
                   node_measures=(mine,))  # fmt: skip
    free = MeasuredInputs(free_before_load_bytes=H100_CUDA_TOTAL_BYTES - 3 * 2**30)
    assert outcome.before.token_capacity == outcome.after.token_capacity == llama_plan(measured=free).token_capacity
    assert outcome.after.token_capacity < llama_plan().token_capacity
    assert outcome.after_plan is not None and outcome.after_plan.estimate.node_note == "calibrated on this node, 2026-11-30"


@pytest.mark.parametrize(
    ("engine", "expected"),
    [
        # trtllm-serve takes the model positionally (tensorrt_llm/commands/serve.py: @click.argument("model"));
        # --tp_size is its click option for tp
        ("trtllm", "Qwen/Qwen3-8B --tp_size 8"),
        # lmdeploy serve api_server takes it positionally (lmdeploy/cli/serve.py: add_argument('model_path'))
        ("lmdeploy", "Qwen/Qwen3-8B --tp 8"),
        ("sglang", "--model-path Qwen/Qwen3-8B --tp-size 8"),  # server_args.py: --model-path, --tp-size
        ("vllm", "--model Qwen/Qwen3-8B --tensor-parallel-size 8"),  # arg_utils.py: --model, --tensor-parallel-size
    ],
)
def test_pasted_flags_give_the_model_as_each_engine_takes_it(engine, expected):
    settings = LaunchSettings(engine=engine, model="Qwen/Qwen3-8B", tp=8)
    assert engine_flags(settings, with_model=True, launch=None) == expected


def test_llamacpp_takes_its_model_by_dash_m():
    # llama-server: common/arg.cpp {"-m", "--model"}; it has no positional model
    assert engine_flags(LaunchSettings(engine="llamacpp", model="/m/q.gguf"), with_model=True, launch=None) == "-m /m/q.gguf"


def test_a_long_kv_dtype_is_quoted_cut_not_echoed_whole():
    """The KV dtype typed is text from outside: quoted as every message quotes it (`redact.quoted`: cut at 40
    characters, marked '…', a secret masked before the cut), not `repr`'d whole (FR2 #8)."""
    typed = "fp8_" + "x" * 60
    with pytest.raises(InputError) as raised:
        apply_edits(llama_settings(), {"kv_cache_dtype": typed})
    said = str(raised.value)
    assert "KV dtype: SGLang has no KV cache dtype 'fp8_" in said and "…'" in said
    assert typed not in said
