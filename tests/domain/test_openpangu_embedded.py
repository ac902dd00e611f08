"""openPangu-Embedded (held-out wave 4b): Llama's modules with q, k, v and o_proj biases from the config's `bias`.

Expected bytes are vLLM 0.33.0's meta build of openPangu-Embedded-7B-V1.1 (models/openpangu.py), printed by
`registry_sweep.py --engine vllm --params ascend-tribe--openPangu-Embedded-7B-V1.1 --tps 1` and written out per
tensor below, and the language model per rank at TP 1 and 2 as the registry sweep recorded it
(tests/data/engine_diff/registry/vllm-0.33.0.json: `model` + `lm_head`); kvtop's book is recomputed from the config.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.errors import InputError
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.data_paths import CONFIGS

PANGU = "ascend-tribe--openPangu-Embedded-7B-V1.1"
BF16 = 2
# vLLM 0.33.0 meta build, TP 1, bf16, each of the 34 layers:
#   qkv_proj weight [6144, 4096] (32 + 2 × 8 heads of 128) and bias [6144]; o_proj weight [4096, 4096], bias [4096]
ATTENTION = 34 * (6144 * 4096 + 6144 + 4096 * 4096 + 4096) * BF16
#   gate_up_proj [25600, 4096], down_proj [4096, 12800]
MLP = 34 * (25600 * 4096 + 4096 * 12800) * BF16
#   input_layernorm, post_attention_layernorm [4096] each; model.norm [4096]
NORMS = (34 * 2 * 4096 + 4096) * BF16
#   embed_tokens and lm_head [153408, 4096]: the config's 153,376 rows padded to a multiple of 64
PADDED_VOCAB = 153408


def _config() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((CONFIGS / "heldout" / "wave4b" / f"{PANGU}.json").read_text())
    return loaded


def _model(config: dict[str, Any] | None = None) -> ModelSpec:
    return model_from_config(config or _config(), source=PANGU)


def test_openpangu_book_is_vllms_meta_build_tensor_by_tensor() -> None:
    model = _model()
    book = weights_book(model, ParallelLayout(), range(model.num_layers), first_stage=True, last_stage=True)
    rows = {row.component: row.bytes for row in book.rows}
    assert (
        rows["attention"] == ATTENTION == 2_852_823_040
    )  # 1,711,276,032 + 417,792 + 1,140,850,688 + 278,528
    assert rows["mlp"] == MLP == 10_695_475_200
    assert rows["norms"] == NORMS == 565_248
    assert rows["embedding"] == rows["lm_head"] == PADDED_VOCAB * 4096 * BF16 == 1_256_718_336


@pytest.mark.parametrize(("tp", "engine_bytes"), [(1, 16_062_300_160), (2, 8_031_571_968)])
def test_openpangu_language_model_per_rank_is_vllms(tp: int, engine_bytes: int) -> None:
    row = row_of("vllm", "0.33.0", PANGU, tp)
    children = row["stages"][0]["param_bytes"]
    assert int(children["model"]) + int(children["lm_head"]) == engine_bytes
    assert tp > 1 or engine_bytes == ATTENTION + MLP + NORMS + 2 * PADDED_VOCAB * 4096 * BF16
    model = _model()
    book = weights_book(
        model, ParallelLayout(tp=tp), range(model.num_layers), first_stage=True, last_stage=True
    )
    built = engine_rules("vllm").weights_built(model, ParallelLayout(tp=tp), range(model.num_layers), "H100",
                                               ResolvedVersion(text="0.33.0", source=VersionSource.FLAG))  # fmt: skip
    assert book.total_bytes + sum(r.bytes for r in built) == engine_bytes


def test_openpangu_qkv_bias_overrides_bias_for_q_k_v_only() -> None:
    # openpangu.py: attention_bias = attention_bias or bias; bias_o_proj = attention_bias; then
    # attention_bias = config.qkv_bias where the config states it: q, k, v lose their bias, o_proj keeps its own
    model = _model({**_config(), "qkv_bias": False})
    book = weights_book(model, ParallelLayout(), range(model.num_layers), first_stage=True, last_stage=True)
    rows = {row.component: row.bytes for row in book.rows}
    assert rows["attention"] == ATTENTION - 34 * 6144 * BF16


def test_openpangu_sandwich_norm_is_refused_by_name() -> None:
    with pytest.raises(InputError, match="sandwich"):
        _model({**_config(), "sandwich_norm": True})
