"""MiMo-V2.5-Pro on SGLang 0.5.23 (held-out wave 5, block FP8): models/mimo_v2.py's MiMoV2Attention builds its
RadixAttention with the quant config, so Fp8Config's BaseKVCacheMethod adds k_scale and v_scale (fp32 scalars) on
each of the 70 layers, full and sliding.

Engine figures: SGLang 0.5.23's meta build with a local `mimo_v2` config stand-in (the checkpoint's own
configuration class; not yet in the harness), `registry_sweep.py --engine sglang --params
XiaomiMiMo--MiMo-V2.5-Pro --tps 1`: `model.layers.N.self_attn.attn.k_scale` and `v_scale` [] float32 × 70 (280 B
each), total 1,030,905,849,392 B at TP 1 (model 1,029,030,995,504 + lm_head 1,874,853,888) and 515,779,427,120 B a
rank at TP 2 (514,842,000,176 + 937,426,944). Without the scales kvtop was 560 B short at both.
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.data_paths import DATA

CONFIG = DATA / "configs" / "heldout" / "wave5" / "XiaomiMiMo--MiMo-V2.5-Pro.json"
SGLANG = ResolvedVersion(text="0.5.23", source=VersionSource.FLAG)
BEFORE = ResolvedVersion(text="0.5.6.post2", source=VersionSource.FLAG)
FP32 = 4


def sglang_bytes(m: ModelSpec, tp: int, version: ResolvedVersion = SGLANG) -> int:
    rules = engine_rules("sglang")
    layout, layers = ParallelLayout(tp=tp), range(m.num_layers)
    parts = rules.stage_parts(m, 0, 1, version)
    book = weights_book(m, layout, layers, first_stage=True, last_stage=True, parts=parts)
    return sum(r.bytes for r in (*book.rows, *rules.weights_built(m, layout, layers, "H100", version)))


@pytest.mark.parametrize(("tp", "engine_bytes"), [(1, 1_030_905_849_392), (2, 515_779_427_120)])
def test_sglang_builds_mimo_v2_5_pro_with_kv_scales(tp: int, engine_bytes: int) -> None:
    m = model_from_config(json.loads(CONFIG.read_text()), source=CONFIG.stem)
    assert (m.architecture, m.num_layers, m.quant.scheme) == ("MiMoV2ForCausalLM", 70, "fp8")
    assert sglang_bytes(m, tp) == engine_bytes


def test_the_scales_are_the_560_bytes() -> None:
    """Releases before 0.5.23 are not checked (the book's count without them stands): the difference is the scales."""
    m = model_from_config(json.loads(CONFIG.read_text()), source=CONFIG.stem)
    assert sglang_bytes(m, 1) - sglang_bytes(m, 1, BEFORE) == 70 * 2 * FP32
