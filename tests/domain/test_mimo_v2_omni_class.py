"""MiMoV2OmniForCausalLM planned through the mimo_v2_flash entry and MiMo-V2.5's towers (towers_mimo.py), and the
TP above which vLLM 0.33.0 cannot split its vision attention.

The class's config (tests/data/configs/recon/XiaomiMiMo--MiMo-V2.5-Omni-class.RECONSTRUCTED.json: MiMo-V2.5's
config.json naming the class, as vLLM's MimoV2ModelArchConfigConvertor renames it) built by vLLM 0.33.0 on the
meta device in the registry sweep (tests/data/engine_diff/registry/vllm-0.33.0.json): language_model
311,871,696,128 B, visual 1,457,188,864 B, audio_encoder 833,419,264 B at TP 1; 156,034,835,776 B, 730,705,920 B,
833,419,264 B at TP 2.
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.architectures.coverage import verdict
from kvtop.domain.errors import InputError
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA

OMNI = DATA / "configs" / "recon" / "XiaomiMiMo--MiMo-V2.5-Omni-class.RECONSTRUCTED.json"
BF16 = 2
ENGINE_TOWERS = {1: 1_457_188_864 + 833_419_264, 2: 730_705_920 + 833_419_264}  # visual + audio_encoder, the sweep


def test_the_class_is_planned_by_the_mimo_v2_flash_entry() -> None:
    kind, why = verdict("MiMoV2OmniForCausalLM")
    assert kind == "entry" and "mimo_v2_flash" in why


@pytest.mark.parametrize("tp", [1, 2])
def test_its_towers_are_the_engine_build(tp: int) -> None:
    model = model_from_config(json.loads(OMNI.read_text()), source=OMNI.name)
    assert model.architecture == "MiMoV2OmniForCausalLM" and model.tower is not None
    assert model.tower.params_per_rank(tp) * BF16 == ENGINE_TOWERS[tp]


def plan(tp: int, version: str = "0.33.0") -> Ledger:
    model = model_from_config(json.loads(OMNI.read_text()), source=OMNI.name)
    settings = parse_flags("vllm", ["--tp", str(tp), "--engine-version", version])
    return predict(model, settings, gpu_total_bytes=gpu_total_bytes("H200"), gpu_name="H200")


def test_vllm_cannot_split_the_eight_vision_kv_heads_over_tp_16() -> None:
    """MiMoVisionAttention.__init__ (v0.33.0 mimo_v2_omni.py): divide(num_heads, tp) and divide(num_kv_heads, tp),
    tp the TP size (is_vit_use_data_parallel() is asked without the head count: only --mm-encoder-tp-mode data
    makes it 1). Mimo_VLVisionConfig's 32 heads and 8 KV heads (MiMo-V2.5's vision_config): 32 ÷ 16 = 2, then
    distributed/utils.py ensure_divisibility asserts 8 % 16 == 0: 'AssertionError: 8 is not divisible by 16' (the
    v0.33.0 wheel's divide(8, 16), run)."""
    with pytest.raises(InputError) as refused:
        plan(16)
    message = str(refused.value)
    assert message.startswith("--tp: vLLM 0.33.0 ") and "'8 is not divisible by 16'" in message
    assert plan(8).ranks[0].weights.total_bytes > 0  # 32 ÷ 8 and 8 ÷ 8: built
