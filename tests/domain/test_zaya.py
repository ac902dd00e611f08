"""Zaya (ZayaForCausalLM, SGLang 0.5.23 models/zaya.py and configs/zaya.py): planned as SGLang builds it.

Zyphra/ZAYA1-8B-legacy's config.json (tests/data/configs/heldout, its SOURCES.md) is the schema SGLang 0.5.23's
ZayaConfig reads; the registry sweep's default--ZayaForCausalLM (transformers' native schema, 40 layers) is built by
SGLang with ZayaConfig's legacy defaults. Expected figures: zaya.py's shapes by hand (each equal to SGLang's meta
build, tests/data/engine_diff/registry/sglang-0.5.23.json), the state SGLang's own mamba2_cache_params arithmetic.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kvtop.domain.architectures.coverage import verdict
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.errors import LayoutError, UnsupportedModelError
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.kv_state import state_bytes_per_request
from kvtop.domain.launch import parse_flags
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from kvtop.domain.wording import GIB
from tests.conftest import CONFIGS
from tests.data_paths import DATA

LEGACY = "Zyphra--ZAYA1-8B-legacy"
DEFAULT = "default--ZayaForCausalLM"
# SGLang 0.5.23 configs/zaya.py 43-93: the ZayaConfig defaults the default config's native field names leave in place
ZAYA_CONFIG_DEFAULTS = {"ffn_hidden_size": 4096, "zaya_mlp_expansion": 256, "num_query_groups": 2}


def _config(name: str) -> dict[str, Any]:
    path = (CONFIGS / "heldout" / f"{name}.json" if name == LEGACY
            else DATA / "engine_diff" / "registry" / "configs" / "ZayaForCausalLM.json")  # fmt: skip
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def _model(name: str) -> ModelSpec:
    return model_from_config(_config(name), source=name)


def _plan(m: ModelSpec, engine: str, tp: int) -> Ledger:
    flags = (["--tp", str(tp), "--context-length", "8192", "--engine-version", "0.5.23"] if engine == "sglang"
             else ["--tensor-parallel-size", str(tp), "--max-model-len", "8192", "--engine-version", "0.33.0"])  # fmt: skip
    return predict(m, parse_flags(engine, flags), gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100",
                   measured=MeasuredInputs(free_before_load_bytes=80 * GIB, free_after_load_bytes=60 * GIB))  # fmt: skip


def _rows(config: str) -> dict[int, dict[str, Any]]:
    rows = json.loads((DATA / "engine_diff" / "registry" / "sglang-0.5.23.json").read_text())["rows"]
    return {r["tp"]: r for r in rows if r.get("config") == config}


def _meta_build_bytes(config: str = LEGACY) -> dict[int, int]:
    return {tp: r["stages"][0]["param_bytes"]["model"] for tp, r in _rows(config).items()}


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


def test_zaya_py_by_hand_is_sglangs_meta_build_and_kvtops_weights_at_tp_1_and_2() -> None:
    """zaya.py's shapes by hand equal SGLang's meta build (bf16, 2 B) and kvtop's weights book: the held-out config
    8,840,489,040 parameters at TP 1 (17,680,978,080 B), 4,444,362,792 a rank at TP 2; the default config (40
    layers, ZayaConfig's ffn_hidden_size 4096 and zaya_mlp_expansion 256: its moe_intermediate_size and
    router_hidden_size are not ZayaConfig's fields) 9,377,628,240 B and 4,712,935,464 B."""
    legacy = _config(LEGACY)
    default = {**ZAYA_CONFIG_DEFAULTS, **_config(DEFAULT)}
    for name, c, built in ((LEGACY, legacy, {1: 17_680_978_080, 2: 8_888_725_584}),
                           (DEFAULT, default, {1: 9_377_628_240, 2: 4_712_935_464})):  # fmt: skip
        by_hand = {tp: 2 * _zaya_elements(c, tp) for tp in (1, 2)}
        m = _model(name)
        kvtop = {tp: weights_book(m, ParallelLayout(tp=tp), range(m.num_layers), first_stage=True,
                                  last_stage=True).total_bytes for tp in (1, 2)}  # fmt: skip
        assert by_hand == _meta_build_bytes(name) == kvtop == built


def test_the_cell_is_the_cca_layers_kv_and_the_state_two_conv_buffers() -> None:
    """configs/zaya.py full_attention_layer_ids (the even layers of 80): 40 CCA layers keep K and V of
    num_key_value_heads 2 × head_dim 128, bf16: 40 × 2 × 2 × 128 × 2 = 40,960 B (20,480 a rank at TP 2), SGLang's
    cell in its rows. The state a request (configs/zaya.py 246-303, mamba2_cache_params on the same 40 layers):
    conv[0] (8 + 2) × 128 ÷ TP channels × (cca_time0 − 1 + cca_time1 − 1 = 2) positions, conv[1] hidden 2048 × 1
    whole, temporal (1, 1, 0) empty, bf16 (SGLANG_MAMBA_CONV_DTYPE's default): 40 × (1280 × 2 + 2048) × 2 =
    368,640 B at TP 1, 40 × (640 × 2 + 2048) × 2 = 266,240 B at TP 2."""
    m = _model(LEGACY)
    assert {tp: r["cell_size"] for tp, r in _rows(LEGACY).items()} == {1: 40 * 2 * 2 * 128 * 2, 2: 40 * 2 * 128 * 2}
    for tp, state in ((1, 368_640), (2, 266_240)):
        assert 40 * state_bytes_per_request(m, ParallelLayout(tp=tp)) == state
        steps = {s.label.split(" (")[0]: s for s in _plan(m, "sglang", tp).engine.steps}
        assert steps["cell: KV bytes per token per rank"].bytes == 40 * 2 * 2 * 128 * 2 // tp
        slots = steps["− linear-attention state"]
        assert -slots.bytes % state == 0  # (slots + 1) requests' state, each 40 layers' two buffers


def test_vllm_has_no_class_of_it_and_is_refused_by_name() -> None:
    """vLLM 0.33.0 registers no ZayaForCausalLM (its Transformers backend would build transformers' own Zaya; its
    @strict ZayaConfig refuses the legacy config's rope_scaling false: the vLLM registry rows)."""
    assert verdict("ZayaForCausalLM")[0] != "not_modelled"
    with pytest.raises(UnsupportedModelError, match="Transformers backend .* Zaya"):
        _plan(_model(LEGACY), "vllm", 1)


def test_stated_per_layer_lists_are_refused_by_name() -> None:
    """ZayaConfig reads the first nonzero entry of cca_num_q_heads / num_query_groups_list / ffn_hidden_size_list
    and the model indexes them per layer; zaya_layers re-orders the layers: not read, so refused by name."""
    with pytest.raises(UnsupportedModelError) as refused:
        model_from_config({**_config(LEGACY), "zaya_layers": ["a", "m"] * 40}, source="lists")
    assert refused.value.field == "zaya_layers"


def test_tp_beyond_the_kv_heads_is_refused() -> None:
    """models/zaya.py 465-475 asserts num_k_heads (2) % tp_size == 0 ('KV-replication TP is not supported'): TP 4
    is refused as the state's heads (CCA's KV heads) not dividing over TP."""
    with pytest.raises(LayoutError, match="2 linear-attention heads do not divide over attention TP 4"):
        _plan(_model(LEGACY), "sglang", 4)
