"""LongCat-Flash-Lite (LongcatFlashNgramForCausalLM): LongCat-Flash's FlashModel with n-gram embedders beside the
token embedding (vLLM 0.33.0 models/longcat_flash_ngram.py NgramEmbedding). Expected bytes by hand from that file;
the registry sweep's vLLM meta build of the same config (tests/data/engine_diff/registry/vllm-0.33.0.json, rows
recon--meituan-longcat--LongCat-Flash-Lite) holds the same totals."""

from __future__ import annotations

import json
import math

import pytest

from kvtop.domain.engines.vllm import VllmRules
from kvtop.domain.kv import kv_book
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.conftest import CONFIGS

LITE = "recon--meituan-longcat--LongCat-Flash-Lite"
NGRAM_FIELDS = ("ngram_vocab_size_ratio", "emb_neighbor_num", "emb_split_num")


def lite(ngram: bool = True) -> ModelSpec:
    config = json.loads((CONFIGS / "recon" / f"{LITE}.json").read_text())
    if not ngram:
        config = {k: v for k, v in config.items() if k not in NGRAM_FIELDS}
    return model_from_config(config, source=LITE)


def weights(model: ModelSpec, tp: int) -> int:
    book = weights_book(model, ParallelLayout(tp=tp), range(model.num_layers), first_stage=True, last_stage=True)
    return book.total_bytes


@pytest.mark.parametrize(
    ("tp", "engine"), [(1, 805_306_368 + 136_352_689_152), (2, 402_653_184 + 68_400_720_896)]
)
def test_lite_ngram_tables_by_hand_and_the_meta_build(tp: int, engine: int) -> None:
    """NgramEmbedding._init_ngram_embeddings (lines 72-95): k × (n − 1) = 4 × 3 = 12 tables, table i of
    int(78 × 131,072 + 2i + 1) rows, hidden 3,072 ÷ 12 = 256 wide, concatenated into one VocabParallelEmbedding
    (rows padded to 64, then split over TP), and oe_projection [12, 256, 3,072], an nn.Parameter whole on every
    rank; bf16. The rest is LongCat-Flash's (the same config without the n-gram fields). The engine's meta build,
    lm_head + model: the registry rows."""
    m = 78 * 131_072
    rows = sum(m + 2 * i + 1 for i in range(12))
    assert rows == 122_683_536
    ngram = (math.ceil(rows / 64) * 64 // tp * 256 + 12 * 256 * 3_072) * 2
    assert weights(lite(), tp) - weights(lite(ngram=False), tp) == ngram
    assert weights(lite(), tp) == engine


def test_lite_kv_is_longcat_flash_latent() -> None:
    """FlashModel's 14 layers of two MLA blocks: 28 latent rows of kv_lora_rank 512 + qk_rope_head_dim 64, bf16,
    whole on every TP rank (the KV spec of the meta build: 28 MLA layers of 1,152 B a token)."""
    for tp in (1, 2):
        book = kv_book(lite(), ParallelLayout(tp=tp), range(28), "bf16", VllmRules.kv_storage)
        assert book.full_bytes_per_token == 28 * (512 + 64) * 2 == 32_256
