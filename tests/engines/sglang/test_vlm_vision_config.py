"""SGLang's VLM fraction factor reads `hf_config.vision_config` only (docs/engines/sglang.md §5): a config class that
keeps config.json's vision section under another attribute gets no factor (multimodal.VISION_CONFIG_ELSEWHERE_ERAS).

Expected figures: SGLang's own arithmetic by hand. 0.5.23 arg_groups/memory_hook.py (and 0.5.6.post2
server_args.py ServerArgs.adjust_mem_fraction_for_vlm) return the fraction unchanged where
`getattr(model_config.hf_config, "vision_config", None)` is None; configs/nano_nemotron_vl.py
NemotronH_Nano_VL_V2_Config stores the section as `raw_vision_config`, configs/qwen3_omni.py Qwen3OmniMoeConfig and
transformers' Qwen2_5OmniConfig under `thinker_config` (both releases' get_config, built from these configs: no
`vision_config` attribute). The other way, LLaVA's own format (`mm_vision_tower`, no vision section, model_type llava):
transformers' LlavaConfig fills in CLIPVisionConfig(hidden_size=1024, num_hidden_layers=24), a factor of 0.95 × 1.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.domain.engines.sglang.multimodal import vlm_factor_vision
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model import ModelSpec, VisionSpec
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA

H100 = 81559 << 20
NEMOTRON_VL = DATA / "engine_diff" / "registry" / "configs" / "NemotronH_Nano_VL_V2.json"
QWEN3_OMNI = DATA / "configs" / "recon" / "Qwen--Qwen3-Omni-30B-A3B-Instruct.RECONSTRUCTED.json"
QWEN2_5_OMNI = DATA / "engine_diff" / "registry" / "configs" / "Qwen2_5OmniForConditionalGeneration.json"
GEMMA3 = DATA / "configs" / "google--gemma-3-27b-it.json"
LLAVA_NEXT = DATA / "configs" / "heldout" / "wave4a" / "liuhaotian--llava-v1.6-vicuna-7b.json"
YI_VL = DATA / "engine_diff" / "registry" / "configs" / "YiVLForCausalLM.json"
# §5 at 0.5.23 on 81,559 MiB: 512 + 1.5 × 8,192 + 2 × 256 (decode graphs) + 1/8 × 1,024 + 58 prefill sizes × 8
# = 13,904 MiB → round((81,559 − 13,904) / 81,559, 3) = round(0.82952, 3) = 0.830 (what a text-only model keeps).
# At 0.5.6.post2: 512 + 1.5 × 8,192 + 2 × 256 + 1/8 × 1,024 = 13,440 → round(0.83521, 3) = 0.835.
AUTO = {"0.5.23": 0.830, "0.5.6.post2": 0.835}


def _model(path: Path) -> ModelSpec:
    return model_from_config(json.loads(path.read_text()), source=path.name)


def _fraction(model: ModelSpec, version: str) -> float:
    settings = parse_flags("sglang", []).model_copy(update={"engine_version": version})
    return predict(model, settings, gpu_total_bytes=H100).engine.memory_fraction


@pytest.mark.parametrize("version", sorted(AUTO))
@pytest.mark.parametrize("path", [NEMOTRON_VL, QWEN3_OMNI, QWEN2_5_OMNI])
def test_a_vision_section_kept_elsewhere_gets_no_factor(path: Path, version: str) -> None:
    """Was 0.830 × 0.95 = 0.7885 for NemotronH_Nano_VL_V2 (its RADIO section states no num_hidden_layers /
    hidden_size, SGLang's defaults 24 × 1024 give a tower term of 1), 0.830 × 0.95 × 0.9576171875 = 0.75508 for
    Qwen3-Omni (27 × 1152: 1 − 0.1 × (27 × 1152² / (24 × 1024²) − 1)) and 0.830 × 0.95 × 0.8 = 0.6308 for Qwen2.5-Omni
    (32 × 3584, the term's floor); SGLang multiplies by none."""
    model = _model(path)
    assert model.multimodal and model.vision is not None  # the section is there, the engine's rule does not see it
    assert _fraction(model, version) == AUTO[version]


def test_the_plan_says_why_there_is_no_factor() -> None:
    version = ResolvedVersion(text="0.5.23", source=VersionSource.FLAG)
    vision, why = vlm_factor_vision(_model(NEMOTRON_VL), version)
    assert vision is None and "raw_vision_config" in why
    settings = parse_flags("sglang", []).model_copy(update={"engine_version": "0.5.23"})
    ledger = predict(_model(QWEN3_OMNI), settings, gpu_total_bytes=H100)
    assert any("thinker_config.vision_config" in step.note for step in ledger.engine.steps)


def test_a_vision_config_the_class_keeps_still_gets_its_factor() -> None:
    """Gemma-3 (Gemma3Config.vision_config, a SiglipVisionConfig: 27 layers of 1152) keeps 0.830 × 0.95 × 0.9576171875."""
    model = _model(GEMMA3)
    version = ResolvedVersion(text="0.5.23", source=VersionSource.FLAG)
    assert vlm_factor_vision(model, version) == (VisionSpec(num_layers=27, hidden_size=1152), "")
    settings = parse_flags("sglang", ["--enable-multimodal"]).model_copy(update={"engine_version": "0.5.23"})
    fraction = predict(model, settings, gpu_total_bytes=H100).engine.memory_fraction
    assert fraction == pytest.approx(0.830 * 0.95 * 0.9576171875, abs=1e-12)


@pytest.mark.parametrize(("path", "version", "fraction"), [
    (LLAVA_NEXT, "0.5.23", 0.830 * 0.95), (LLAVA_NEXT, "0.5.6.post2", 0.835 * 0.95),  # was 0.830, 0.835
    (YI_VL, "0.5.23", 0.830 * 0.95),  # multimodal to SGLang from 0.5.23's has_multimodal_subconfig only
    (YI_VL, "0.5.6.post2", 0.835),  # not in 0.5.6.post2's multimodal_model_archs: no VLM rule at all
])  # fmt: skip
def test_llava_format_takes_the_vision_config_llavaconfig_fills_in(path: Path, version: str, fraction: float) -> None:
    """24 × 1024² / (24 × 1024²) = 1: the factor is 0.95 alone (kvtop read no vision section here before)."""
    model = _model(path)
    assert model.vision is None
    assert _fraction(model, version) == pytest.approx(fraction, abs=1e-12)


QWEN25_VL = DATA / "configs" / "heldout" / "Qwen--Qwen2.5-VL-7B-Instruct.json"
QWEN3_VL = DATA / "configs" / "heldout" / "Qwen--Qwen3-VL-8B-Instruct.json"


@pytest.mark.parametrize(("path", "version", "tower"), [
    # 24 × 1280² / (24 × 1024²) = 1.5625: 1 − 0.1 × 0.5625 = 0.94375 (kvtop read depth 32 before: 0.89167)
    (QWEN25_VL, "0.5.23", 0.94375), (QWEN25_VL, "0.5.6.post2", 0.94375),
    # 24 × 1152² / (24 × 1024²) = 1.265625: 1 − 0.1 × 0.265625 = 0.9734375 (depth 27 before: 0.9576171875)
    (QWEN3_VL, "0.5.23", 0.9734375),
])  # fmt: skip
def test_a_vision_section_naming_its_depth_depth_gives_sglangs_24_layers(
    path: Path, version: str, tower: float
) -> None:
    """SGLang reads `getattr(vision_config, "num_hidden_layers", 24)` (0.5.23 memory_hook.py:440, 0.5.6.post2
    server_args.py:4412); transformers' Qwen2_5_VLVisionConfig and Qwen3VLVisionConfig (4.57.1 and 5.19.0, built from
    these configs) have `depth` and no num_hidden_layers, so the term is 24 layers of the section's hidden_size."""
    model = _model(path)
    assert model.vision is not None and model.vision.num_layers == 24
    assert _fraction(model, version) == pytest.approx(AUTO[version] * 0.95 * tower, abs=1e-12)
