"""Launches the engines refuse that kvtop planned (docs/fidelity_registry.md, "engine refuses"): each refusal
against the engine's own recorded answer for the same real config (the registry sweep's rows in
tests/data/engine_diff/registry/, the engine's class built on the meta device by registry_sweep.py)."""

from __future__ import annotations

import json

import pytest

from kvtop.domain.errors import InputError
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS
from tests.data_paths import DATA

REGISTRY = DATA / "engine_diff" / "registry"
H100 = 81559 << 20
SUPER_NVFP4 = CONFIGS / "heldout" / "nvidia--NVIDIA-Nemotron-3-Super-120B-A12B-NVFP4.json"
SUPER_FP8 = CONFIGS / "heldout" / "nvidia--NVIDIA-Nemotron-3-Super-120B-A12B-FP8.json"


def engine_rows(engine: str, version: str, config: str) -> list[dict]:
    rows = json.loads((REGISTRY / f"{engine}-{version}.json").read_text())["rows"]
    return [row for row in rows if row["config"] == config]


def plan(model: ModelSpec, engine: str, version: str, flags: tuple[str, ...] = ()):
    settings = parse_flags(engine, ["--engine-version", version, *flags])
    return predict(model, settings, gpu_total_bytes=H100, gpu_name="H100")


def test_sglang_refuses_a_nested_nvfp4_quant_config_that_states_no_group_size() -> None:
    """AIC's hf_quant_config.json of Nemotron-3-Super-120B-A12B-NVFP4 holds only `quantization: {quant_algo
    NVFP4, kv_cache_quant_algo FP8}`. SGLang 0.5.23 (ModelOptFp4Config.from_config, nested format) reads the
    group size with common_group_size, which raises, re-raised as "Cannot find 'quant_algo' …": the sweep's
    SGLang rows of the config (TP 1 and 2) are that refusal. vLLM 0.33.0 builds it (NVFP4's 16): its rows ok."""
    model = load_model(str(SUPER_NVFP4))
    assert model.quant.method == "nvfp4" and model.quant.nested_group_size_missing
    engine = engine_rows("sglang", "0.5.23", SUPER_NVFP4.stem)
    assert len(engine) == 2 and {row["status"] for row in engine} == {"refused"}
    with pytest.raises(InputError) as refused:
        plan(model, "sglang", "0.5.23")
    assert refused.value.field == "quantization.group_size"
    assert all(row["message"].startswith("Cannot find 'quant_algo'") for row in engine)
    assert "Cannot find 'quant_algo' in the model's quantization config" in str(refused.value)
    assert {row["status"] for row in engine_rows("vllm", "0.33.0", SUPER_NVFP4.stem)} == {"ok"}
    plan(model, "vllm", "0.33.0")  # planned, as vLLM builds it
    # FP8 (ModelOptFp8Config) reads no group size: built by SGLang and planned
    fp8 = load_model(str(SUPER_FP8))
    assert not fp8.quant.nested_group_size_missing
    assert {row["status"] for row in engine_rows("sglang", "0.5.23", SUPER_FP8.stem)} == {"ok"}
    plan(fp8, "sglang", "0.5.23")


@pytest.mark.parametrize(
    ("config", "field", "engine_words"),
    [  # MLC's presets (tests/data/configs/heldout/SOURCES.md): GPT-J with MLC's `rope_scaling: {rope_type: gptj}`;
       # Ministral-3 with MLC's top-level model_type ministral3 (the Hub's: mistral3) over its text_config
       ("mlc--gpt_j", "rope_scaling.rope_type", "Unknown RoPE scaling type gptj"),
       ("mlc--ministral3_3b_2512", "model_type",
        "The text_config extracted from the model config does not have `num_attention_heads` attribute."),
    ],
)  # fmt: skip
def test_vllm_refuses_what_it_cannot_read_in_the_config(config: str, field: str, engine_words: str) -> None:
    """vLLM 0.33.0's rows of these configs (TP 1 and 2) are refusals in these words (get_rope's "Unknown RoPE
    scaling type"; get_hf_text_config's check); kvtop refuses both at 0.33.0 naming the field, and plans them
    under SGLang 0.5.23, which builds GPT-J (its rows ok: SGLang's GPT-J reads no rope type)."""
    engine = engine_rows("vllm", "0.33.0", config)
    assert len(engine) == 2 and {row["status"] for row in engine} == {"refused"}
    assert all(engine_words in row["message"] for row in engine)
    model = load_model(str(CONFIGS / "heldout" / f"{config}.json"))
    with pytest.raises(InputError) as refused:
        plan(model, "vllm", "0.33.0")
    assert refused.value.field == field and engine_words in str(refused.value)
    if config == "mlc--gpt_j":
        assert {row["status"] for row in engine_rows("sglang", "0.5.23", config)} == {"ok"}
        plan(model, "sglang", "0.5.23")


def test_vllm_takes_the_rope_types_of_the_real_configs_it_builds() -> None:
    """Phi-3.5's longrope, Gemma-3's linear, DeepSeek-V3's yarn, Llama-3.2's llama3: vLLM 0.33.0 built each (its
    rows ok), and kvtop plans each."""
    for config in ("mlc--phi-3_5", "google--gemma-3-27b-it", "deepseek-ai--DeepSeek-V3", "mlc--llama3_2_1b"):
        path = next(CONFIGS.rglob(f"{config}.json"))
        model = load_model(str(path))
        assert model.rope_type in ("longrope", "linear", "yarn", "llama3")
        assert {row["status"] for row in engine_rows("vllm", "0.33.0", config)} == {"ok"}, config
        plan(model, "vllm", "0.33.0")


GPTQ = CONFIGS / "quant" / "Qwen--Qwen3-30B-A3B-GPTQ-Int4.json"


@pytest.mark.parametrize(
    ("tp", "extra"),
    [  # SGLang 0.5.23's gptq_marlin tensors beyond the packed weights and scales, 48 layers, from the sweep's
       # `--params` listing (fp16 model): TP 1 qkv g_idx [2048] + qzeros [16, 640], o g_idx [4096] + qzeros
       # [32, 256] (int32); experts w13_qzeros [128, 16, 192] + w2_qzeros [128, 6, 256] (fp16), w13 g_idx and
       # sort indices [128, 2048] ×2, w2's [128, 768] ×2 (int32)
       (1, 48 * (4 * (2048 + 16 * 640 + 4096 + 32 * 256) + 2 * 128 * (16 * 192 + 6 * 256)
                 + 4 * 128 * 2 * (2048 + 768))),
       # TP 2: qkv qzeros [16, 320], o g_idx [2048] + qzeros [16, 256]; experts w13_qzeros [128, 16, 96], w2_qzeros
       # [128, 6, 256], w2 indices [128, 384] ×2, and w2_scales [128, 6, 2048] where the book holds 3 groups
       (2, 48 * (4 * (2048 + 16 * 320 + 2048 + 16 * 256) + 2 * 128 * (16 * 96 + 6 * 256)
                 + 4 * 128 * 2 * (2048 + 384) + 2 * 128 * 3 * 2048)),
    ],
)  # fmt: skip
def test_sglang_builds_gptq_as_gptq_marlin(tp: int, extra: int) -> None:
    """Qwen3-30B-A3B-GPTQ-Int4 (4-bit, group 128, sym, no act order): SGLang 0.5.23 on sm90 converts gptq to
    gptq_marlin and builds it; kvtop's plan holds the class's parameter bytes per rank (the sweep's row)."""
    from kvtop.domain.engines.sglang.gptq_built import gptq_marlin_row
    from kvtop.domain.layout import ParallelLayout

    model = load_model(str(GPTQ))
    row = gptq_marlin_row(model, ParallelLayout(tp=tp), range(model.num_layers))
    assert row is not None and row.bytes == extra
    (engine,) = [r for r in engine_rows("sglang", "0.5.23", GPTQ.stem) if r["tp"] == tp]
    built = sum(engine["stages"][0]["param_bytes"].values())
    ledger = plan(model, "sglang", "0.5.23", ("--tp-size", str(tp)))
    assert ledger.ranks[0].weights_bytes == built


@pytest.mark.parametrize(
    ("change", "gpu", "refused"),
    [  # GPTQMarlinConfig.override_quantization_method run in SGLang 0.5.23's harness venv (sm90 stand-ins; sm75 by
       # get_device_capability): gptq_marlin for the checkpoint as published, 8-bit and group -1, on sm80; None
       # (stays `gptq`, which CUDA's BASE_QUANTIZATION_METHODS lacks) for sym false, 3-bit, group 256, and sm75
       ({}, "H100", False), ({"bits": 8}, "H100", False), ({"group_size": -1}, "H100", False), ({}, "A100", False),
       ({"sym": False}, "H100", True), ({"bits": 3}, "H100", True), ({"group_size": 256}, "H100", True),
       ({}, "T4", True),
    ],
)  # fmt: skip
def test_sglang_refuses_gptq_that_marlin_cannot_take(change: dict, gpu: str, refused: bool) -> None:
    config = json.loads(GPTQ.read_text())
    config["quantization_config"] = {**config["quantization_config"], **change}
    model = model_from_config(config, source=str(GPTQ))
    settings = parse_flags("sglang", ["--engine-version", "0.5.23"])
    if refused:
        with pytest.raises(InputError) as error:
            predict(model, settings, gpu_total_bytes=H100, gpu_name=gpu)
        assert error.value.field == "quantization_config.quant_method"
        assert "Unknown quantization method: gptq" in str(error.value)
    else:
        predict(model, settings, gpu_total_bytes=H100, gpu_name=gpu)
    # 0.5.6.post2 registers GPTQConfig for `gptq` (layers/quantization/__init__.py): served either way
    older = parse_flags("sglang", ["--engine-version", "0.5.6.post2"])
    predict(model, older, gpu_total_bytes=H100, gpu_name=gpu)


@pytest.mark.parametrize("cls", ["GraniteSWAForCausalLM", "GraniteMoeSWAForCausalLM", "MellumForCausalLM"])
def test_sglang_refuses_a_hybrid_swa_class_without_a_sliding_layer(cls: str) -> None:
    """SGLang 0.5.23 takes these classes as hybrid SWA (is_hybrid_swa_model); their transformers-default configs
    give no sliding_attention layer, and HybridSWAPoolConfigurator asserts: the sweep's rows are that refusal."""
    engine = engine_rows("sglang", "0.5.23", f"default--{cls}")
    assert len(engine) == 2 and all(row["message"].startswith("Hybrid SWA model must have at least one SWA layer")
                                    for row in engine)  # fmt: skip
    model = load_model(str(REGISTRY / "configs" / f"{cls}.json"))
    with pytest.raises(InputError) as refused:
        plan(model, "sglang", "0.5.23")
    assert refused.value.field == "layer_types"
    assert "Hybrid SWA model must have at least one SWA layer" in str(refused.value)
    plan(model, "sglang", "0.5.23", ("--disable-hybrid-swa-memory",))  # one full pool: no assertion


def test_gpt_oss_keeps_its_sliding_layers_and_is_planned() -> None:
    gpt_oss = load_model(str(CONFIGS / "openai--gpt-oss-20b.json"))
    assert {row["status"] for row in engine_rows("sglang", "0.5.23", "openai--gpt-oss-20b")} == {"ok"}
    plan(gpt_oss, "sglang", "0.5.23")
