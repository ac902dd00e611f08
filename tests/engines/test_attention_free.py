"""Attention-free decoders (MambaForCausalLM, FalconMambaForCausalLM, Mamba2ForCausalLM: table_state_only.py) as the
engines build them on the meta device (#26).

Expected figures: the engines' own rows (tests/data/engine_diff/registry/vllm-0.33.0.json and sglang-0.5.23.json,
default--<class>: `named_parameters()` bytes, vLLM's MambaSpec pages, SGLang's cell) and the state arithmetic by
hand from the configs (MambaConfig's defaults: hidden 768, d_inner 1,536, d_state 16, d_conv 4, 32 layers;
Mamba2Config's: 128 heads of 64, 8 groups, d_state 128, d_conv 4, 64 layers); never kvtop's own figures.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.engine_diff.registry_judge import kvtop_answer
from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.kv_state import state_bytes_per_request
from kvtop.domain.layout import ParallelLayout, validate_layout
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.data_paths import DATA

CONFIGS = DATA / "engine_diff" / "registry" / "configs"
BF16, FP32 = 2, 4
# the meta builds' whole parameter bytes (both engines alike where both built): backbone / model (+ lm_head)
ENGINE_WEIGHTS = {
    "MambaForCausalLM": {1: 320_226_816, 2: 160_138_752},
    "FalconMambaForCausalLM": {1: 320_226_816, 2: 160_138_752},
    "Mamba2ForCausalLM": {1: 14_302_388_224 + 268_435_456, 2: 7_151_460_352 + 134_217_728},
}


def _model(name: str) -> ModelSpec:
    return model_from_config(json.loads((CONFIGS / f"{name}.json").read_text()), source=name)


def _row(engine: str, version: str, name: str, tp: int) -> dict[str, Any]:
    return row_of(engine, version, f"default--{name}", tp)


@pytest.mark.parametrize("name", sorted(ENGINE_WEIGHTS))
@pytest.mark.parametrize("tp", [1, 2])
def test_weights_are_the_meta_builds(name: str, tp: int) -> None:
    """vLLM 0.33.0 built all three; SGLang 0.5.23 Mamba and FalconMamba (its Mamba2Config reads an
    intermediate_size transformers' class does not write: the engine's refusal row) — the same bytes."""
    assert sum(_row("vllm", "0.33.0", name, tp)["stages"][0]["param_bytes"].values()) == ENGINE_WEIGHTS[name][tp]
    if name != "Mamba2ForCausalLM":
        assert sum(_row("sglang", "0.5.23", name, tp)["stages"][0]["param_bytes"].values()) == ENGINE_WEIGHTS[name][tp]
    model = _model(name)
    assert model.attention_free
    validate_layout(model, ParallelLayout(tp=tp))  # the nominal head is read by no check
    book = weights_book(model, ParallelLayout(tp=tp), range(model.num_layers), first_stage=True, last_stage=True)
    assert sum(row.bytes for row in book.rows) == ENGINE_WEIGHTS[name][tp]


@pytest.mark.parametrize("tp", [1, 2])
def test_state_per_request_is_conv_and_ssm_per_layer(tp: int) -> None:
    """Mamba-1 per layer and rank: conv (d_conv − 1) × d_inner ÷ TP in bf16 + SSM d_inner ÷ TP × d_state. SGLang keeps
    the SSM float32 (configs/mamba_utils.py mamba2_state_dtype's default): (3 × 1,536 × 2 + 1,536 × 16 × 4) ÷ TP =
    107,520 B at TP 1; vLLM keeps it in the model's dtype: its MambaSpec page 3 × 1,536 × 2 + 1,536 × 16 × 2 =
    58,368 B (29,184 at TP 2), in the row. Mamba2 per layer, SGLang: conv 3 × (8,192 + 2 × 8 × 128) × 2 + SSM
    128 × 64 × 128 × 4 = 4,255,744 B at TP 1; vLLM's page 61,440 + 2,097,152 = 2,158,592 B."""
    layout = ParallelLayout(tp=tp)
    sglang = engine_rules("sglang").kv_storage
    mamba1 = (3 * 1536 * BF16 + 1536 * 16 * FP32) // tp
    assert state_bytes_per_request(_model("MambaForCausalLM"), layout, sglang.unstated_ssm_dtype_bytes) == mamba1
    assert state_bytes_per_request(_model("Mamba2ForCausalLM"), layout, sglang.unstated_ssm_dtype_bytes) == (
        3 * (8192 + 2 * 8 * 128) * BF16 // tp + 128 * 64 * 128 * FP32 // tp
    )
    vllm_page = {1: 58_368, 2: 29_184}[tp]
    spec = _row("vllm", "0.33.0", "MambaForCausalLM", tp)["stages"][0]["layer_specs"][0]
    assert (spec["kind"], spec["layers"], spec["page_size_bytes"]) == ("MambaSpec", 32, vllm_page)
    assert vllm_page == (3 * 1536 * BF16 + 1536 * 16 * BF16) // tp
    spec2 = _row("vllm", "0.33.0", "Mamba2ForCausalLM", tp)["stages"][0]["layer_specs"][0]
    assert spec2["page_size_bytes"] == (3 * (8192 + 2 * 8 * 128) * BF16 + 128 * 64 * 128 * BF16) // tp


@pytest.mark.parametrize("tp", [1, 2])
def test_sglang_plans_the_rows_equal(tp: int) -> None:
    """SGLang: weights equal and the cell 0 B (no attention layer: full_attention_layer_ids [])."""
    row = _row("sglang", "0.5.23", "MambaForCausalLM", tp)
    plan = kvtop_answer("sglang", "0.5.23", row)
    assert plan["status"] == "ok"
    assert [stage["weights_bytes"] for stage in plan["stages"]] == [ENGINE_WEIGHTS["MambaForCausalLM"][tp]]
    assert plan["cell_bytes"] == row["cell_size"] == 0


@pytest.mark.parametrize("tp", [1, 2])
def test_vllm_blocks_are_one_state_a_request(tp: int) -> None:
    """vLLM 0.33.0 (engines/vllm/state_only.py): one group of every MambaSpec layer, blocks of max_model_len (2,048)
    tokens, num_blocks = the harness's fixed 40 GiB // (the row's page × 32 layers): 42,949,672,960 // (58,368 × 32)
    = 22,995 at TP 1, // (29,184 × 32) = 45,990 at TP 2; one block a request; the logged figure blocks × 2,048."""
    row = _row("vllm", "0.33.0", "MambaForCausalLM", tp)
    page = row["stages"][0]["layer_specs"][0]["page_size_bytes"]
    plan = kvtop_answer("vllm", "0.33.0", row)
    assert plan["status"] == "ok" and plan["block_size"] == 2048
    assert plan["num_blocks"] == 40 * 2**30 // (page * 32) == {1: 22_995, 2: 45_990}[tp]
    assert plan["tokens"] == plan["num_blocks"] * 2048


def test_vllm_prefix_caching_on_an_attention_free_model_is_refused_by_name() -> None:
    """Its align mode (two state blocks of block_size tokens a request) is not modelled; the default, off, is."""
    from kvtop.domain.engines.base import MeasuredInputs
    from kvtop.domain.errors import UnsupportedModelError
    from kvtop.domain.launch import parse_flags
    from kvtop.domain.ledger import predict

    model = _model("MambaForCausalLM")
    on = parse_flags("vllm", ["--model", "m", "--enable-prefix-caching", "--max-model-len", "2048"])
    with pytest.raises(UnsupportedModelError, match="prefix caching on an attention-free model"):
        predict(model, on, gpu_total_bytes=80 * 2**30, gpu_name="H100", measured=MeasuredInputs())
    off = parse_flags("vllm", ["--model", "m", "--max-model-len", "2048"])
    ledger = predict(model, off, gpu_total_bytes=80 * 2**30, gpu_name="H100", measured=MeasuredInputs())
    assert ledger.request_capacity is not None and ledger.request_capacity.state_bytes_per_request == 32 * 58_368


@pytest.mark.parametrize("off", [["--enable-prefix-caching", "false"], ["--enable-prefix-caching", "0"],
                                 ["--no-enable-prefix-caching"]])
def test_vllm_prefix_caching_said_off_on_an_attention_free_model_is_its_default(off: list[str]) -> None:
    """`--enable-prefix-caching` at a false word (as `--no-enable-prefix-caching`: span.flag_switch) is off, vLLM's
    default for the model: not refused, and a request holds vLLM 0.33.0's own MambaSpec page (the registry row's
    58,368 B) in each of its 32 layers."""
    from kvtop.domain.engines.base import MeasuredInputs
    from kvtop.domain.launch import parse_flags
    from kvtop.domain.ledger import predict

    page = _row("vllm", "0.33.0", "MambaForCausalLM", 1)["stages"][0]["layer_specs"][0]["page_size_bytes"]
    settings = parse_flags("vllm", ["--model", "m", *off, "--max-model-len", "2048"])
    ledger = predict(_model("MambaForCausalLM"), settings, gpu_total_bytes=80 * 2**30, gpu_name="H100",
                     measured=MeasuredInputs())  # fmt: skip
    assert ledger.request_capacity is not None and ledger.request_capacity.state_bytes_per_request == 32 * page


def test_sglang_refuses_a_mamba2_config_without_intermediate_size() -> None:
    """SGLang 0.5.23's Mamba2Config reads intermediate_size, which transformers' Mamba2Config never sets: the registry
    sweep's row of the default is the engine's refusal (742769d0: sglang_config_failures names models/mamba2.py:72's
    AttributeError "SGLang cannot build this config on any device"), not a harness error; with it stated
    (2 × 4,096) SGLang's checks pass."""
    from kvtop.domain.engines.sglang.config_checks import check_config
    from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
    from kvtop.domain.errors import InputError

    row = _row("sglang", "0.5.23", "Mamba2ForCausalLM", 1)
    assert row["status"] == "refused" and row["error_type"] == "AttributeError"
    assert "models/mamba2.py:72" in row["message"]
    assert row["message"].endswith("AttributeError: 'Mamba2Config' object has no attribute 'intermediate_size'")
    version = ResolvedVersion(text="0.5.23", source=VersionSource.FLAG)
    with pytest.raises(InputError, match="without intermediate_size"):
        check_config(_model("Mamba2ForCausalLM"), version)
    stated = {**json.loads((CONFIGS / "Mamba2ForCausalLM.json").read_text()), "intermediate_size": 8192}
    check_config(model_from_config(stated, source="stated"), version)


@pytest.mark.parametrize(("engine", "why"), [("trtllm", "hybrid Mamba cache managers"),
                                             ("lmdeploy", "registers no attention-free"), ("llamacpp", "recurrent")])
def test_the_other_engines_refuse_it_by_name(engine: str, why: str) -> None:
    """None of them plans a Mamba state alone: each says so (LMDeploy registers no Mamba class; TensorRT-LLM's and
    llama.cpp's recurrent caches are not modelled) rather than dividing by a 0 B block."""
    from kvtop.domain.engines.base import MeasuredInputs
    from kvtop.domain.errors import InputError, UnsupportedModelError
    from kvtop.domain.launch import parse_flags
    from kvtop.domain.ledger import predict

    settings = parse_flags(engine, ["--model", "m"]) if engine != "llamacpp" else parse_flags(engine, ["-m", "m.gguf"])
    with pytest.raises((InputError, UnsupportedModelError), match=why):
        predict(_model("MambaForCausalLM"), settings, gpu_total_bytes=80 * 2**30, gpu_name="H100",
                measured=MeasuredInputs())  # fmt: skip
