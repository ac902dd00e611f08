"""Wave-5 real configs the harness could not build before its stand-ins (issue 26), now built by the engines on the
meta device and judged against kvtop.

MiMo-V2.5 / MiMo-V2.5-Pro (tests/data/configs/heldout/wave5): model_type `mimo_v2` is the checkpoint's own
configuration class (configuration_mimo_v2.py); checkpoint_configs.py's `mimo_v2` stand-in takes the config.json's
fields as that class does. Before, every row said "contains custom code" (could not build).

Engine figures: tests/data/engine_diff/registry/<engine>-<version>.json, written by `registry_sweep.py --engine
<engine> --set real --only <config>` (meta build, TP 1 and 2). The pinned bytes are those meta builds' parameter
bytes; the verdict is registry_judge's comparison of kvtop's plan with them (weights per rank and KV per token).
"""

from __future__ import annotations

import pytest

from benchmarks.engine_diff.registry_judge import PART_NOT_MODELLED, judge
from benchmarks.engine_diff.registry_sweep import row_of

VERSIONS = {"vllm": "0.33.0", "sglang": "0.5.23"}


def _row(engine: str, config: str, tp: int) -> dict:
    return row_of(engine, VERSIONS[engine], config, tp)


# Parameter bytes of each meta build (sum over its top-level children), TP 1 and TP 2.
MIMO_V2_5_PRO = {
    "vllm": {1: 1_031_126_104_112, 2: 515_889_554_480},  # model + lm_head
    "sglang": {1: 1_030_905_849_392, 2: 515_779_427_120},  # model + lm_head (k/v scales on every attention)
}


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
@pytest.mark.parametrize("tp", [1, 2])
def test_mimo_v2_5_pro_builds_with_its_config_stand_in_and_kvtop_plans_it_equal(engine: str, tp: int) -> None:
    row = _row(engine, "XiaomiMiMo--MiMo-V2.5-Pro", tp)
    assert row["status"] == "ok"
    assert sum(row["stages"][0]["param_bytes"].values()) == MIMO_V2_5_PRO[engine][tp]
    assert judge(engine, VERSIONS[engine], row).verdict == "equal"


@pytest.mark.parametrize("tp", [1, 2])
def test_mimo_v2_5_is_equal_on_vllm_towers_included_its_audio_tokenizer_named(tp: int) -> None:
    """MiMo-V2.5 holds audio and vision sections: vLLM builds audio_encoder and visual beside the language model
    (TP 1: 833,419,264 + 1,457,188,864 B of towers), which kvtop plans since towers_mimo.py (its config, and the same
    config naming MiMoV2OmniForCausalLM, the class vLLM serves it as). The audio tokenizer vLLM loads from the
    checkpoint's audio_tokenizer/ folder (absent from a config folder: built on neither side) is named "not modelled"
    by kvtop, so the row is PART_NOT_MODELLED (session 47), not plain equal."""
    for config in ("XiaomiMiMo--MiMo-V2.5", "XiaomiMiMo--MiMo-V2.5-Omni-class.RECONSTRUCTED"):
        row = _row("vllm", config, tp)
        assert row["status"] == "ok"
        assert set(row["stages"][0]["param_bytes"]) == {"audio_encoder", "language_model", "visual"}
        judged = judge("vllm", "0.33.0", row)
        assert judged.verdict == PART_NOT_MODELLED and "MiMo audio tokenizer" in judged.detail


@pytest.mark.parametrize("tp", [1, 2])
def test_sglang_mimo_v2_5_needs_the_checkpoints_audio_tokenizer_files(tp: int) -> None:
    """SGLang 0.5.23 mimo_audio.py build_audio_encoder opens <model>/audio_tokenizer/config.json and its weights,
    which a config folder lacks: a harness limit (could not build), not the engine's refusal."""
    row = _row("sglang", "XiaomiMiMo--MiMo-V2.5", tp)
    assert row["status"] == "harness-error"
    assert "audio_tokenizer/config.json" in row["message"]


def _counted(row: dict) -> dict[str, int]:
    return row["stages"][0]["param_bytes"]


@pytest.mark.parametrize("tp", [1, 2])
def test_vllm_builds_kimi_k2_6_without_its_image_processor_and_kvtop_plans_it_equal(tp: int) -> None:
    """vLLM 0.33.0 kimi_k25.py KimiK25ProcessingInfo.__init__ loads the image processor a config folder lacks
    (vllm_input_standins.PROCESSOR_FREE_INFOS builds it bare: ModelConfig reads only its constant mm limits). Its language
    model equals SGLang 0.5.23's independent meta build (594,205,536,256 B at TP 1), and its MLA cache holds
    61 layers of one 576-wide latent in bf16 a token: 61 x 576 x 2 = 70,272 B, SGLang's cell size."""
    row = _row("vllm", "moonshotai--Kimi-K2.6", tp)
    assert row["status"] == "ok"
    sglang = _row("sglang", "moonshotai--Kimi-K2.6", tp)
    assert _counted(row)["language_model"] == _counted(sglang)["language_model"]
    (spec,) = row["stages"][0]["layer_specs"]
    assert (
        spec["layers"] * spec["page_size_bytes"] // spec["block_size"] == sglang["cell_size"] == 61 * 576 * 2
    )
    assert judge("vllm", "0.33.0", row).verdict == "equal"


@pytest.mark.parametrize("tp", [1, 2])
def test_vllm_builds_deepseek_ocr_without_a_tokenizer_and_kvtop_plans_it_equal(tp: int) -> None:
    """vLLM 0.33.0 deepseek_ocr.py DeepseekOCRForCausalLM.__init__ reads tokenizer.vocab["<image>"], which
    `--skip-tokenizer-init` leaves out (vllm_input_standins.TOKEN_ID_TOKENIZER_MODULES: a vocabulary answering id 0, used
    only at run time). Its language model equals SGLang 0.5.23's independent meta build (5,869,468,160 B at TP 1),
    as do its SAM and CLIP towers at TP 1; its cache holds 12 layers of 10 KV heads x 128 (K and V) in bf16 a token:
    12 x 10 x 128 x 2 x 2 = 61,440 B, SGLang's cell size."""
    row = _row("vllm", "deepseek-ai--DeepSeek-OCR", tp)
    assert row["status"] == "ok"
    sglang = _row("sglang", "deepseek-ai--DeepSeek-OCR", tp)
    assert _counted(row)["language_model"] == _counted(sglang)["model"]
    assert _counted(row)["sam_model"] == _counted(sglang)["sam_model"]
    if tp == 1:
        assert _counted(row)["vision_model"] == _counted(sglang)["vision_model"]
    (spec,) = row["stages"][0]["layer_specs"]
    per_token = spec["layers"] * spec["page_size_bytes"] // spec["block_size"]
    assert per_token == sglang["cell_size"] == 12 * (10 // tp) * 128 * 2 * 2  # KV heads split over TP
    assert judge("vllm", "0.33.0", row).verdict == "equal"
