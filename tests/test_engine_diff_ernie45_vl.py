"""ERNIE-4.5-VL (Ernie4_5_VLMoeForConditionalGeneration) in the registry sweep (issue #26).

- The registry default is transformers' converted Ernie4_5_VLMoeConfig (model_type ernie4_5_vl_moe). vLLM 0.33.0 and
  SGLang 0.5.23 read the vision config of the checkpoint's own configuration code (embed_dim, mlp_ratio, in_chans),
  which the converted class names otherwise: no transformers-format config builds in either engine (their refusal,
  engine-failure tables), and kvtop names the class not modelled: both refuse. Before: "engine could not build".
- The checkpoint's own format, reconstructed (tests/data/configs/recon/recon--baidu--ERNIE-4.5-VL-28B-A3B-PT.json,
  sources in SOURCES.md beside it), read through checkpoint_configs.py's `ernie4_5_moe_vl` stand-in: both engines
  build it to the same bytes, which the arithmetic below reproduces from the config by hand. kvtop reads it with
  the `ernie4_5_moe_vl` entry (table_moe: the second expert group, MoeSpec.second_group_*; towers_ernie45_vl: the
  DFNRope tower and resampler) to those bytes at TP 1 and 2. Before (session 44, helper d): "kvtop refuses" (its
  per-modality expert groups, tower and resampler named not modelled). The transformers format stays refused by
  kvtop too, named not modelled (its text_config states one expert count where the entry reads a [text, vision]
  pair: a converted layout, not a type slip; before, "must be one [text, vision] pair").

Engine figures: tests/data/engine_diff/registry/{vllm-0.33.0,sglang-0.5.23}.json (meta builds, TP 1 and 2).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.engine_diff.registry_configs import DEFAULT_CONFIGS
from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.engines.sglang.architectures import TOWER_SPLIT as SGLANG_SPLIT
from kvtop.domain.engines.vllm.architectures import TOWER_SPLIT as VLLM_SPLIT
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.data_paths import DATA

VERSIONS = {"vllm": "0.33.0", "sglang": "0.5.23"}
RECON = "recon--baidu--ERNIE-4.5-VL-28B-A3B-PT"
DEFAULT = "default--Ernie4_5_VLMoeForConditionalGeneration"
BF16, FP32 = 2, 4


def _row(engine: str, config: str, tp: int) -> dict[str, Any]:
    return row_of(engine, VERSIONS[engine], config, tp)


def _language_model_bytes(tp: int) -> int:
    """hidden 2,560, 28 layers, 20 heads and 4 KV heads of 128, vocabulary 103,424 (tied), no bias. Layer 0 dense
    (intermediate 12,288); layers 1-27 MoE: 64 text experts of 1,536 and 64 vision experts of 512 (gate, up, down),
    2 shared experts in one MLP of 2 x 1,536, two fp32 routers [64, 2,560] and an fp32 e_score_correction_bias
    [2, 64]. Split over TP: q/k/v/o (4 KV heads / 2 ranks), every MLP's width, the vocabulary; norms, routers and
    the bias whole."""
    hidden, kv, layers, moe_layers, vocab = 2560, 4 * 128, 28, 27, 103_424
    attention = hidden * (hidden + 2 * kv + hidden)
    dense = 3 * hidden * 12_288
    experts = 64 * 3 * hidden * 1536 + 64 * 3 * hidden * 512 + 3 * hidden * 2 * 1536
    split = layers * attention + dense + moe_layers * experts + vocab * hidden
    whole = layers * 2 * hidden + hidden
    routers = moe_layers * (2 * 64 * hidden + 2 * 64)
    return (split // tp + whole) * BF16 + routers * FP32


def _vision_bytes(tp: int) -> int:
    """DFNRope ViT: patch Linear 3 x 14 x 14 -> 1,280 unbiased; 32 blocks of two LayerNorms, qkv 1,280 -> 3,840 and
    proj with biases, fc1 1,280 -> 5,120 (mlp_ratio 4) and fc2 with biases; a final LayerNorm. qkv/proj/fc1/fc2
    weights and the qkv/fc1 biases split over TP; LayerNorms, the patch embedding and proj/fc2 biases whole."""
    width, inner, blocks = 1280, 5120, 32
    split = blocks * (width * 3 * width + 3 * width + width * width + width * inner + inner + inner * width)
    whole = 3 * 14 * 14 * width + blocks * (4 * width + width + width) + 2 * width
    return (split // tp + whole) * BF16


def _resampler_bytes(tp: int) -> int:
    """Resampler (spatial_conv_size 2, temporal_conv_size 2, in 1,280, out 2,560): spatial Linear 5,120 -> 5,120
    twice with biases and a LayerNorm(5,120); temporal Linear 10,240 -> 5,120 and 5,120 -> 5,120 with biases and a
    LayerNorm(5,120); mlp Linear 5,120 -> 2,560 with bias; an RMSNorm(2,560). The linears (weights and biases) split
    over TP, the three norms whole (the engines' TP 2 build: 23,040 parameters whole = 2 x 2 x 5,120 + 2,560)."""
    split = 2 * (5120 * 5120 + 5120) + 10_240 * 5120 + 5120 + 5120 * 5120 + 5120 + 5120 * 2560 + 2560
    whole = 2 * 2 * 5120 + 2560
    return (split // tp + whole) * BF16


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_the_transformers_format_default_is_refused_by_both(engine: str) -> None:
    for tp in (1, 2):
        row = _row(engine, DEFAULT, tp)
        assert row["status"] == "refused" and "ERNIE-4.5-VL's own configuration code" in row["message"]
    # kvtop's side: a named not-modelled layout, not a type complaint (#26 config type audit). The file's own
    # values: text_config.moe_num_experts 64 (one int, transformers 5.20.2 Ernie4_5_VLMoeTextConfig's default) beside
    # moe_intermediate_size [1536, 512]; before, "text_config.moe_num_experts: must be one [text, vision] pair".
    config = json.loads((DEFAULT_CONFIGS / "Ernie4_5_VLMoeForConditionalGeneration.json").read_text())
    assert config["text_config"]["moe_num_experts"] == 64
    assert config["text_config"]["moe_intermediate_size"] == [1536, 512]
    with pytest.raises(UnsupportedModelError, match=r"one expert count \(64\) for both expert groups") as refused:
        model_from_config(config)
    assert refused.value.field == "text_config.moe_num_experts"
    assert "must be" not in str(refused.value)


@pytest.mark.parametrize(("engine", "split"), [("vllm", VLLM_SPLIT), ("sglang", SGLANG_SPLIT)])
@pytest.mark.parametrize("tp", [1, 2])
def test_kvtops_book_holds_the_bytes_by_hand(engine: str, split: object, tp: int) -> None:
    """The language model (both expert groups, two fp32 routers, the [2, 64] fp32 score bias) and the towers' row
    (the DFNRope transformer and the resampler) of the first rank, as each engine shards them."""
    config = json.loads((DATA / "configs" / "recon" / f"{RECON}.json").read_text())
    model = model_from_config(config)
    book = weights_book(model, ParallelLayout(tp=tp), range(model.num_layers), first_stage=True, last_stage=True,
                        tower_split=split)  # fmt: skip
    towers = sum(int(row.bytes) for row in book.rows if row.component == "vision")
    assert int(book.total_bytes) - towers == _language_model_bytes(tp)
    assert towers == _vision_bytes(tp) + _resampler_bytes(tp)
    assert model.not_modelled == ()


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_the_checkpoint_format_builds_to_the_bytes_by_hand(engine: str) -> None:
    language = "language_model" if engine == "vllm" else "model"
    assert _language_model_bytes(1) == 57_266_973_184  # 28.6 B parameters, the routers in fp32
    for tp in (1, 2):
        (stage,) = _row(engine, RECON, tp)["stages"]
        parts = stage["param_bytes"]
        assert parts[language] == _language_model_bytes(tp)
        assert parts["vision_model"] == _vision_bytes(tp)
        assert parts["resampler_model"] == _resampler_bytes(tp)


def test_sglang_cell_is_28_layers_of_4_kv_heads() -> None:
    """KV per token: 28 layers x K and V x 4 KV heads (2 a rank at TP 2) x 128 x 2 B."""
    assert [_row("sglang", RECON, tp)["cell_size"] for tp in (1, 2)] == [28 * 2 * 4 * 128 * 2, 28 * 2 * 2 * 128 * 2]
