"""Zaya (ZayaForCausalLM, SGLang 0.5.23 models/zaya.py): not modelled, refused naming what no entry reads.

Zyphra/ZAYA1-8B-legacy's config.json (tests/data/configs/heldout, its SOURCES.md) is the schema SGLang 0.5.23's
ZayaConfig reads; SGLang's meta build of it (tests/data/engine_diff/registry/sglang-0.5.23.json) is kept for the
entry that reads CCA: 17,680,978,080 B at TP 1, cell 40,960 B (40 CCA layers × K and V × 2 heads × 128 × 2 B).
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.architectures.coverage import verdict
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.model_config import model_from_config
from tests.conftest import CONFIGS
from tests.data_paths import DATA


def test_zaya_8b_legacy_is_refused_naming_cca_and_its_router() -> None:
    data = json.loads((CONFIGS / "heldout" / "Zyphra--ZAYA1-8B-legacy.json").read_text())
    assert verdict("ZayaForCausalLM")[0] == "not_modelled"
    with pytest.raises(UnsupportedModelError, match=r"compressed convolutional attention .* ZayaRouter blocks"):
        model_from_config(data, source="zaya1-8b-legacy")


def test_sglang_builds_it_and_its_cell_is_the_cca_layers_kv() -> None:
    """configs/zaya.py full_attention_layer_ids: the even layers of 80, 40 CCA layers keeping K and V of
    num_query_groups 2 heads × kv_channels 128, bf16: 40 × 2 × 2 × 128 × 2 B = 40,960 B (20,480 at TP 2)."""
    rows = json.loads((DATA / "engine_diff" / "registry" / "sglang-0.5.23.json").read_text())
    rows = rows["rows"] if isinstance(rows, dict) and "rows" in rows else rows
    found = {r["tp"]: r for r in (rows.values() if isinstance(rows, dict) else rows)
             if isinstance(r, dict) and r.get("config") == "Zyphra--ZAYA1-8B-legacy"}  # fmt: skip
    assert {tp: r["status"] for tp, r in found.items()} == {1: "ok", 2: "ok"}
    assert (found[1]["cell_size"], found[2]["cell_size"]) == (40 * 2 * 2 * 128 * 2, 40 * 2 * 1 * 128 * 2)


def _meta_build_bytes() -> dict[int, int]:
    rows = json.loads((DATA / "engine_diff" / "registry" / "sglang-0.5.23.json").read_text())
    rows = rows["rows"] if isinstance(rows, dict) and "rows" in rows else rows
    return {r["tp"]: r["stages"][0]["param_bytes"]["model"] for r in (rows.values() if isinstance(rows, dict) else rows)
            if isinstance(r, dict) and r.get("config") == "Zyphra--ZAYA1-8B-legacy"}  # fmt: skip


def _zaya_elements(c: dict[str, int], tp: int) -> int:
    """SGLang 0.5.23 models/zaya.py's parameters of one rank, by hand (file:line each); buffers
    (ZayaRouter balancing_biases, 1092, fp32 num_experts + 1) are not parameters and the meta build leaves them out."""
    # fmt: off
    hidden, hd, q, k = c["hidden_size"], c["head_dim"], c["num_attention_heads"], c["num_query_groups"]
    ch = (q + k) * hd // tp  # CCA in_out_ch a rank (head-parallel, 480-484)
    time0 = time1 = 2  # configs/zaya.py 84-85: cca_time0 / cca_time1 class defaults (the config states neither)
    cca = (
        hidden * q * hd // tp  # linear_q: column-split (503; replicated at TP 1, 522), no bias (attention_bias false)
        + hidden * k * hd // tp  # linear_k (512 / 529)
        + 2 * hidden * (k * hd // 2)  # val_proj1 / val_proj2: replicated on every rank (544, 551)
        + ch * time0 + ch  # conv_qk.0: depthwise Conv1d, weight [ch, 1, time0] + bias (568-575)
        + ch * (ch // (q // tp + k // tp)) * time1 + ch  # conv_qk.1: groups = heads a rank (576-584)
        + k // tp  # temp: one per K head (588)
        + q * hd // tp * hidden  # o_proj: row-split (949)
        + hidden  # input_norm (1317)
    )
    mlp, experts = c["zaya_mlp_expansion"], c["num_experts"]
    inter = c["ffn_hidden_size"] // 2  # ZayaBlock: intermediate = ffn_hidden_size // 2 (1230)
    block = (
        hidden * mlp + mlp  # router down_proj with a bias (1046)
        + mlp + mlp  # rmsnorm_eda (1060), router_states_scale where zaya_use_eda (1062)
        + 2 * (mlp * mlp + mlp) + mlp * (experts + 1)  # router_mlp .0 / .2 biased, .4 to experts + 1 (zaya_use_mod, 1065)
        + experts * (2 * inter * hidden + hidden * inter) // tp  # FusedMoE w13 and w2, intermediate split by TP
        + hidden  # input_norm (1373)
    )
    # fmt: on
    layers = c["num_hidden_layers"]  # even layers CCA, odd ZayaBlock (_layer_class, 1414-1418)
    # ResidualScaling (96-111): two vectors at layer 0, four at layers 1 … n − 1 and at the final one (1482, n)
    res_scale = 2 * hidden + layers * 4 * hidden
    embed = c["vocab_size"] // tp * hidden  # VocabParallelEmbedding (1458), lm_head tied (1556: tie_word_embeddings)
    return layers // 2 * (cca + block) + res_scale + embed + hidden  # + final_norm (1480)


def test_zaya_py_by_hand_is_sglangs_meta_build_at_tp_1_and_2() -> None:
    """The layout an entry must read, pinned: zaya.py's shapes by hand equal SGLang's meta build (bf16, 2 B) of the
    held-out config: 8,840,489,040 parameters at TP 1 (17,680,978,080 B), 4,444,362,792 a rank at TP 2."""
    c = json.loads((CONFIGS / "heldout" / "Zyphra--ZAYA1-8B-legacy.json").read_text())
    by_hand = {tp: 2 * _zaya_elements(c, tp) for tp in (1, 2)}
    assert by_hand == _meta_build_bytes() == {1: 17_680_978_080, 2: 8_888_725_584}
