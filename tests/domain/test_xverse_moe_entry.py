"""The xverse_moe entry (XverseMoeForCausalLM) against SGLang 0.5.23's own class, on XVERSE-MoE-A4.2B's sizes.

The config is tests/data/configs/recon/recon--xverse--XVERSE-MoE-A4.2B-class.json (sources in SOURCES.md there: a
public port's copy of the checkpoint's config, the model card's size table, a paper's 25.78B / 4.23B counts).
Expected figures are the arithmetic of the parameter shapes SGLang 0.5.23 models/xverse_moe.py builds, done here by
hand; the registry sweep's meta builds recorded the same totals (tests/data/engine_diff/registry/sglang-0.5.23.json:
lm_head 514,785,280 + model 51,042,022,400 B at TP 1; 257,392,640 + 25,525,744,640 B at TP 2; cells 286,720 and
143,360 B). vLLM 0.33.0 registers no such class.
"""

from __future__ import annotations

import json

from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.kv import kv_book
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.data_paths import DATA

CONFIG = DATA / "configs" / "recon" / "recon--xverse--XVERSE-MoE-A4.2B-class.json"
BF16 = 2
HIDDEN, LAYERS, EXPERTS, WIDTH = 2560, 28, 64, 1728
# VocabParallelEmbedding / ParallelLMHead pad 100,534 rows to a multiple of 64 (vocab_parallel_embedding.py
# pad_vocab_size, DEFAULT_VOCAB_PADDING_SIZE 64): 1,571 × 64
PADDED_VOCAB = 100_544


def _model() -> ModelSpec:
    return model_from_config(dict(json.loads(CONFIG.read_text())), source="XVERSE-MoE-A4.2B")


def _layer(tp: int) -> int:
    """One XverseDecoderLayer's parameters on a rank: qkv_proj [3 × 2560 / tp, 2560] (32 heads of 80, MHA: no
    num_key_value_heads), o_proj [2560, 2560 / tp]; 64 XverseMLPs, each gate_up [2 × 1728 / tp, 2560] and down
    [2560, 1728 / tp] (xverse_moe.py XverseMoE: a ModuleList split by TP, pack_params views them in one flat
    tensor); the router [64, 2560] replicated, no bias; shared_experts one XverseMLP 2 × 1728 wide (intermediate_size
    × num_shared_experts, xverse_moe.py line 143); input and post-attention RMSNorms [2560]."""
    attention = 3 * HIDDEN * HIDDEN // tp + HIDDEN * HIDDEN // tp
    experts = EXPERTS * 3 * HIDDEN * WIDTH // tp
    shared = 3 * HIDDEN * 2 * WIDTH // tp
    return attention + experts + shared + EXPERTS * HIDDEN + 2 * HIDDEN


def test_xverse_moe_book_is_sglangs_build() -> None:
    """TP 1 and 2, bfloat16: embed_tokens and lm_head [100,544 / tp, 2560] (untied), 28 layers, the final norm."""
    m = _model()
    assert m.moe is not None and m.moe.num_routed_experts == 64 and m.moe.experts_per_token == 6
    assert m.moe.shared_intermediate_size == 3456 and not m.moe.router_bias
    for tp, total in ((1, 51_556_807_680), (2, 25_783_137_280)):
        expected = (2 * PADDED_VOCAB // tp * HIDDEN + LAYERS * _layer(tp) + HIDDEN) * BF16
        assert expected == total
        book = weights_book(m, ParallelLayout(tp=tp), range(m.num_layers), first_stage=True, last_stage=True)
        assert book.total_bytes == total


def test_xverse_moe_published_counts() -> None:
    """The unpadded parameter count is the 25.78B the model's figures state (25,778,352,640)."""
    total = 2 * 100_534 * HIDDEN + LAYERS * _layer(1) + HIDDEN
    assert round(total / 1e9, 2) == 25.78


def test_xverse_moe_cell_is_sglangs() -> None:
    """SGLang's cell: 28 layers × K and V × 32 heads × 80 × 2 B = 286,720 B at TP 1 (143,360 B a rank at TP 2)."""
    m = _model()
    for tp, cell in ((1, 286_720), (2, 143_360)):
        book = kv_book(m, ParallelLayout(tp=tp), range(m.num_layers), "bf16", engine_rules("sglang").kv_storage)
        assert sum(pool.bytes_per_token for pool in book.pools) == LAYERS * 2 * 32 // tp * 80 * BF16 == cell
