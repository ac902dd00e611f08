"""A checkpoint's own `quant_method: mxfp8` (MiniMaxAI/MiniMax-M3-MXFP8, held-out wave 5): FP8 weights with one
E8M0 scale per 32, the modules in `ignored_layers` left in the model dtype. Expected figures are vLLM 0.33.0's
model class built on the meta device (`python benchmarks/engine_diff/registry_sweep.py --engine vllm --params
MiniMaxAI--MiniMax-M3-MXFP8 --tps 1`: its named_parameters' shapes and dtypes) and the engines' own refusals
(the sweep's SGLang 0.5.23 rows on sm90).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.domain.engines.base import EngineInputs
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.sglang.checks import check_launch
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.engines.vllm.kernels import check_weights
from kvtop.domain.errors import KvtopError
from kvtop.domain.kv import KvStorage, kv_book
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import WeightsBook, weights_book

CONFIG = (
    Path(__file__).resolve().parents[1]
    / "data"
    / "configs"
    / "heldout"
    / "wave5"
    / "MiniMaxAI--MiniMax-M3-MXFP8.json"
)
VLLM = ResolvedVersion(text="0.33.0", source=VersionSource.FLAG)
VLLM_OLD = ResolvedVersion(text="0.13.0", source=VersionSource.FLAG)
SGLANG = ResolvedVersion(text="0.5.23", source=VersionSource.FLAG)
SGLANG_OLD = ResolvedVersion(text="0.5.6.post2", source=VersionSource.FLAG)
FP8, BF16, FP32, E8M0 = 1, 2, 4, 1


def model() -> ModelSpec:
    return model_from_config(json.loads(CONFIG.read_text()), source=CONFIG.stem)


def vllm_book(m: ModelSpec, tp: int) -> WeightsBook:
    """One rank's book as kvtop's vLLM plan builds it: the stage parts, the tower split and the engine rows."""
    rules = engine_rules("vllm")
    layout, layers = ParallelLayout(tp=tp), range(m.num_layers)
    book = weights_book(m, layout, layers, first_stage=True, last_stage=True,
                        tower_split=rules.architectures.TOWER_SPLIT, parts=rules.stage_parts(m, 0, 1, VLLM))  # fmt: skip
    return WeightsBook(rows=(*book.rows, *rules.weights_built(m, layout, layers, "H100", VLLM)))


def language_bytes(book: WeightsBook) -> int:
    return sum(r.bytes for r in book.rows if r.component != "vision")


def test_mxfp8_reads_as_fp8_with_an_e8m0_scale_per_32_sparing_ignored_layers() -> None:
    quant = model().quant
    assert (quant.method, quant.weight_bits, quant.group_size, quant.scale_bytes) == ("mxfp8", 8, 32, E8M0)
    # ignored_layers' language-model names as kvtop names them (the `language_model.` tower prefix dropped)
    assert "model.layers.10.block_sparse_moe.gate" in quant.excluded and "lm_head" in quant.excluded


def test_vllm_builds_minimax_m3_mxfp8_as_its_meta_build() -> None:
    """vLLM 0.33.0 at TP 1: the language model 442,007,940,120 B (meta build; its vision tower 1,731,134,464 B
    beside). Two of its terms by hand: a plain layer's qkv_proj [9216, 6144] float8 + weight_scale [9216, 192]
    uint8, and the q/k/v/prob_scale scalars (bf16) that only the 3 plain layers' `Attention` registers: the 57
    indexed layers are MiniMaxM3SparseAttention, no `Attention` (24 B in all; kvtop had them on all 60 layers,
    +456 B, before this rule). At TP 2: 221,117,525,016 B."""
    assert 9216 * 6144 * FP8 + 9216 * (6144 // 32) * E8M0 == (169_869_312 + 5_308_416) // 3
    m = model()
    assert language_bytes(vllm_book(m, 1)) == 442_007_940_120
    assert language_bytes(vllm_book(m, 2)) == 221_117_525_016
    scalars = sum(r.bytes for r in vllm_book(m, 1).rows if r.component == "attention")
    parts = engine_rules("vllm").stage_parts(m, 0, 1, VLLM)
    unscoped = weights_book(m, ParallelLayout(tp=1), range(m.num_layers), first_stage=True, last_stage=True,
                            tower_split=engine_rules("vllm").architectures.TOWER_SPLIT,
                            parts=parts.model_copy(update={"attention_scalars_unindexed_only": False}))  # fmt: skip
    assert sum(r.bytes for r in unscoped.rows if r.component == "attention") - scalars == 57 * 4 * BF16


def test_vllm_0_13_has_no_mxfp8_method() -> None:
    """v0.13.0's quantization/__init__.py names no `mxfp8`: 'Unknown quantization method'."""
    m = model()
    settings, layout = LaunchSettings(engine="vllm"), ParallelLayout(tp=1)
    check_weights(m, settings, layout, "H100", VLLM)
    with pytest.raises(KvtopError, match="no mxfp8 quantization method"):
        check_weights(m, settings, layout, "H100", VLLM_OLD)


@pytest.mark.parametrize(("gpu", "version", "refused"), [
    ("H100", SGLANG, "needs 10.0 or newer"),  # the sweep's rows: 'Minimum capability: 100. Current capability: 90.'
    ("B200", SGLANG, None),
    ("B200", SGLANG_OLD, "no mxfp8 quantization method"),
])  # fmt: skip
def test_sglang_serves_mxfp8_from_sm100_only(gpu: str, version: ResolvedVersion, refused: str | None) -> None:
    m = model()
    book = kv_book(m, ParallelLayout(), range(m.num_layers), "bf16", KvStorage())
    inputs = EngineInputs(model=m, layout=ParallelLayout(), settings=LaunchSettings(engine="sglang"),
                          gpu_total_bytes=1, gpu_name=gpu, weights_bytes=0, kv=book, context_length=1,
                          version=version)  # fmt: skip
    if refused is None:
        check_launch(inputs)
        return
    with pytest.raises(KvtopError, match=refused):
        check_launch(inputs)
