"""Looped decoders whose engine class keeps the passes after the first in a sliding window: IQuest-Coder-V1-Loop
(vLLM 0.33.0 / SGLang 0.5.23 iquest_loopcoder.py). Expected bytes by hand from the engines' modules; the registry
sweep's meta builds of the same config (tests/data/engine_diff/registry/{vllm-0.33.0,sglang-0.5.23}.json, rows
recon--IQuestLab--IQuest-Coder-V1-40B-Loop-Instruct) hold the same figures."""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.sglang import SglangRules
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.engines.vllm import VllmRules
from kvtop.domain.engines.vllm.config_checks import check_config
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.kv import kv_book
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.conftest import CONFIGS

IQUEST = "recon--IQuestLab--IQuest-Coder-V1-40B-Loop-Instruct"


def iquest() -> ModelSpec:
    return model_from_config(json.loads((CONFIGS / "recon" / f"{IQUEST}.json").read_text()), source=IQUEST)


@pytest.mark.parametrize("tp", [1, 2])
def test_iquest_loop_weights_hold_the_layers_once_and_a_gate_each(tp: int) -> None:
    """The 80 layers once (LoopCoderDecoderLayer: qkv_proj 5,120 → (40 + 2 × 8) × 128 with no bias, o_proj
    5,120², LlamaMLP gate_up 2 × 27,648 and down, two RMSNorms) and per layer gate_projections.N, a
    ColumnParallelLinear(head_dim 128 → 40 heads, bias=True) split with the heads (iquest_loopcoder.py
    LoopGateProjection, vLLM 0.33.0 line 305 / SGLang 0.5.23 line 71); embed_tokens and lm_head 76,800 × 5,120,
    untied; the final norm. SGLang's meta build: lm_head 786,432,000 + model 78,802,960,640 B at TP 1,
    393,216,000 + 39,402,304,640 B at TP 2 (the registry rows)."""
    split = 56 * 128 * 5_120 + 5_120 * 5_120 + 3 * 27_648 * 5_120 + (40 * 128 + 40)
    params = 80 * (split // tp + 2 * 5_120) + 2 * 76_800 * 5_120 // tp + 5_120
    engine = {1: 786_432_000 + 78_802_960_640, 2: 393_216_000 + 39_402_304_640}[tp]
    book = weights_book(iquest(), ParallelLayout(tp=tp), range(80), first_stage=True, last_stage=True)
    assert book.total_bytes == 2 * params == engine


@pytest.mark.parametrize("tp", [1, 2])
def test_iquest_loop_kv_on_vllm_is_full_then_windowed(tp: int) -> None:
    """vLLM 0.33.0 iquest_loopcoder.py lines 133-172: an Attention per loop, loop 0 with the model's cache config
    (full attention), loop 1 with replace(cache_config, sliding_window=loop_window_size 64), prefixed layers.80+:
    the KV spec's 80 FullAttentionSpec and 80 SlidingWindowSpec layers of 8 ÷ TP heads × 128 × K, V × 2 B."""
    model = iquest()
    assert (model.kv_passes, model.later_passes_slide, model.sliding_window) == (2, True, 64)
    book = kv_book(model, ParallelLayout(tp=tp), range(80), "bf16", VllmRules.kv_storage)
    per_layer = 8 // tp * 128 * 2 * 2
    assert [(p.name, p.layers, p.bytes_per_token) for p in book.pools] == [
        ("full", 80, 80 * per_layer),
        ("swa", 80, 80 * per_layer),
    ]


@pytest.mark.parametrize(("tp", "cell"), [(1, 1_310_720), (2, 655_360)])
def test_iquest_loop_cell_on_sglang_counts_the_passes_twice(tp: int, cell: int) -> None:
    """SGLang 0.5.23: configs/model_config.py line 1587 num_attention_layers = 80 × loop_num 2 = 160; the class
    states no start_layer / end_layer (iquest_loopcoder.py IQuestLoopCoderForCausalLM), so layer_setup.py
    _resolve_pp_layer_range takes end_layer = max(num_hidden_layers, num_attention_layers) = 160 and
    resolve_layer_indices multiplies it by loop_num again: 320 layers of the one pool (not hybrid SWA), each
    8 ÷ TP heads × 128 × K, V × 2 B. The meta build's cell: 1,310,720 B at TP 1, 655,360 at TP 2."""
    model = iquest()
    version = ResolvedVersion(text="0.5.23", source=VersionSource.FLAG)
    layers = SglangRules().kv_layers_of_stage(model, range(80), version)
    book = kv_book(model, ParallelLayout(tp=tp), layers, "bf16", SglangRules.kv_storage)
    assert sum(pool.bytes_per_token for pool in book.pools) == cell == 320 * (8 // tp) * 128 * 2 * 2


def test_iquest_loop_needs_vllm_0_33() -> None:
    """vLLM 0.33.0 builds the class itself (models/iquest_loopcoder.py); v0.13.0 has no such file, and kvtop does
    not plan its loops there (config_checks LOOPED_CLASSES_ERAS)."""
    model = iquest()
    check_config(model, ResolvedVersion(text="0.33.0", source=VersionSource.FLAG))
    with pytest.raises(UnsupportedModelError):
        check_config(model, ResolvedVersion(text="0.13.0", source=VersionSource.FLAG))
