"""The Ling / Ling 2.0 entry (model_type bailing_moe) against the engines' own classes.

Expected figures are the arithmetic of the parameter shapes vLLM 0.33.0 and SGLang 0.5.23 build on the meta device
(models/bailing_moe.py, both) for tests/data/configs/recon/recon--inclusionAI--Ling-mini-2.0.json (Ling-mini-2.0
rebuilt from its published sizes, SOURCES.md there), and the totals the registry sweep recorded for it
(tests/data/engine_diff/registry/{vllm-0.33.0,sglang-0.5.23}.json): SGLang 32,511,296,512 B at TP 1 and
16,265,708,544 B at TP 2; vLLM 10,240 B more on each (its q/k LayerNorm biases).
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.data_paths import DATA

LING_MINI = DATA / "configs" / "recon" / "recon--inclusionAI--Ling-mini-2.0.json"
BF16, FP32 = 2, 4
VLLM_0_33 = ResolvedVersion(text="0.33.0", source=VersionSource.FLAG)


def ling_mini(**changes: object) -> dict[str, object]:
    return {**json.loads(LING_MINI.read_text()), **changes}


def test_ling_mini_2_book_is_the_engines_build() -> None:
    """TP 1, bfloat16: word_embeddings and lm_head [157184, 2048] (untied); each of 20 layers query_key_value
    [(16 + 2 × 4) × 128, 2048], dense [2048, 2048], two norms [2048], query/key_layernorm [128]; layer 0 a dense MLP
    (gate_up [2 × 5120, 2048], down [2048, 5120]); layers 1-19 gate [256, 2048], expert_bias [256] in float32,
    experts w13 [256, 2 × 512, 2048] and w2 [256, 2048, 512], one shared expert (gate_up [2 × 512, 2048], down
    [2048, 512]); the final norm [2048]."""
    vocab, hidden = 157184, 2048
    attention = 3072 * hidden + hidden * hidden + 2 * hidden + 2 * 128
    dense = 2 * 5120 * hidden + hidden * 5120
    moe = 256 * hidden + 256 * 2 * 512 * hidden + 256 * hidden * 512 + 2 * 512 * hidden + hidden * 512
    expected = (2 * vocab * hidden + 20 * attention + dense + 19 * moe + hidden) * BF16 + 19 * 256 * FP32
    assert expected == 32_511_296_512
    m = model_from_config(ling_mini(), source="Ling-mini-2.0")
    assert m.moe is not None and m.moe.router_bias and m.moe.shared_intermediate_size == 512
    for tp, total in ((1, expected), (2, 16_265_708_544)):
        book = weights_book(m, ParallelLayout(tp=tp), range(m.num_layers), first_stage=True, last_stage=True)
        assert book.total_bytes == total


def test_vllm_builds_layernorm_qk_norms_unless_use_rmsnorm() -> None:
    """vLLM's BailingAttention: nn.LayerNorm(head_dim) where use_rmsnorm is unstated, so a bias [128] beside each
    of q and k norms' weight on 20 layers: 20 × 2 × 128 × 2 B = 10,240 B, whole on every rank (the sweep's vLLM
    totals, 32,511,306,752 B at TP 1 and 16,265,718,784 B at TP 2, are SGLang's plus this)."""
    rules = engine_rules("vllm")
    m = model_from_config(ling_mini(), source="Ling-mini-2.0")
    for tp in (1, 2):
        rows = rules.weights_built(m, ParallelLayout(tp=tp), range(20), "H100", VLLM_0_33)
        assert sum(r.bytes for r in rows) == 20 * 2 * 128 * BF16 == 10_240
    rms = model_from_config(ling_mini(use_rmsnorm=True), source="Ling-mini-2.0")
    assert rules.weights_built(rms, ParallelLayout(), range(20), "H100", VLLM_0_33) == ()


@pytest.mark.parametrize("field", ["use_bias", "moe_shared_expert_intermediate_size"])
def test_what_the_entry_does_not_read_is_refused_by_name(field: str) -> None:
    value: object = True if field == "use_bias" else 1024
    with pytest.raises(UnsupportedModelError) as err:
        model_from_config(ling_mini(**{field: value}), source="Ling-mini-2.0")
    assert field in str(err.value)
