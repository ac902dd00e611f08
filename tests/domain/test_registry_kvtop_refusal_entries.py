"""Classes an engine builds that kvtop refused (docs/fidelity_registry.md, "kvtop refuses"), now read by an entry.

Each expected figure is the engine's own: the parameter shapes and dtypes it builds on the meta device for the
config (`python benchmarks/engine_diff/registry_sweep.py --engine <engine> --params <config> --tps 1`, which lists
the class's `named_parameters()`; the shapes are quoted in each test), and the registry sweep's recorded rows for
the same config (tests/data/engine_diff/registry/<engine>-<version>.json: parameter bytes per top-level child,
vLLM's KV cache specs, SGLang's `_cell_size`). The configs are the sweep's defaults (registry/configs, the engines'
config class defaults: SOURCES.md there) and, where a rule the default does not reach is checked, a variant of one
written here (its engine figures quoted from the same listing, run on the variant).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.model import LayerKind, MlpKind, ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from kvtop.domain.wording import GIB

REGISTRY = Path(__file__).resolve().parents[1] / "data" / "engine_diff" / "registry"
BUDGET = MeasuredInputs(free_before_load_bytes=80 * GIB, free_after_load_bytes=60 * GIB)
BF16 = 2


def config(class_name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((REGISTRY / "configs" / f"{class_name}.json").read_text())
    return data


def model(data: dict[str, Any], name: str = "config") -> ModelSpec:
    return model_from_config(data, source=name)


def weights(m: ModelSpec, tp: int) -> int:
    book = weights_book(m, ParallelLayout(tp=tp), range(m.num_layers), first_stage=True, last_stage=True)
    return book.total_bytes


def engine_rows(engine: str, class_name: str) -> dict[int, dict[str, Any]]:
    version = {"vllm": "0.33.0", "sglang": "0.5.23"}[engine]
    rows = json.loads((REGISTRY / f"{engine}-{version}.json").read_text())["rows"]
    return {r["tp"]: r for r in rows if r["config"] == f"default--{class_name}"}


def engine_weights(row: dict[str, Any]) -> int:
    return sum(sum(stage["param_bytes"].values()) for stage in row["stages"])


def sglang_plan(m: ModelSpec, tp: int) -> Ledger:
    settings = parse_flags(
        "sglang", ["--tp", str(tp), "--context-length", "8192", "--engine-version", "0.5.23"]
    )
    return predict(m, settings, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100", measured=BUDGET)


def cell_step(ledger: Ledger) -> float:
    step = next(s for s in ledger.engine.steps if s.label.startswith("cell"))
    return float(step.value if step.value is not None else step.bytes)


def test_spark2_5_gates_each_head_and_opts_into_sglangs_sliding_pool() -> None:
    """SGLang 0.5.23's Spark2_5ForCausalLM at TP 1: embed_tokens and lm_head [133120, 2048], and on each of 28
    layers q_k_v_proj [3072, 2048], g_proj [8, 2048] (a gate per head), out_proj [2048, 2048], gate_up_proj
    [13312, 2048], down_proj [2048, 6656], two norms [2048]; model.norm [2048]; bf16, 3,968,962,560 B. The config
    says is_hybrid_swa (Spark2_5Config sets it where any layer slides), which is_hybrid_swa_model reads beside its
    class list: the engine's cell is 7 full layers × 2 KV heads × 256 × 2 (K, V) × 2 B plus 0.8 (its default
    swa_full_tokens_ratio) of the 21 sliding layers' = 48,742 B at TP 1, 24,371 at TP 2 (one KV head a rank)."""
    m = model(config("Spark2_5ForCausalLM"))
    layer = 3072 * 2048 + 8 * 2048 + 2048 * 2048 + 13312 * 2048 + 2048 * 6656 + 2 * 2048
    expected = (2 * 133120 * 2048 + 28 * layer + 2048) * BF16
    assert weights(m, 1) == expected == 3_968_962_560
    rows = engine_rows("sglang", "Spark2_5ForCausalLM")
    assert engine_weights(rows[1]) == expected
    assert weights(m, 2) == engine_weights(rows[2])
    assert m.layer_attention.count(LayerKind.FULL) == 7 and m.layer_attention.count(LayerKind.SLIDING) == 21
    per_layer = 2 * 256 * 2 * BF16
    for tp in (1, 2):
        engine_cell = rows[tp]["cell_size"]
        assert engine_cell == int((7 + 0.8 * 21) * per_layer // tp)
        assert int(cell_step(sglang_plan(m, tp))) == engine_cell


def test_a_config_that_says_is_hybrid_swa_gets_the_sliding_pool_whatever_its_class() -> None:
    """The opt-in is the config's, not the class's: without it, an unlisted class keeps its sliding layers in the
    full pool (is_hybrid_swa_model returns False), every layer's K and V in the cell."""
    data = {**config("Spark2_5ForCausalLM"), "is_hybrid_swa": False}
    ledger = sglang_plan(model(data), 1)
    assert ledger.engine.swa_token_capacity is None
    assert cell_step(ledger) == 28 * 2 * 256 * 2 * BF16


def test_nemotron_h_reads_transformers_5_block_words_for_vllm_and_sglang_refuses_them() -> None:
    """transformers 5.x's NemotronHConfig (which vLLM 0.33.0 loads) writes layers_block_type as linear_attention /
    moe / full_attention / mlp. vLLM's NemotronHPuzzleForCausalLM at TP 1 (the class default's 4 layers) builds a
    Mamba2 mixer (in_proj [18560, 4096], out_proj [4096, 8192], conv1d [10240, 1, 4] + bias, A fp32 [128], D,
    dt_bias [128], norm [8192]), an MoE block (gate [8, 4096] with an fp32 e_score_correction_bias [8], 8 experts
    w13 [8, 7688, 4096] and w2 [8, 4096, 7688], a shared up/down [7688, 4096]), attention (qkv_proj [6144, 4096],
    o_proj [4096, 4096]) and an up/down MLP [21504, 4096], one norm [4096] each; embed, lm_head [131072, 4096],
    norm_f: 3,936,711,712 B; its KV specs one MambaSpec layer and one FullAttentionSpec layer (8 KV heads × 128).
    SGLang 0.5.23's own NemotronHConfig refuses those words ("contains invalid types"): kvtop refuses there."""
    data = config("NemotronHPuzzleForCausalLM")
    m = model(data)
    assert m.layer_attention == (LayerKind.LINEAR, LayerKind.NONE, LayerKind.FULL, LayerKind.NONE)
    assert m.layer_mlp == (MlpKind.NONE, MlpKind.MOE, MlpKind.NONE, MlpKind.DENSE)
    rows = engine_rows("vllm", "NemotronHPuzzleForCausalLM")
    assert weights(m, 1) == engine_weights(rows[1]) == 3_936_711_712
    assert weights(m, 2) == engine_weights(rows[2])
    specs = {spec["kind"]: spec for spec in rows[1]["stages"][0]["layer_specs"]}
    assert specs["FullAttentionSpec"]["num_kv_heads"] == m.num_kv_heads == 8
    assert specs["MambaSpec"]["layers"] == 1 == m.layer_attention.count(LayerKind.LINEAR)
    engine = engine_rows("sglang", "NemotronHPuzzleForCausalLM")
    assert {row["status"] for row in engine.values()} == {"refused"}
    with pytest.raises(InputError) as refused:
        sglang_plan(m, 1)
    assert refused.value.field == "layers_block_type" and "full_attention, linear_attention" in str(
        refused.value
    )
    # SGLang's own words: planned there (the same blocks)
    own = {**data, "layers_block_type": ["mamba", "moe", "attention", "mlp"]}
    assert sglang_plan(model(own), 1).kv_bytes_per_token > 0


def test_hunyuan_moe_v1_is_dense_with_one_expert() -> None:
    """SGLang 0.5.23's HunYuanMoEV1ForCausalLM (models/hunyuan.py _is_moe: num_experts > 1) with the class default
    num_experts 1 builds a dense MLP: at TP 1 embed_tokens [290943 → 290944 padded, 4096], qkv_proj [12288, 4096],
    o_proj [4096, 4096], gate_up_proj [22016, 4096], down_proj [4096, 11008], two norms, on 32 layers; lm_head
    [290944, 4096]: the sweep's row 15,335,956,480 + 2,383,413,248 B."""
    m = model(config("HunYuanMoEV1ForCausalLM"))
    assert m.moe is None
    rows = engine_rows("sglang", "HunYuanMoEV1ForCausalLM")
    for tp in (1, 2):
        assert weights(m, tp) == engine_weights(rows[tp])
    assert engine_weights(rows[1]) == 15_335_956_480 + 2_383_413_248


def test_hunyuan_moe_v1_experts_and_mixed_shared_mlp() -> None:
    """A variant of the default (4 experts, moe_topk 2, moe_intermediate_size 1024, use_mixed_mlp_moe with one
    num_shared_expert, use_qk_norm, 2 layers, vocab 32,000): SGLang 0.5.23 at TP 1 builds experts w13 [4, 2048,
    4096] and w2 [4, 4096, 1024], gate [4, 4096] (bf16, no bias), shared_mlp gate_up [22016, 4096] and down [4096,
    11008], query/key_layernorm [128], qkv [12288, 4096], o [4096, 4096], two norms [4096] a layer; embed and
    lm_head [32000, 4096], norm: 1,535,222,784 B in all. use_cla (a layer reading another's KV) is refused."""
    variant = {**config("HunYuanMoEV1ForCausalLM"), "num_experts": 4, "moe_topk": 2, "moe_intermediate_size": 1024,
               "use_mixed_mlp_moe": True, "num_shared_expert": 1, "num_hidden_layers": 2, "use_qk_norm": True,
               "vocab_size": 32000}  # fmt: skip
    m = model(variant)
    assert m.moe is not None and m.moe.shared_intermediate_size == 11008
    layer = 4 * 2048 * 4096 + 4 * 4096 * 1024 + 4 * 4096 + 22016 * 4096 + 4096 * 11008
    layer += 2 * 128 + 12288 * 4096 + 4096 * 4096 + 2 * 4096
    assert weights(m, 1) == (2 * 32000 * 4096 + 2 * layer + 4096) * BF16 == 1_535_222_784
    with pytest.raises(UnsupportedModelError) as refused:
        model({**variant, "use_cla": True, "cla_share_factor": 2})
    assert refused.value.field == "use_cla"


def test_iquest_q1_layers_sink_keys_norms_and_experts() -> None:
    """SGLang 0.5.23's IQuestQ1ForCausalLM at TP 1 (the class default, 88 layers): embed_tokens and lm_head
    [160000, 3072]; on every layer attention_norm, attn_out_norm, feed_forward_norm [3072], sink_k [8, 128],
    qkv_proj [8192, 3072], o_proj [3072, 6144], q_norm and k_norm [128]; layer 0 (mlp_only_layers) a dense
    gate_up_proj [24576, 3072] and down_proj [3072, 12288] and an ffn_out_norm [3072]; the other 87 an fp32 gate
    [256, 3072] and experts w13 [256, 3072, 3072], w2 [256, 3072, 1536]; model.norm [3072]: 640,774,070,272 B.
    Its layers are 1 full + 21 × (full, 3 sliding) + 3 full (IQuestQ1Config), a listed hybrid SWA class: the
    engine's cell 25 full layers × 8 KV heads × 128 × 2 × 2 B + 0.8 × 63 sliding ones' = 308,838 B (154,419 at TP 2)."""
    m = model(config("IQuestQ1ForCausalLM"))
    attention = 3 * 3072 + 8 * 128 + 8192 * 3072 + 3072 * 6144 + 2 * 128
    dense = 24576 * 3072 + 3072 * 12288 + 3072
    experts = 256 * 3072 * 3072 + 256 * 3072 * 1536
    expected = (2 * 160000 * 3072 + 88 * attention + dense + 87 * experts + 3072) * BF16 + 87 * 256 * 3072 * 4
    assert weights(m, 1) == expected == 640_774_070_272
    rows = engine_rows("sglang", "IQuestQ1ForCausalLM")
    assert engine_weights(rows[1]) == expected
    assert weights(m, 2) == engine_weights(rows[2])
    assert m.layer_attention.count(LayerKind.FULL) == 25 and m.layer_mlp.count(MlpKind.DENSE) == 1
    for tp in (1, 2):
        assert rows[tp]["cell_size"] == int((25 + 0.8 * 63) * 8 * 128 * 2 * BF16 / tp)
        assert int(cell_step(sglang_plan(m, tp))) == rows[tp]["cell_size"]


def test_iquest_q1_reads_its_block_fields_not_a_stated_layer_types() -> None:
    """IQuestQ1Config pops a stated `layer_types` and derives the layers from its block fields; without
    use_sliding_window every layer is full."""
    data = config("IQuestQ1ForCausalLM")
    stated_all_full = model({**data, "layer_types": ["full_attention"] * 88})
    assert stated_all_full.layer_attention == model(data).layer_attention
    assert set(model({**data, "use_sliding_window": False}).layer_attention) == {LayerKind.FULL}
    two_blocks = {**data, "num_hidden_layers": 12, "num_hybrid_layers_block": 2, "layer_types": None}
    assert model(two_blocks).layer_attention == (LayerKind.FULL, *(LayerKind.FULL, *(LayerKind.SLIDING,) * 3) * 2,
                                                 *(LayerKind.FULL,) * 3)  # fmt: skip


def test_moondream3_language_model_as_vllm_builds_it() -> None:
    """vLLM 0.33.0's Moondream3ForCausalLM at TP 1 (Moondream3Config's defaults): text.wte and lm_head [51200,
    2048] (lm_head with a bias [51200]); on each of 24 layers one LayerNorm ln [2048] + bias, qkv_proj [6144, 2048]
    + bias, out_proj [2048, 2048] + bias, tau_alpha [32], tau_wq and tau_wv [32, 6144]; on layers 0-3 fc1 [8192,
    2048] + bias and fc2 [2048, 8192] + bias; on layers 4-23 fc1_weight [64, 2048, 2048], fc2_weight [64, 2048,
    1024], gate [64, 2048] + bias [64]; post_ln [2048] + bias; bf16: text 17,414,385,664 + lm_head 209,817,600 B
    (beside it the vision encoder and projection, in the book since towers_moondream: tests/domain/
    test_towers_moondream3.py; the rank's weights are the meta build's total). Its KV spec: 24 full layers, 32 KV
    heads × 64."""
    m = model(config("Moondream3ForCausalLM"))
    h = 2048
    layer = 2 * h + 32 + 2 * 32 * 3 * h + 3 * h * h + 3 * h + h * h + h
    dense = 8192 * h + 8192 + h * 8192 + h
    moe = 64 * 2 * 1024 * h + 64 * h * 1024 + 64 * h + 64
    expected = (51200 * h + 24 * layer + 4 * dense + 20 * moe + 2 * h + 51200 * h + 51200) * BF16
    rows = engine_rows("vllm", "Moondream3ForCausalLM")
    assert (
        expected
        == rows[1]["stages"][0]["param_bytes"]["text"] + rows[1]["stages"][0]["param_bytes"]["lm_head"]
    )
    tp1 = rows[1]["stages"][0]["param_bytes"]
    assert weights(m, 1) == expected + tp1["vision"] + tp1["vision_proj"] == engine_weights(rows[1])
    tp2 = rows[2]["stages"][0]["param_bytes"]
    assert weights(m, 2) == tp2["text"] + tp2["lm_head"] + tp2["vision"] + tp2["vision_proj"]
    spec = rows[1]["stages"][0]["layer_specs"][0]
    assert (spec["layers"], spec["num_kv_heads"], spec["head_size"]) == (24, m.num_kv_heads, m.head_dim)
    assert m.layer_mlp.count(MlpKind.DENSE) == 4


def test_moondream3_text_settings_under_config_are_refused() -> None:
    """Moondream3Config builds the text model from `config.text` (vLLM's own names: dim, n_layers, moe …), which
    kvtop does not read: a config stating any is refused by name rather than planned from the class defaults."""
    data = {**config("Moondream3ForCausalLM"), "config": {"text": {"n_layers": 12}}}
    with pytest.raises(UnsupportedModelError) as refused:
        model(data)
    assert refused.value.field == "config.text"


def test_gigachat3_5_gated_delta_nets_gated_norms_and_experts() -> None:
    """SGLang 0.5.23's GigaChat35ForCausalLM at TP 1 (the class default: no full_attention_layers, so 12 gated
    delta nets): embed_tokens and lm_head [128256, 1280]; per layer in_proj_qkvz [6144, 1280], in_proj_ba [32,
    1280], conv1d [4096, 1, 4], out_proj [1280, 2048], A_log fp32 [16], dt_bias [16], norm [128], and four norms
    (layernorm_type pre_post) each [1280] with gate_up_lowrank [16, 1280] and gate_down_lowrank [1280, 16]
    (norm_type ZeroCenteredGatedNorm); layer 0 a dense gate_up [1792, 1280] and down [1280, 896]; layers 1-11 a
    gate [64, 1280] with an fp32 e_score_correction_bias [64], experts w13 [64, 1792, 1280] and w2 [64, 1280, 896],
    shared gate_up [3584, 1280] and down [1280, 1792]; model.norm gated too: 5,918,344,576 B. No layer keeps KV:
    the engine's cell is 0, and its pool holds --max-total-tokens or the context length (_zero_kv_max_tokens)."""
    m = model(config("GigaChat35ForCausalLM"))
    h = 1280
    gated_norm = h + 2 * 16 * h
    gdn = 6144 * h + 32 * h + 4096 * 4 + h * 2048 + 16 + 128 + 4 * gated_norm  # + A_log fp32 below
    moe = 64 * h + 64 * 1792 * h + 64 * h * 896 + 3584 * h + h * 1792
    expected = (2 * 128256 * h + 12 * gdn + 1792 * h + h * 896 + 11 * moe + gated_norm) * BF16 + 12 * 16 * 4
    expected += 11 * 64 * 4
    rows = engine_rows("sglang", "GigaChat35ForCausalLM")
    assert weights(m, 1) == engine_weights(rows[1]) == expected == 5_918_344_576
    assert weights(m, 2) == engine_weights(rows[2])
    assert rows[1]["cell_size"] == 0 and set(m.layer_attention) == {LayerKind.LINEAR}
    ledger = sglang_plan(m, 1)
    assert ledger.engine.token_capacity == 8192 // ledger.engine.page_size * ledger.engine.page_size


def test_gigachat3_5_latent_attention_layers() -> None:
    """A variant with MLA on layers 1 and 3 of 4 (full_attention_layers, vocab 32,000): SGLang 0.5.23 at TP 1 builds
    on each MLA layer fused_qkv_a_proj_with_mqa [2112, 1280], q_b_proj [3072, 1536], kv_b_proj [4096, 512], o_proj
    [1280, 2048], attn_gate [2048, 1280] (gated_attention), and gated q_a / kv_a norms ([1536] + [16, 1536] +
    [1536, 16]; [512] + [16, 512] + [512, 16]); the model 1,636,634,560 B in all."""
    data = {**config("GigaChat35ForCausalLM"), "num_hidden_layers": 4, "full_attention_layers": [1, 3],
            "vocab_size": 32000}  # fmt: skip
    m = model(data)
    assert m.layer_attention == (LayerKind.LINEAR, LayerKind.FULL, LayerKind.LINEAR, LayerKind.FULL)
    assert weights(m, 1) == 1_636_634_560


def test_hunyuan_moe_v1_on_vllm_0_33_is_refused_as_its_transformers_backend_builds_it() -> None:
    """vLLM 0.33.0's registry maps HunYuanMoEV1ForCausalLM to ("transformers", "TransformersMoEForCausalLM"), whose
    transformers HunYuanMoEV1DecoderLayer always builds HunYuanMoEV1Moe (gate wg in fp32, experts, shared_mlp) and
    query/key layernorms: not SGLang's modules, which the entry reads; kvtop refuses it there by name."""
    m = model(config("HunYuanMoEV1ForCausalLM"))
    settings = parse_flags("vllm", ["--tp", "1", "--engine-version", "0.33.0"])
    with pytest.raises(UnsupportedModelError) as refused:
        predict(m, settings, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100")
    assert refused.value.field == "architectures" and "Transformers backend" in str(refused.value)


def test_vllm_0_13_reads_no_nemotron_h_block_list() -> None:
    """vLLM 0.13.0's own NemotronHConfig (transformers_utils/configs/nemotron_h.py) reads only
    hybrid_override_pattern, its default "M-M-M-M*-…" where absent: a config that states only layers_block_type
    (Nemotron-3's, either vocabulary) would build another model there, so kvtop refuses it on 0.13.0 and plans it
    on 0.33.0 (transformers 5.x's class reads the list) and where the config states the pattern string."""
    # served as NemotronHForCausalLM: 0.13.0 registers no NemotronHPuzzleForCausalLM, and a class the release lacks
    # is refused first ("no model class"), before its config is read
    data = {**config("NemotronHPuzzleForCausalLM"), "architectures": ["NemotronHForCausalLM"]}
    m = model(data)
    old = parse_flags("vllm", ["--tp", "1", "--engine-version", "0.13.0"])
    with pytest.raises(InputError) as refused:
        predict(m, old, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100")
    assert refused.value.field == "layers_block_type"
    pattern = {k: v for k, v in data.items() if k != "layers_block_type"} | {
        "hybrid_override_pattern": "ME*-"
    }
    assert model(pattern).layer_attention == m.layer_attention
    assert predict(
        model(pattern), old, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100"
    ).kv_bytes_per_token
