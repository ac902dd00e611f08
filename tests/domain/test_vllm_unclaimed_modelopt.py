"""ModelOpt fields vLLM does not claim (docs/engines/vllm.md §3.9): an hf_quant_config.json that names no producer
(the AIC copy of Nemotron-3-Super-120B-A12B-FP8) and config.json's top-level quant_algo without a quant_method
(Qwen3-32B-FP8-Static-PerTensor). vLLM 0.13.0 and 0.33.0 find no quantization method in them and serve bf16 weights
and a bf16 KV cache; SGLang reads them. Expected figures are the engines' own (vLLM 0.33.0's and SGLang 0.5.23's
model classes built on the meta device, their KV sizing: tests/data/engine_diff/*.flags.json)."""

from __future__ import annotations

import pytest

from kvtop.domain.launch import parse_flags
from kvtop.domain.launch_check import launch_refusals
from kvtop.domain.served_model import served_model
from kvtop.sources.hub import load_model
from tests.data_paths import DATA
from tests.domain.test_vllm_layer_build import engine_stages, kvtop_stages
from tests.domain.vllm_engine_cases import engine_figures, figures, flag_plan, flag_row

NEMOTRON = "nvidia--NVIDIA-Nemotron-3-Super-120B-A12B-FP8"
STATIC = "Qwen--Qwen3-32B-FP8-Static-PerTensor"
HARNESS = DATA / "engine_diff" / "configs"


@pytest.mark.parametrize(("variant", "config"), [("ep", NEMOTRON), ("pp2", NEMOTRON), ("pp4", NEMOTRON),
                                                 ("pp2", STATIC), ("pp4", STATIC)])  # fmt: skip
def test_vllm_holds_the_unclaimed_checkpoint_in_bf16(variant: str, config: str) -> None:
    """Nemotron-3-Super TP2+EP: 121,088,569,344 B a rank as vLLM built it (60.6 GB as SGLang's FP8)."""
    ledger = flag_plan(variant, config)
    assert kvtop_stages(ledger) == engine_stages(variant, config)
    assert figures(ledger) == engine_figures(flag_row(variant, config))
    assert not ledger.model.quant.quantized and ledger.model.quant.kv_cache_quant_algo is None
    if (variant, config) == ("ep", NEMOTRON):
        assert engine_stages(variant, config) == [121_088_569_344]


def test_the_plan_says_the_file_is_ignored() -> None:
    ledger = flag_plan("page64", NEMOTRON)
    (note,) = [n for n in ledger.engine.notes if "ModelOpt" in n]
    assert note.startswith(str(HARNESS / f"{NEMOTRON}.hf_quant_config.json"))
    assert "finds no quantization method" in note and "model dtype" in note


def test_the_kv_cache_stays_bf16_where_kvtop_read_fp8_before() -> None:
    """vLLM's hybrid block of Nemotron-3-Super with a bf16 attention page: 4,160 tokens (8,320 for FP8 KV)."""
    row = flag_row("pp2", NEMOTRON)
    assert row["cache_dtype"] == "auto" and row["block_size"] == 4_160
    assert flag_plan("pp2", NEMOTRON).engine.page_size == 4_160


def test_fp8_e5m2_runs_on_a_checkpoint_vllm_holds_unquantized() -> None:
    for config in (NEMOTRON, STATIC):
        assert flag_row("fp8_e5m2", config)["status"] == "ok"
        assert launch_refusals(flag_plan("fp8_e5m2", config)) == ()


@pytest.mark.parametrize("config", [NEMOTRON, STATIC])
def test_sglang_reads_the_same_fields_as_fp8(config: str) -> None:
    """SGLang 0.5.23 built both in FP8 (tests/data/engine_diff/sglang-0.5.23.flags.json); its served model keeps
    the checkpoint's format."""
    model = load_model(str(HARNESS / f"{config}.json"))
    assert model.quant.modelopt_unclaimed and model.quant.method == "fp8"
    served = served_model(model, parse_flags("sglang", ["--tp", "2"]))
    assert served.quant.method == "fp8" and not served.quant.ignored


def test_a_claimed_modelopt_file_is_read_by_vllm() -> None:
    """nvidia/Llama-3.1-70B-Instruct-FP8's hf_quant_config.json names producer modelopt: FP8 weights, FP8 KV."""
    ledger = flag_plan("pp2", "nvidia--Llama-3.1-70B-Instruct-FP8")
    assert ledger.model.quant.method == "fp8" and not ledger.model.quant.modelopt_unclaimed
    assert kvtop_stages(ledger) == engine_stages("pp2", "nvidia--Llama-3.1-70B-Instruct-FP8")


@pytest.mark.parametrize(
    ("producer", "unclaimed"),
    [({"name": "modelopt", "version": "0.23.0"}, False), ({"name": "other"}, True), ("modelopt", True), (None, True)],
)
def test_only_modelopts_producer_object_claims_a_quantization_section(producer: object, unclaimed: bool) -> None:
    """vLLM's `quant_cfg.get("producer", {}).get("name") == "modelopt"`. A bare string is no producer object (vLLM's
    `.get` on it would fail at start; kvtop reads it as claiming nothing rather than refuse the file)."""
    from kvtop.domain.quant import quant_from_config

    block: dict[str, object] = {"quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8"}}
    if producer is not None:
        block["producer"] = producer
    quant = quant_from_config(None, block)
    assert quant.method == "fp8" and quant.kv_cache_quant_algo == "FP8"  # SGLang's reading, whoever wrote it
    assert quant.modelopt_unclaimed is unclaimed
