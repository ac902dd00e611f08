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

from kvtop.domain.engines.sglang.eras import vit_size_factor
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
# §5 on 81,559 MiB: 512 + 1.5 × 8,192 + 2 × 256 (decode graphs) + 1/8 × 1,024 = 13,440 MiB → round(0.83521, 3) = 0.835,
# at 0.5.6.post2 (no prefill graphs yet) and at 0.5.23 too: a multimodal class on neither allowlist has its prefill
# graphs turned off before the reserve is sized (arg_groups/cuda_graph_hook.py:231, resolution_hooks.py:44 before :52),
# so no 58 prefill sizes × 8 MiB (a text-only model's 13,904 MiB → 0.830; prefill_graphs_off.py)
AUTO = {"0.5.23": 0.835, "0.5.6.post2": 0.835}


def _model(path: Path) -> ModelSpec:
    return model_from_config(json.loads(path.read_text()), source=path.name)


def _fraction(model: ModelSpec, version: str) -> float:
    settings = parse_flags("sglang", []).model_copy(update={"engine_version": version})
    return predict(model, settings, gpu_total_bytes=H100).engine.memory_fraction


@pytest.mark.parametrize("version", sorted(AUTO))
@pytest.mark.parametrize("path", [NEMOTRON_VL, QWEN3_OMNI, QWEN2_5_OMNI])
def test_a_vision_section_kept_elsewhere_gets_no_factor(path: Path, version: str) -> None:
    """Was 0.835 × 0.95 = 0.79325 for NemotronH_Nano_VL_V2 (its RADIO section states no num_hidden_layers /
    hidden_size, SGLang's defaults 24 × 1024 give a tower term of 1), 0.835 × 0.95 × 0.9576171875 = 0.75965 for
    Qwen3-Omni (27 × 1152: 1 − 0.1 × (27 × 1152² / (24 × 1024²) − 1)) and 0.835 × 0.95 × 0.8 = 0.6346 for Qwen2.5-Omni
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
    """Gemma-3 (Gemma3Config.vision_config, a SiglipVisionConfig: 27 layers of 1152) keeps 0.835 × 0.95 × 0.9576171875 (prefill graphs off: AUTO)."""
    model = _model(GEMMA3)
    version = ResolvedVersion(text="0.5.23", source=VersionSource.FLAG)
    assert vlm_factor_vision(model, version) == (VisionSpec(num_layers=27, hidden_size=1152), "")
    settings = parse_flags("sglang", ["--enable-multimodal"]).model_copy(update={"engine_version": "0.5.23"})
    fraction = predict(model, settings, gpu_total_bytes=H100).engine.memory_fraction
    assert fraction == pytest.approx(0.835 * 0.95 * 0.9576171875, abs=1e-12)


@pytest.mark.parametrize(("path", "version", "fraction"), [
    (LLAVA_NEXT, "0.5.23", 0.835 * 0.95), (LLAVA_NEXT, "0.5.6.post2", 0.835 * 0.95),  # was 0.830, 0.835
    (YI_VL, "0.5.23", 0.835 * 0.95),  # multimodal to SGLang from 0.5.23's has_multimodal_subconfig only
    (YI_VL, "0.5.6.post2", 0.835),  # not in 0.5.6.post2's multimodal_model_archs: no VLM rule at all
])  # fmt: skip
def test_llava_format_takes_the_vision_config_llavaconfig_fills_in(path: Path, version: str, fraction: float) -> None:
    """24 × 1024² / (24 × 1024²) = 1: the factor is 0.95 alone (kvtop read no vision section here before)."""
    model = _model(path)
    assert model.vision is None
    assert _fraction(model, version) == pytest.approx(fraction, abs=1e-12)


# --- the tower size the factor reads: the attributes of SGLang's config object, not kvtop's tower reading ---
# Expected readings: each release's own get_config (SGLang 0.5.6.post2 and 0.5.23 harness venvs) run over these files,
# then getattr(hf_config.vision_config, "num_hidden_layers", 24) and getattr(..., "hidden_size", 1024), as
# adjust_mem_fraction_for_vlm reads them; the class sources say why.
HELDOUT = DATA / "configs" / "heldout"
QWEN2_5_VL = HELDOUT / "Qwen--Qwen2.5-VL-7B-Instruct.json"
KIMI_K2_5 = HELDOUT / "moonshotai--Kimi-K2.5.json"
V0523 = ResolvedVersion(text="0.5.23", source=VersionSource.FLAG)


@pytest.mark.parametrize(("path", "read"), [
    # transformers' Qwen2_5_VLVisionConfig / Qwen3VLVisionConfig / Qwen3_5VisionConfig keep the count as `depth`: no
    # num_hidden_layers attribute, SGLang's 24 (kvtop's tower reading: 32, 27, 27)
    (QWEN2_5_VL, (24, 1280)),
    (HELDOUT / "Qwen--Qwen3-VL-8B-Instruct.json", (24, 1152)),
    (HELDOUT / "Qwen--Qwen3.5-27B.json", (24, 1152)),
    # configs/kimi_k25.py KimiK25VisionConfig(**vision_config): the section's vt_* keys stay vt_* attributes, so
    # num_hidden_layers and hidden_size are the class defaults 27 and 1152 (kvtop's tower reading: 24 × 1024)
    (KIMI_K2_5, (27, 1152)),
    # configs/kimi_k3.py KimiK3VisionConfig: num_hidden_layers = vt_num_hidden_layers (27), hidden_size = vt_hidden_size
    (HELDOUT / "moonshotai--Kimi-K3.json", (27, 1024)),
    # MiMoV2Config keeps vision_config a dict: getattr(dict, …) finds neither (kvtop's tower reading: 28 × 1280)
    (HELDOUT / "wave5" / "XiaomiMiMo--MiMo-V2.5.json", (24, 1024)),
    # no vision_config: Llama4Config fills in Llama4VisionConfig(), whose num_hidden_layers is 34 and hidden_size 768
    (DATA / "engine_diff" / "configs" / "meta-llama--Llama-4-Maverick-17B-128E-Instruct.json", (34, 768)),
    (GEMMA3, (27, 1152)),  # SiglipVisionConfig: num_hidden_layers and hidden_size stated, read as they are
])  # fmt: skip
def test_the_factor_reads_the_attributes_sglangs_config_object_gives(path: Path, read: tuple[int, int]) -> None:
    vision, _ = vlm_factor_vision(_model(path), V0523)
    assert vision is not None and (vision.num_layers, vision.hidden_size) == read


@pytest.mark.parametrize("version", sorted(AUTO))
def test_qwen2_5_vl_takes_sglangs_24_layers(version: str) -> None:
    """Qwen2.5-VL-7B (depth 32, hidden_size 1280): 24 × 1280² / (24 × 1024²) = 1.5625, 1 − 0.1 × 0.5625 = 0.94375,
    × 0.95 = 0.8965625 (was 32 layers: 32 × 1280² / (24 × 1024²) = 2.0833…, 1 − 0.10833… = 0.891666…, × 0.95 =
    0.847083…). At 0.5.23 on 81,559 MiB: 0.835 × 0.8965625 = 0.74862969 (prefill graphs off: AUTO)."""
    assert _fraction(_model(QWEN2_5_VL), version) == pytest.approx(AUTO[version] * 0.95 * 0.94375, abs=1e-12)
    assert AUTO[version] * 0.95 * 0.94375 == pytest.approx(AUTO[version] * 0.8965625, abs=1e-12)


def test_the_plan_says_what_sglang_reads() -> None:
    settings = parse_flags("sglang", []).model_copy(update={"engine_version": "0.5.23"})
    notes = " ".join(step.note for step in predict(_model(QWEN2_5_VL), settings, gpu_total_bytes=H100).engine.steps)
    assert "24 layers of width 1280" in notes and "no num_hidden_layers" in notes and "32 × 1280" in notes


def test_kimi_k2_5_factor_is_the_logged_one() -> None:
    """docs/engines/sglang.md §5's logged start (Kimi-K2.5, MI355X, TP 8): mem_fraction_static 0.8260405859375
    = 0.908 × 0.95 × 0.9576171875, and 1 − 0.1 × (27 × 1152² / (24 × 1024²) − 1) = 0.9576171875: the class defaults'
    27 × 1152 (kvtop read 24 × 1024 before: a term of 1, 0.8626)."""
    vision, _ = vlm_factor_vision(_model(KIMI_K2_5), V0523)
    assert vision is not None and vit_size_factor(vision) == 0.9576171875
    assert 0.908 * 0.95 * vit_size_factor(vision) == pytest.approx(0.8260405859375, abs=1e-12)
