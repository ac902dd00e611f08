"""Mistral-format checkpoints (`params.json`, vLLM `--config-format mistral`) read as vLLM 0.33.0 maps them.

Expected bytes are vLLM 0.33.0's meta build of each params.json folder (benchmarks/engine_diff/registry_sweep.py
`--engine vllm --set real --only <name>`, the rows in tests/data/engine_diff/registry/vllm-0.33.0.json), written
out per tensor from vLLM's code below (models/pixtral.py, mistral_large_3.py over deepseek_v2.py); kvtop's side
is recomputed from the params.json.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.kv import kv_book
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.mistral_params import NOTE, config_from_params, model_from_params
from kvtop.domain.model import ModelSpec
from kvtop.domain.weights import weights_book
from kvtop.sources.hub import load_model
from tests.data_paths import CONFIGS

RECON = CONFIGS / "recon"
LARGE3 = "recon--mistralai--Mistral-Large-3-675B-Instruct-2512"
PIXTRAL = "recon--mistralai--Pixtral-12B-2409"
SMALL31 = "recon--mistralai--Mistral-Small-3.1-24B-Instruct-2503"
BF16 = 2


def _params(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((RECON / name / "params.json").read_text())
    return loaded


def _model(name: str) -> ModelSpec:
    return model_from_params(_params(name), source=name, name=name)


def _book_bytes(model: ModelSpec, tp: int, component: str | None = None) -> int:
    book = weights_book(
        model, ParallelLayout(tp=tp), range(model.num_layers), first_stage=True, last_stage=True
    )
    return sum(row.bytes for row in book.rows if component is None or row.component == component)


def _engine(name: str, tp: int) -> dict[str, int]:
    row = row_of("vllm", "0.33.0", name, tp)
    return {child: int(size) for child, size in row["stages"][0]["param_bytes"].items()}


def test_a_folder_with_params_json_and_no_config_json_is_read_and_says_how() -> None:
    model = load_model(str(RECON / PIXTRAL))  # the folder, as an operator points kvtop at a checkpoint
    assert model.name == PIXTRAL and model.config_format == NOTE
    assert load_model(str(RECON / PIXTRAL / "params.json")).config_format == NOTE


def test_large3_is_deepseek_v3s_layout_with_vllms_kv_per_token() -> None:
    config = config_from_params(_params(LARGE3), source=LARGE3)
    assert config["architectures"] == ["MistralLarge3ForCausalLM"] and config["model_type"] == "deepseek_v3"
    assert (config["n_routed_experts"], config["moe_intermediate_size"], config["first_k_dense_replace"]) == (
        128,
        4096,
        3,
    )
    model = _model(LARGE3)
    # vLLM MLAAttentionSpec per layer: one head of kv_lora_rank 512 + qk_rope_head_dim 64 = 576, bf16 → 1,152 B;
    # 61 layers → 70,272 B a token (the sweep's logged bytes_per_token at TP 1 and 2: the latent is not split)
    storage = engine_rules("vllm").kv_storage
    for tp in (1, 2):
        book = kv_book(model, ParallelLayout(tp=tp), range(model.num_layers), "bf16", storage)
        assert sum(pool.bytes_per_token for pool in book.pools) == 61 * 576 * BF16 == 70_272


@pytest.mark.parametrize("tp", [1, 2])
def test_large3_weights_are_vllms_meta_build(tp: int) -> None:
    engine = _engine(LARGE3, tp)
    assert sum(engine.values()) == {1: 1_346_842_179_584, 2: 674_398_779_392}[tp]
    # params.json maps to topk_method None (adapt_config_dict _remap_moe_args), so DeepseekV2MoE builds no fp32
    # e_score_correction_bias: kvtop counted 58 MoE layers × 128 experts × 4 B = 29,696 B too many before
    assert _model(LARGE3).moe is not None and not _model(LARGE3).moe.router_bias  # type: ignore[union-attr]
    assert _book_bytes(_model(LARGE3), tp) == sum(engine.values())


# Pixtral-12B's tower as vLLM 0.33.0 pixtral.py builds it (bf16): patch_conv [1024, 3, 16, 16] and ln_pre [1024]
# whole; 24 blocks of wqkv 3 × [1024, 1024], wo [1024, 1024], w13 2 × [4096, 1024], w2 [1024, 4096] split over TP,
# their two RMSNorms [1024] whole; the adapter (ReplicatedLinear) w_in [5120, 1024] + bias, w_out [5120, 5120] + bias
PIXTRAL_WHOLE = (3 * 16 * 16 * 1024 + 1024 + 24 * 2 * 1024) * BF16
PIXTRAL_SPLIT = 24 * (4 * 1024 * 1024 + 3 * 1024 * 4096) * BF16
PIXTRAL_ADAPTER = (1024 * 5120 + 5120 + 5120 * 5120 + 5120) * BF16


@pytest.mark.parametrize("tp", [1, 2])
def test_pixtral_tower_and_adapter_are_vllms_meta_build(tp: int) -> None:
    engine = _engine(PIXTRAL, tp)
    assert engine["vision_language_adapter"] == PIXTRAL_ADAPTER == 62_935_040  # whole on every rank
    assert engine["vision_encoder"] == PIXTRAL_WHOLE + PIXTRAL_SPLIT // tp
    assert _book_bytes(_model(PIXTRAL), tp, "vision") == PIXTRAL_WHOLE + PIXTRAL_SPLIT // tp + PIXTRAL_ADAPTER
    assert (
        _book_bytes(_model(PIXTRAL), tp) - _book_bytes(_model(PIXTRAL), tp, "vision")
        == engine["language_model"]
    )


@pytest.mark.parametrize("tp", [1, 2])
def test_mistral_small_3_1_patch_merger_and_pre_norm_are_whole(tp: int) -> None:
    engine = _engine(SMALL31, tp)
    # patch_size 14; pre_mm_projector_norm [1024] and patch_merger [1024, 4096] whole; adapter without biases
    whole = (3 * 14 * 14 * 1024 + 1024 + 24 * 2 * 1024) * BF16
    around = (1024 + 1024 * 4 * 1024) * BF16
    adapter = (1024 * 5120 + 5120 * 5120) * BF16
    assert engine["vision_encoder"] == whole + PIXTRAL_SPLIT // tp
    assert engine["pre_mm_projector_norm"] + engine["patch_merger"] == around
    assert engine["vision_language_adapter"] == adapter
    assert _book_bytes(_model(SMALL31), tp, "vision") == whole + PIXTRAL_SPLIT // tp + around + adapter


def test_sliding_window_list_becomes_layer_types() -> None:
    params = {**_params(PIXTRAL), "n_layers": 4, "sliding_window": [None, 4096]}
    config = config_from_params(params, source="test")["text_config"]
    assert (
        config["layer_types"] == ["full_attention", "sliding_attention"] * 2
        and config["sliding_window"] == 4096
    )


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda p: p.update(sliding_window_pattern=2), "params.json sliding_window_pattern"),
        (lambda p: p["moe"].update(num_shared_experts=0), "params.json moe.num_shared_experts"),
        (lambda p: p["moe"].update(route_every_n=2), "params.json moe.route_every_n"),
        (lambda p: p["moe"].update(dense_every=2), "params.json moe.dense_every"),
        (lambda p: p["yarn"].update(temperature=2), "params.json yarn.temperature"),
        (lambda p: p.update(use_biases=True), "params.json use_biases"),
        (lambda p: p.update(multimodal={"whisper_model_args": {"encoder_args": {"dim": 1280, "causal": True}}}),
         "params.json multimodal.whisper_model_args.encoder_args.causal"),
        (lambda p: p.update(multimodal={"whisper_model_args": {"encoder_args": {"dim": 1280, "ffn_type": "glu"}}}),
         "params.json multimodal.whisper_model_args.encoder_args.ffn_type"),
    ],
)  # fmt: skip
def test_a_field_that_may_change_the_layout_is_refused_naming_it(edit: Any, field: str) -> None:
    params = copy.deepcopy(_params(LARGE3))
    edit(params)
    with pytest.raises(UnsupportedModelError) as refused:
        config_from_params(params, source="test")
    assert refused.value.field == field


def test_a_vision_encoder_without_its_sizes_is_an_input_error() -> None:
    params = copy.deepcopy(_params(PIXTRAL))
    del params["vision_encoder"]["num_hidden_layers"]
    with pytest.raises(InputError) as missing:
        _model_from(params)
    # the file's key, not the tower's name for it (depth)
    assert missing.value.field == "params.json vision_encoder.num_hidden_layers"


MISTRAL_7B = "recon--mistralai--Mistral-7B-v0.1"


@pytest.mark.parametrize(
    ("name", "edit", "field", "words"),
    [
        (MISTRAL_7B, lambda p: p.pop("n_layers"), "params.json n_layers", "missing"),
        (MISTRAL_7B, lambda p: p.update(n_heads="32"), "params.json n_heads", "must be an integer (got '32')"),
        (MISTRAL_7B, lambda p: p.update(n_kv_heads=7), "params.json n_kv_heads", "7 KV heads cannot serve 32"),
        (MISTRAL_7B, lambda p: p.update(dim=-1), "params.json dim", "must be at least 1 (got -1)"),
        (MISTRAL_7B, lambda p: p.update(tied_embeddings="x"), "params.json tied_embeddings", "must be true or false"),
        (PIXTRAL, lambda p: p.update(n_heads="x"), "params.json n_heads", "must be an integer"),
        (PIXTRAL, lambda p: p["vision_encoder"].update(num_channels="x"), "params.json vision_encoder.num_channels",
         "must be an integer"),
        (LARGE3, lambda p: p["moe"].update(num_experts="x"), "params.json moe.num_experts", "must be an integer"),
        (LARGE3, lambda p: p.update(kv_lora_rank="x"), "params.json kv_lora_rank", "must be an integer"),
        # vLLM reads params.json into a bare PreTrainedConfig (mistral.py adapt_config_dict): no class default
        # stands in for a key its classes read as an attribute (was: MistralConfig's 32 layers, DeepseekV3Config's
        # moe_intermediate_size 2048, taken silently)
        (PIXTRAL, lambda p: p.pop("n_layers"), "params.json n_layers", "missing"),
        (PIXTRAL, lambda p: p.pop("hidden_dim"), "params.json hidden_dim", "missing"),
        (LARGE3, lambda p: p["moe"].pop("expert_hidden_dim"), "params.json moe.expert_hidden_dim", "missing"),
        (LARGE3, lambda p: p["moe"].pop("num_experts"), "params.json moe.num_experts", "missing"),
    ],
)  # fmt: skip
def test_an_error_in_params_json_names_the_files_own_key(
    name: str, edit: Any, field: str, words: str
) -> None:
    """An operator trial read `num_hidden_layers: missing` for a params.json that has no such key (it says
    `n_layers`; vLLM's _remap_general_mistral_args renames it): the error names the key as the file spells it."""
    params = copy.deepcopy(_params(name))
    edit(params)
    with pytest.raises(InputError) as bad:
        model_from_params(params, source="params.json")
    assert bad.value.field == field and str(bad.value).startswith(f"{field}: ") and words in str(bad.value)


def test_keys_vllm_reads_with_a_fallback_take_vllms_fallback_not_a_class_default() -> None:
    """Without `n_kv_heads` vLLM's LlamaDecoderLayer takes `getattr(config, "num_key_value_heads",
    config.num_attention_heads)`: every head its own KV (the file's n_heads 32), not MistralConfig's 8; without
    `q_lora_rank` DeepseekV2's `hasattr` builds no query compression (None), not DeepseekV3Config's 1536."""
    params = copy.deepcopy(_params(MISTRAL_7B))
    del params["n_kv_heads"]
    assert _model_from(params).num_kv_heads == _params(MISTRAL_7B)["n_heads"] == 32
    params = copy.deepcopy(_params(LARGE3))
    del params["q_lora_rank"]
    model = _model_from(params)
    assert model.mla is not None and model.mla.q_lora_rank is None


def _model_from(params: dict[str, Any]) -> ModelSpec:
    return model_from_params(params, source=str(Path("test")))


def test_plan_says_the_model_was_read_from_params_json(capsys: pytest.CaptureFixture[str]) -> None:
    from kvtop.cli import main

    folder = str(RECON / LARGE3)
    assert main(["plan", "--model", folder, "--engine", "vllm", "--tp", "8", "--gpu", "H200", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["config_format"] == NOTE and out["kv_bytes_per_token"] == 70_272
    assert main(["plan", "--model", folder, "--engine", "vllm", "--tp", "8", "--gpu", "H200"]) == 0
    assert f"note: {NOTE}" in capsys.readouterr().out


@pytest.mark.parametrize("tp", [1, 2])
def test_sglang_builds_large3_from_params_json_as_vllm_does(tp: int) -> None:
    # SGLang 0.5.23 takes its Mistral parser for a path naming mistral-large-3 (mistral_utils.is_mistral_model); its
    # meta build holds vLLM's bytes, and its cell is the latent's 61 × 576 × 2 B
    row = row_of("sglang", "0.5.23", LARGE3, tp)
    assert sum(int(b) for b in row["stages"][0]["param_bytes"].values()) == sum(_engine(LARGE3, tp).values())
    assert row["cell_size"] == 70_272


@pytest.mark.parametrize("name", [PIXTRAL, SMALL31])
def test_sglang_refuses_a_params_json_its_path_does_not_name(
    capsys: pytest.CaptureFixture[str], name: str
) -> None:
    from kvtop.cli import main

    row = row_of("sglang", "0.5.23", name, 1)
    assert (
        row["status"] == "refused" and "reads a params.json only where the model path names" in row["message"]
    )
    argv = [
        "plan",
        "--model",
        str(RECON / name),
        "--engine",
        "sglang",
        "--engine-version",
        "0.5.23",
        "--gpu",
        "H200",
    ]
    assert main(argv) == 2
    assert "reads a params.json only where the model path names mistral-large-3" in capsys.readouterr().err


MISTRAL_7B = "recon--mistralai--Mistral-7B-v0.1"


@pytest.mark.parametrize("tp", [1, 2])
def test_an_int_sliding_window_windows_every_layer_as_vllm_builds_it(tp: int) -> None:
    # adapt_config_dict: an int sliding_window → layer_types all sliding_attention; vLLM's spec per layer: a
    # SlidingWindowSpec of 4096, 8 KV heads ÷ TP of 128, bf16: 2 × (8 / tp) × 128 × 2 B a token (page 65,536 B / 16
    # at TP 1), 32 layers
    row = row_of("vllm", "0.33.0", MISTRAL_7B, tp)
    (spec,) = row["stages"][0]["layer_specs"]
    assert (spec["kind"], spec["layers"], spec["sliding_window"]) == ("SlidingWindowSpec", 32, 4096)
    assert spec["page_size_bytes"] // spec["block_size"] == 2 * (8 // tp) * 128 * BF16
    model = _model(MISTRAL_7B)
    book = kv_book(model, ParallelLayout(tp=tp), range(32), "bf16", engine_rules("vllm").kv_storage)
    assert [(p.name, p.layers, p.bytes_per_token) for p in book.pools] == [
        ("swa", 32, 32 * 2 * (8 // tp) * 128 * BF16)
    ]
    assert _book_bytes(model, tp) == sum(_engine(MISTRAL_7B, tp).values())


def test_explain_says_the_model_was_read_from_params_json(capsys: pytest.CaptureFixture[str]) -> None:
    from kvtop.cli import main

    log = str(CONFIGS.parent / "cases" / "vllm" / "vllm-10517-llama31-8b-3090-v0" / "engine.log")
    assert main(["explain", log, "--model", str(RECON / MISTRAL_7B), "--gpu", "RTX3090"]) == 0
    assert f"note: {NOTE}" in capsys.readouterr().out


MINISTRAL3 = "recon--mistralai--Ministral-3-3B-Instruct-2512"


@pytest.mark.parametrize("tp", [1, 2])
def test_ministral3_tied_yarn_and_patch_merge_are_vllms_meta_build(tp: int) -> None:
    # tied_embeddings true: one [131072, 3072] table (vocab-parallel) and no lm_head of its own; yarn and
    # llama_4_scaling move no bytes; the tower as Mistral-Small-3.1's (patch 14, merge 2, pre-norm) into width 3072
    engine = _engine(MINISTRAL3, tp)
    assert "lm_head" not in engine and _model(MINISTRAL3).tie_word_embeddings
    config = config_from_params(_params(MINISTRAL3), source=MINISTRAL3)["text_config"]
    assert config["rope_parameters"]["rope_type"] == "yarn" and config["rope_parameters"]["beta_fast"] == 32.0
    whole = (3 * 14 * 14 * 1024 + 1024 + 24 * 2 * 1024) * BF16
    around = (1024 + 1024 * 4 * 1024) * BF16
    adapter = (1024 * 3072 + 3072 * 3072) * BF16
    assert engine["vision_language_adapter"] == adapter == 25_165_824
    assert _book_bytes(_model(MINISTRAL3), tp, "vision") == whole + PIXTRAL_SPLIT // tp + around + adapter
    assert _book_bytes(_model(MINISTRAL3), tp) == sum(engine.values())
