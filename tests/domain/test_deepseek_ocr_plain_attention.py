"""DeepSeek-OCR (held-out wave 5): its language_config says `use_mla: false` with the latent dims 0, a config a
checkpoint really has, which kvtop refused ("qk_rope_head_dim: must be at least 1"). SGLang 0.5.23 builds it as
DeepseekForCausalLM (models/deepseek_ocr.py: `elif not self.text_config.use_mla`), plain attention of 10 heads ×
128. Expected figures: SGLang 0.5.23's meta build at TP 1 and 2 (the registry sweep's rows: `model`
5,869,468,160 / 2,935,667,200 B, KV cell 61,440 / 30,720 B a token), summed by hand below.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.errors import InputError
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import AttentionKind, ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book

CONFIG = (
    Path(__file__).resolve().parents[1]
    / "data"
    / "configs"
    / "heldout"
    / "wave5"
    / "deepseek-ai--DeepSeek-OCR.json"
)
SGLANG = ResolvedVersion(text="0.5.23", source=VersionSource.FLAG)
BF16 = 2


def model(config: dict[str, object] | None = None) -> ModelSpec:
    return model_from_config(config or json.loads(CONFIG.read_text()), source=CONFIG.stem)


def language_bytes(m: ModelSpec, tp: int) -> int:
    rules = engine_rules("sglang")
    layout, layers = ParallelLayout(tp=tp), range(m.num_layers)
    book = weights_book(m, layout, layers, first_stage=True, last_stage=True,
                        tower_split=rules.architectures.TOWER_SPLIT, parts=rules.stage_parts(m, 0, 1, SGLANG))  # fmt: skip
    rows = (*book.rows, *rules.weights_built(m, layout, layers, "H100", SGLANG))
    return sum(r.bytes for r in rows if r.component != "vision")


def test_deepseek_ocr_attends_plainly() -> None:
    m = model()
    assert m.mla is None and m.attention_kind is AttentionKind.MHA
    assert (m.num_attention_heads, m.num_kv_heads, m.head_dim) == (10, 10, 128)


@pytest.mark.parametrize(("tp", "engine_bytes"), [(1, 5_869_468_160), (2, 2_935_667_200)])
def test_sglang_builds_deepseek_ocrs_language_model(tp: int, engine_bytes: int) -> None:
    """embed_tokens and lm_head [129280, 1280] (split over TP); 12 layers of q/k/v/o [1280, 1280]; layer 0 a dense
    MLP of 6,848; 11 MoE layers of 64 experts × 3 × [896, 1280], two shared experts (3 × [1792, 1280]) and a
    [64, 1280] gate; two norms a layer and the final one: all bf16."""
    vocab = 2 * 129280 * 1280 // tp
    attention = 12 * 4 * 1280 * 1280 // tp
    dense = 3 * 6848 * 1280 // tp
    moe = 11 * (64 * 3 * 896 * 1280 // tp + 3 * 1792 * 1280 // tp + 64 * 1280)
    norms = 12 * 2 * 1280 + 1280
    assert (vocab + attention + dense + moe + norms) * BF16 == engine_bytes
    assert language_bytes(model(), tp) == engine_bytes


def test_latent_attention_still_needs_its_dims() -> None:
    config = json.loads(CONFIG.read_text())
    config["language_config"] = {**config["language_config"], "use_mla": True, "kv_lora_rank": 512}
    with pytest.raises(InputError, match="must be at least 1 for latent attention"):
        model(config)
