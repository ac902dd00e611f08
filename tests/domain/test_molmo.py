"""Molmo (MolmoForCausalLM, model_type molmo) in the registry sweep (issue #26, session 44 task D3).

Config: tests/data/configs/recon/recon--allenai--Molmo-7B-D-0924.json, rebuilt field by field (sources in
SOURCES.md beside it; its parameter count equals the checkpoint's safetensors index total, 32,084,101,120 B of fp32),
read in vLLM 0.33.0 through checkpoint_configs.py's `molmo` stand-in for the checkpoint's MolmoConfig.
First pass (before any change): vLLM "harness-error" (the remote-code config class, no stand-in); with the stand-in
vLLM builds it, kvtop refused the class ("not modelled"). After: kvtop reads it (table_dense_more `molmo`,
towers_molmo) to the engine's bytes at TP 1 and 2. SGLang 0.5.23 registers no Molmo.

Expected bytes by hand from vLLM 0.33.0 molmo.py's shapes (bf16: vLLM serves the fp32 checkpoint as bfloat16).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.engines.vllm.architectures import TOWER_SPLIT
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.data_paths import DATA

RECON = "recon--allenai--Molmo-7B-D-0924"
BF16 = 2


def _config() -> dict[str, Any]:
    return json.loads((DATA / "configs" / "recon" / f"{RECON}.json").read_text())


def _row(tp: int) -> dict[str, Any]:
    return row_of("vllm", "0.33.0", RECON, tp)


def _language_model_bytes(tp: int) -> tuple[int, int]:
    """(model, lm_head): hidden 3,584, 28 layers, 28 heads and 4 KV heads of 128 (2 a rank at TP 2); qkv_proj
    3,584 -> 4,608 with its bias, o_proj 3,584 -> 3,584; gate_up 3,584 -> 2 x 18,944 (intermediate_size 37,888 / 2),
    down 18,944 -> 3,584; two RMSNorms a layer and a final one (whole); the embedding 152,064 + 128 rows, the head
    152,064 rows (untied), each split by rows over TP."""
    hidden, qkv, mlp, layers = 3584, 3584 + 2 * 4 * 128, 18_944, 28
    split = layers * (hidden * qkv + qkv + hidden * hidden + hidden * 2 * mlp + mlp * hidden)
    whole = layers * 2 * hidden + hidden
    embedding = (152_064 + 128) * hidden
    return (split // tp + whole + embedding // tp) * BF16, 152_064 * hidden // tp * BF16


def _vision_bytes(tp: int) -> int:
    """vLLM's VisionBackboneConfig(): 23 blocks of width 1,024 (two LayerNorms; wq, wk, wv, wo, w1 -> 4,096, w2, all
    biased), a class embedding, 577 x 1,024 positions, an unbiased 588 -> 1,024 patch Linear and a pre-LayerNorm;
    image_pooling_2d wq/wk/wv 2,048 -> 1,024 and wo with biases; the projector 1,024 -> 2 x 18,944 and 18,944 ->
    3,584 unbiased; pad_embed 2 x 2,048. Split over TP: every weight and the column-parallel biases; whole: norms,
    embeddings, wo's and w2's biases, pad_embed."""
    width, inner, blocks = 1024, 4096, 23
    split = blocks * (3 * (width * width + width) + width * width + width * inner + inner + inner * width)
    split += 3 * (2 * width * width + width) + width * width + width * 2 * 18_944 + 18_944 * 3584
    whole = blocks * (4 * width + width + width) + width + 577 * width + 588 * width + 2 * width + width + 2 * 2048
    return (split // tp + whole) * BF16


def test_the_recon_config_is_the_checkpoints_count() -> None:
    """The checkpoint's model.safetensors.index.json total (fp32) is 4 B a parameter of the bytes built at TP 1."""
    model, head = _language_model_bytes(1)
    assert (model + head + _vision_bytes(1)) // BF16 * 4 == 32_084_101_120


@pytest.mark.parametrize("tp", [1, 2])
def test_vllm_builds_the_bytes_by_hand(tp: int) -> None:
    row = _row(tp)
    assert row["status"] == "ok"
    (stage,) = row["stages"]
    model, head = _language_model_bytes(tp)
    assert stage["param_bytes"] == {"model": model, "lm_head": head, "vision_backbone": _vision_bytes(tp)}
    assert stage["param_bytes"]["vision_backbone"] == (809_900_032 if tp == 1 else 406_292_480)
    (spec,) = stage["layer_specs"]
    assert (spec["layers"], spec["num_kv_heads"], spec["head_size"]) == (28, 4 // tp, 128)


@pytest.mark.parametrize("tp", [1, 2])
def test_kvtops_book_holds_the_bytes_by_hand(tp: int) -> None:
    model = model_from_config(_config())
    book = weights_book(model, ParallelLayout(tp=tp), range(model.num_layers), first_stage=True, last_stage=True,
                        tower_split=TOWER_SPLIT)  # fmt: skip
    towers = sum(int(row.bytes) for row in book.rows if row.component == "vision")
    assert towers == _vision_bytes(tp)
    assert int(book.total_bytes) - towers == sum(_language_model_bytes(tp))
    assert model.not_modelled == ()


def test_a_weight_tied_molmo_is_refused_by_name() -> None:
    """vLLM 0.33.0 molmo.py ties the head to self.model.transformer.wte, which MolmoModel lacks: it does not build."""
    with pytest.raises(UnsupportedModelError, match="weight-tied Molmo"):
        model_from_config({**_config(), "weight_tying": True, "tie_word_embeddings": True})
    with pytest.raises(UnsupportedModelError, match="tie_word_embeddings True beside weight_tying False"):
        model_from_config({k: v for k, v in _config().items() if k != "tie_word_embeddings"})
