"""KDA read from the family's description, not a list of classes in SGLang's code, and the state-per-request book
checked against SGLang's own arithmetic.

- SGLang's `uses_kda_attention` (0.5.20 configs/model_config.py:183-205, 0.5.23 :230) asks the config whether
  `linear_attn_config.kda_layers` is listed; the kimi_linear family's state rule records it
  (StateSpec.kda_layers_listed), which prefill_graphs_off reads. Ling-3 (BailingMoeV3, KDA too) lists none, so its
  breakable prefill graphs stay: at TP 4 on an H200, context 8,192, 512 + 12,288 + 512 + 2 × 512 = 14,336 MiB, + 1,536
  for MLA prefill graphs = 15,872 → round(127,899 / 143,771, 3) = 0.890; Kimi-Linear from 0.5.20: 14,336 → 0.900.
- The state a request holds per KDA layer (0.5.23 configs/mamba_utils.py:324-367 `KimiLinearStateShape.create`,
  `KimiLinearConfig.mamba2_cache_params` configs/kimi_linear.py:173-181): conv (kernel − 1) × (heads × head_dim ÷ TP
  + 2 × heads × head_dim ÷ TP) in the conv dtype (bf16), temporal heads ÷ TP × head_dim × head_dim in float32 (the
  default --mamba-ssm-dtype). Kimi-Linear-48B's linear_attn_config: 32 heads of 128, kernel 4.
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.kv_state import state_bytes_per_request
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA
from tests.engines.sglang.automatic_fraction import automatic_fraction

KIMI_LINEAR = "heldout/wave5/moonshotai--Kimi-Linear-48B-A3B-Instruct.json"
LING3 = "recon/recon--inclusionAI--Ling-3.0-tiny.json"  # BailingMoeV3ForCausalLM: KDA with no kda_layers list


@pytest.mark.parametrize("version", ["0.5.20", "0.5.23"])
def test_kda_is_read_from_the_config_as_sglang_reads_it(version: str) -> None:
    assert automatic_fraction(KIMI_LINEAR, version, ["--tp", "4"])[0] == 0.900
    fraction, source = automatic_fraction(LING3, version, ["--tp", "4"])
    assert fraction == 0.890
    assert "1536 MiB of it prefill graphs" in source


@pytest.mark.parametrize("tp", [1, 2, 4])
def test_kda_state_per_request_is_sglangs_shape(tp: int) -> None:
    path = DATA / "configs" / KIMI_LINEAR
    model = model_from_config(json.loads(path.read_text()), source=path.name)
    heads, head_dim, kernel = 32, 128, 4
    conv = (kernel - 1) * (heads * head_dim // tp + 2 * heads * head_dim // tp) * 2
    temporal = heads // tp * head_dim * head_dim * 4
    assert state_bytes_per_request(model, ParallelLayout(tp=tp), 4) == conv + temporal  # 2,170,880 B at TP 1
