"""Configs as transformers reads them: class defaults for absent fields, nested text configs, twins.

Expected values come from outside kvtop's tables: a config that transformers itself re-saved
(every default written out), an engine log's block size, a family member's published config,
or the arithmetic of the config class's `__post_init__` (cited where used).
"""

from __future__ import annotations

import copy
import json

import pytest

from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model import LayerKind, ModelSpec
from kvtop.domain.model_config import model_from_config
from tests.conftest import CONFIGS

H200 = 143771 << 20
FULL, SLIDING = LayerKind.FULL, LayerKind.SLIDING


def load(name: str) -> dict:
    return json.loads((CONFIGS / name).read_text())


def kv_bytes_per_token(model: ModelSpec, tp: int = 1) -> int:
    flags = ["--tp", str(tp), "--disable-hybrid-swa-memory"]
    return predict(model, parse_flags("sglang", flags), gpu_total_bytes=H200).kv_bytes_per_token


def test_gemma3_as_first_published_reads_as_transformers_resaved_it() -> None:
    """The shared gemma-3-27b-it config was re-saved by transformers 4.56.2, every default written out.

    The hub's first release of the file states only the keys kept below; with Gemma3TextConfig's
    defaults for the rest, kvtop must read the same model as from transformers' own full copy.
    """
    full = load("google--gemma-3-27b-it.json")
    sparse = copy.deepcopy(full)
    kept = {
        "head_dim",
        "hidden_size",
        "intermediate_size",
        "model_type",
        "num_attention_heads",
        "num_hidden_layers",
        "num_key_value_heads",
        "query_pre_attn_scalar",
        "rope_scaling",
        "sliding_window",
    }
    sparse["text_config"] = {k: v for k, v in full["text_config"].items() if k in kept}
    assert {"vocab_size", "max_position_embeddings", "layer_types"} - set(sparse["text_config"]) == {
        "vocab_size",
        "max_position_embeddings",
        "layer_types",
    }
    read_full = model_from_config(full, source="full")
    read_sparse = model_from_config(sparse, source="sparse")
    assert read_sparse.model_dump(exclude={"source", "config_defaults"}) == read_full.model_dump(
        exclude={"source", "config_defaults"}
    )
    assert {("vocab_size", 262_208), ("max_position_embeddings", 131_072)} <= {
        (d.field, d.value) for d in read_sparse.defaults_used
    }


GEMMA3_4B_IT = {  # google/gemma-3-4b-it config.json as first published (transformers 4.50.0.dev0)
    "architectures": ["Gemma3ForConditionalGeneration"],
    "boi_token_index": 255999,
    "eoi_token_index": 256000,
    "eos_token_id": [1, 106],
    "image_token_index": 262144,
    "initializer_range": 0.02,
    "mm_tokens_per_image": 256,
    "model_type": "gemma3",
    "text_config": {
        "hidden_size": 2560,
        "intermediate_size": 10240,
        "model_type": "gemma3_text",
        "num_hidden_layers": 34,
        "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
        "sliding_window": 1024,
    },
    "torch_dtype": "bfloat16",
    "transformers_version": "4.50.0.dev0",
    "vision_config": {
        "hidden_size": 1152,
        "image_size": 896,
        "intermediate_size": 4304,
        "model_type": "siglip_vision_model",
        "num_attention_heads": 16,
        "num_hidden_layers": 27,
        "patch_size": 14,
        "vision_use_head": False,
    },
}


def test_gemma3_4b_takes_its_heads_and_head_dim_from_the_class() -> None:
    """Its config leaves heads, KV heads and head_dim out: Gemma3TextConfig's 8 / 4 / 256, which the
    later hub revision of the same file states explicitly; every 6th of 34 layers is global."""
    model = model_from_config(GEMMA3_4B_IT, source="gemma-3-4b-it")
    assert (model.num_attention_heads, model.num_kv_heads, model.head_dim) == (8, 4, 256)
    assert model.layers_of(FULL) == (5, 11, 17, 23, 29) and model.sliding_window == 1024
    assert model.tie_word_embeddings and model.vocab_size == 262_208
    assert kv_bytes_per_token(model) == 34 * 4 * 256 * 2 * 2 == 139_264
    assert {("num_attention_heads", 8), ("num_key_value_heads", 4), ("head_dim", 256)} <= {
        (d.field, d.value) for d in model.defaults_used
    }


def test_internlm_20b_is_a_llama_twin_with_the_lmdeploy_block_size() -> None:
    """LMDeploy case 1703 logs 75 MiB blocks of 64 tokens for internlm-chat-20b: 78,643,200 / 64 B a token."""
    model = model_from_config(load("internlm--internlm-20b.json"), source="internlm-20b")
    assert model.model_type == "internlm" and not model.attention_bias  # "bias": false in this config
    assert kv_bytes_per_token(model) == 78_643_200 // 64 == 1_228_800


def test_internlm_without_bias_key_takes_the_remote_class_default() -> None:
    cfg = load("internlm--internlm-20b.json")
    del cfg["bias"]
    assert model_from_config(cfg, source="x").attention_bias  # InternLMConfig(bias=True)


def test_olmo3_lays_out_three_sliding_layers_then_a_full_one() -> None:
    """Olmo3Config.__post_init__: 'sliding_attention' if (i + 1) % 4 else 'full_attention'; window 4096."""
    cfg = {
        **load("meta-llama--Llama-3.1-8B.json"),
        "model_type": "olmo3",
        "architectures": ["Olmo3ForCausalLM"],
    }
    model = model_from_config(cfg, source="olmo3")
    assert model.layers_of(FULL) == tuple(range(3, 32, 4)) and len(model.layers_of(SLIDING)) == 24
    assert model.sliding_window == 4096
    stated = {**cfg, "layer_types": ["full_attention"] * 32}
    assert model_from_config(stated, source="olmo3").layers_of(SLIDING) == ()


def test_qwen25_vl_flat_and_nested_read_as_the_qwen25_7b_text_model() -> None:
    """Qwen2.5-VL-7B's text model is Qwen2.5-7B's geometry; old hub configs are flat, new ones nest it."""
    text = load("Qwen--Qwen2.5-7B-Instruct.json")
    base = model_from_config(text, source="qwen2.5-7b")
    flat = {**text, "model_type": "qwen2_5_vl", "vision_config": {"depth": 32, "hidden_size": 1280}}
    nested = {
        "model_type": "qwen2_5_vl",
        "vision_config": flat["vision_config"],
        "text_config": {**text, "model_type": "qwen2_5_vl_text"},
    }
    for cfg in (flat, nested):
        model = model_from_config(cfg, source="vl")
        assert (model.num_layers, model.num_kv_heads, model.head_dim) == (28, 4, 128)
        assert model.attention_bias and model.multimodal and model.vision is not None
        assert model.vision.num_layers == 32 and model.vision.hidden_size == 1280
        assert kv_bytes_per_token(model) == kv_bytes_per_token(base) == 28 * 4 * 128 * 2 * 2


def test_mistral3_nests_a_mistral_text_model() -> None:
    """Mistral3Config's own text defaults are Mistral-Small-3.1's: 40 layers, 8 KV heads of 128."""
    cfg = {
        "architectures": ["Mistral3ForConditionalGeneration"],
        "model_type": "mistral3",
        "text_config": {
            "hidden_size": 5120,
            "num_hidden_layers": 40,
            "num_attention_heads": 32,
            "num_key_value_heads": 8,
            "head_dim": 128,
            "intermediate_size": 32768,
            "vocab_size": 131072,
            "max_position_embeddings": 131072,
            "sliding_window": None,
        },
        "vision_config": {"hidden_size": 1024, "num_hidden_layers": 24, "model_type": "pixtral"},
    }
    model = model_from_config(cfg, source="mistral3")
    assert model.model_type == "mistral" and model.architecture == "Mistral3ForConditionalGeneration"
    assert kv_bytes_per_token(model) == 40 * 8 * 128 * 2 * 2 == 163_840


def test_llava_llm_config_and_ministral_are_read() -> None:
    llava = {"model_type": "llava", "text_config": load("meta-llama--Llama-3.1-8B.json"), "vision_config": {}}
    assert kv_bytes_per_token(model_from_config(llava, source="llava")) == 32 * 8 * 128 * 2 * 2
    internvl = {"model_type": "internvl_chat", "llm_config": load("Qwen--Qwen2.5-7B-Instruct.json")}
    assert model_from_config(internvl, source="internvl").model_type == "qwen2"
    ministral = {**load("mistralai--Mistral-7B-v0.1.json"), "model_type": "ministral"}
    model = model_from_config(ministral, source="ministral")  # MinistralConfig: every layer slides
    assert len(model.layers_of(SLIDING)) == 32 and model.sliding_window == 4096


def test_gemma2_alternates_sliding_and_full_layers() -> None:
    """Gemma2Config.__post_init__: 'sliding_attention' if (i + 1) % 2 else 'full_attention'."""
    cfg = {**load("meta-llama--Llama-3.1-8B.json"), "model_type": "gemma2", "sliding_window": 4096}
    del cfg["tie_word_embeddings"]
    model = model_from_config(cfg, source="gemma2")
    assert model.layers_of(FULL) == tuple(range(1, 32, 2)) and model.tie_word_embeddings  # Gemma2Config: tied
    assert model.head_dim == 256  # its class default, not 4096 / 32
    assert ("head_dim", 256) in {(d.field, d.value) for d in model.defaults_used}


def test_an_unknown_model_type_with_the_standard_fields_is_a_visible_generic_reading() -> None:
    """Issue 26 item 5: no entry is not a dead end. GLM-4-9B's geometry under a name kvtop has no entry for."""
    glm = {
        "architectures": ["FrobForCausalLM"],
        "model_type": "frob",
        "hidden_size": 4096,
        "num_hidden_layers": 40,
        "num_attention_heads": 32,
        "num_key_value_heads": 2,
        "head_dim": 128,
        "vocab_size": 151552,
        "intermediate_size": 13696,
        "max_position_embeddings": 131072,
    }
    model = model_from_config(glm, source="frob")
    assert kv_bytes_per_token(model) == 40 * 2 * 128 * 2 * 2 == 40_960  # 40 layers × 2 KV heads × (K, V) × 2 B
    assert model.reading.startswith("generic reading: no architecture entry for 'frob'; assumed a Llama-shaped")
    assert model.reading in model.not_modelled  # said wherever what kvtop leaves out is said
    # no class defaults in a generic reading: a field it needs must be in the file, and is named
    with pytest.raises(InputError, match=r"^vocab_size: missing \(a generic reading of 'frob' needs it\) \(in frob\)$"):
        model_from_config({k: v for k, v in glm.items() if k != "vocab_size"}, source="frob")
    forced = model_from_config(glm, source="frob", family="llama")
    assert forced.config_model_type == "frob" and any("read as llama" in n for n in forced.not_modelled)


def test_a_generic_reading_without_an_mlp_width_is_refused_naming_it() -> None:
    """MPT-7B's shape (d_model, n_heads, n_layers read as aliases) with its MLP as `expansion_ratio`, a field no
    generic reading knows: a Llama-shaped reading would give it an MLP 0 wide (6.7B read as 1.6B), so it is
    refused naming intermediate_size."""
    mpt = {"architectures": ["MPTForCausalLM"], "model_type": "mpt", "d_model": 4096, "n_heads": 32, "n_layers": 32,
           "expansion_ratio": 4, "max_seq_len": 2048, "vocab_size": 50432}  # fmt: skip
    with pytest.raises(UnsupportedModelError, match=r"^intermediate_size: architecture 'MPTForCausalLM'.*states no"):
        model_from_config(mpt, source="mpt")


def test_an_unknown_model_type_with_a_kv_layout_field_is_refused_naming_that_field() -> None:
    mamba = {**load("meta-llama--Llama-3.1-8B.json"), "model_type": "frob", "architectures": ["FrobLM"],
             "ssm_state_size": 128}  # fmt: skip
    with pytest.raises(UnsupportedModelError, match=r"^ssm_state_size: .*has no architecture entry.*\(Mamba state.*nearest: nemotron_h"):
        model_from_config(mamba, source="x")
    mla = {**load("deepseek-ai--DeepSeek-V3.json"), "model_type": "deepseek_v9", "architectures": ["V9"]}
    model = model_from_config(mla, source="x")  # latent attention is read as DeepSeek reads it, and said
    assert "multi-head latent attention" in model.reading
    assert kv_bytes_per_token(model) == 61 * (512 + 64) * 2  # 61 layers × one latent of 576 × 2 B


def test_a_config_names_its_class_and_the_engines_load_by_it() -> None:
    """An unknown or missing model_type with a class an entry serves is read by that entry (as vLLM's registry
    picks the model class by `architectures`)."""
    cfg = {**load("meta-llama--Llama-3.1-8B.json"), "model_type": "frob"}
    model = model_from_config(cfg, source="x")
    assert model.model_type == "llama" and "by its class LlamaForCausalLM" in model.reading


def test_a_forced_family_takes_no_defaults_from_it() -> None:
    """Forcing qwen3_moe on a config without `num_experts` is an error, not Qwen3MoeConfig's 128 experts."""
    cfg = {**load("Qwen--Qwen3-8B.json"), "model_type": "frob"}
    with pytest.raises(InputError, match=r"^num_experts: missing \(a qwen3_moe config needs it\)"):
        model_from_config(cfg, source="x", family="qwen3_moe")
    with pytest.raises(InputError, match=r"^--model-family: unknown family 'frob'"):
        model_from_config(cfg, source="x", family="frob")


def test_an_absent_head_count_is_the_class_default_but_the_models_shape_never_is() -> None:
    cfg = load("Qwen--Qwen2.5-7B-Instruct.json")
    # a head count left out is transformers' class default, and kvtop says it used it (Gemma-3's real
    # configs leave theirs out); LlamaConfig's num_key_value_heads is None: num_attention_heads
    llama = load("meta-llama--Llama-2-7b-hf.json")
    model = model_from_config({k: v for k, v in llama.items() if k != "num_key_value_heads"}, source="x")
    assert model.num_kv_heads == 32 == llama["num_attention_heads"]
    # but the shape (layers, width) is stated by every real config: a default would plan another model
    for field in ("num_hidden_layers", "hidden_size"):
        with pytest.raises(InputError, match=rf"^{field}: missing \(a qwen2 config needs it\) \(in x\)$"):
            model_from_config({k: v for k, v in cfg.items() if k != field}, source="x")
    with pytest.raises(InputError, match=r"^num_hidden_layers: must be an integer \(got null\) \(in x\)$"):
        model_from_config({**cfg, "num_hidden_layers": None}, source="x")
