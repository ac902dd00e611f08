"""The registry sweep's SGLang rows that say the engine cannot build a config (benchmarks/engine_diff/
sglang_config_failures.py): each reason's premise holds in the config the engine was given, and a failure a
stand-in causes is never taken for the engine's answer.

The rows are SGLang 0.5.23's own answers (tests/data/engine_diff/registry/sglang-0.5.23.json, the sweep run on
meta); the premises are read from the config files themselves (tests/data/configs, the class defaults under
tests/data/engine_diff/registry/configs), not from the harness.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks.engine_diff.registry_configs import default_configs, real_configs
from benchmarks.engine_diff.registry_sweep import load_rows

ROOT = Path(__file__).resolve().parents[1]
CANNOT = "SGLang cannot build this config on any device"


def _rows(config: str) -> list[dict[str, Any]]:
    rows = [r for r in load_rows("sglang", "0.5.23") if r["config"] == config]
    assert sorted(r["tp"] for r in rows) == [1, 2], config
    return rows


def _config(name: str) -> dict[str, Any]:
    path = {c.name: c.path for c in real_configs() + default_configs()}[name]
    return dict(json.loads(Path(path).read_text()))


def _refused_for(config: str, words: str) -> None:
    for row in _rows(config):
        assert row["status"] == "refused", (config, row["tp"], row["status"])
        assert row["message"].startswith(CANNOT) and words in row["message"], row["message"][:200]


def test_gemma2_without_hidden_act_is_refused_where_sglang_reads_it() -> None:
    """models/gemma2.py Gemma2DecoderLayer reads config.hidden_act; MLC's preset states hidden_activation only."""
    config = _config("mlc--gemma2_2b-jpn")
    assert "hidden_act" not in config and config["hidden_activation"] == "gelu_pytorch_tanh"
    _refused_for("mlc--gemma2_2b-jpn", "config.hidden_act")


def test_the_published_layer_patterns_let_sglang_build_the_defaults() -> None:
    """configs/qwen3_next.py layers_block_type reads full_attention_interval and models/exaone4.py takes
    len(config.sliding_window_pattern): the transformers defaults gave layer_types with no interval / the int 4, and
    SGLang refused them (ENGINE_FAILURES). The defaults now state them as the published configs do (published_fields.py
    DERIVED_FIELDS; Qwen/Qwen3.5-27B's text_config: 4), and SGLang builds them."""
    published = _config("Qwen--Qwen3.5-27B")["text_config"]
    assert published["full_attention_interval"] == 4
    for name in ("default--Qwen3_5ForCausalLM", "default--Qwen3_5MoeForCausalLM"):
        config = _config(name)
        assert config["full_attention_interval"] == 4 and config["layer_types"][3] == "full_attention"
        assert {row["status"] for row in _rows(name)} == {"ok"}
    assert _config("default--Exaone4ForCausalLM")["sliding_window_pattern"] == "LLLG"
    assert {row["status"] for row in _rows("default--Exaone4ForCausalLM")} == {"ok"}


def test_nemotron_mixed_precision_without_config_quantization_is_refused() -> None:
    """arg_groups/model_overrides/nemotron_h.py reads hf_config.quantization_config for MIXED_PRECISION ModelOpt."""
    name = "nvidia--NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4"
    assert "quantization_config" not in _config(name)
    quant = {c.name: c for c in real_configs()}[name].quant_file()
    assert (
        quant is not None
        and json.loads(Path(quant).read_text())["quantization"]["quant_algo"] == "MIXED_PRECISION"
    )
    _refused_for(name, "quantization_config")


def test_a_model_type_no_one_knows_without_checkpoint_code_is_refused() -> None:
    """sgl-project's DeepSeek-V4 FP8 configs: model type deepseek_ref, no auto_map (SGLang registers deepseek_v4)."""
    for name in ("sgl-project--DeepSeek-V4-Flash-FP8", "sgl-project--DeepSeek-V4-Pro-FP8"):
        config = _config(name)
        assert config["model_type"] == "deepseek_ref" and "auto_map" not in config
        for row in _rows(name):
            assert row["status"] == "refused" and "no auto_map" in row["message"]


def test_deepseek_v4_with_kv_lora_rank_null_is_refused() -> None:
    """utils/hf_transformers/config.py parse reloads a deepseek_v4 config with _DeepseekV4ConfigAlias, a
    transformers 5.19 DeepseekV3Config (strict `kv_lora_rank: int`): RedHatAI's NVFP4-FP8 config states null."""
    assert _config("RedHatAI--DeepSeek-V4-Flash-NVFP4-FP8")["kv_lora_rank"] is None
    _refused_for("RedHatAI--DeepSeek-V4-Flash-NVFP4-FP8", "strict field kv_lora_rank")


def test_missing_checkpoint_modeling_code_stays_a_harness_error() -> None:
    """The Transformers backend needs the checkpoint's modeling code, which a config folder lacks: not the engine's
    answer, unless the published class is one the backend refuses when it is there (InternLM v1: below)."""
    from benchmarks.engine_diff.sglang_config_failures import classify

    class _Missing(ValueError):
        pass

    exc = _Missing("Cannot find model module … loading the custom model from auto_map failed")
    qwen = str(ROOT / "tests" / "data" / "configs" / "families")  # no config.json there: no auto_map read
    assert classify(exc, {"dir": qwen}) == ("harness-error", f"the config folder holds no modeling code (a hub "
                                            f"checkout has it): {exc}")  # fmt: skip


def test_internlm_v1_remote_code_is_refused_by_the_transformers_backend() -> None:
    """InternLM v1 has no SGLang class; its auto_map model, modeling_internlm.InternLMForCausalLM, sets no
    _supports_attention_backend (internlm/internlm-20b modeling_internlm.py), which srt/models/transformers.py
    refuses."""
    assert _config("internlm--internlm-20b")["auto_map"]["AutoModel"] == "modeling_internlm.InternLMForCausalLM"
    _refused_for("internlm--internlm-20b", "_supports_attention_backend=False")


def test_ming_flash_omni_rope_factor_null_is_refused_by_get_context_length() -> None:
    """utils/hf_transformers/common.py get_context_length multiplies the positions by rope_scaling.get('factor', 1):
    inclusionAI's Ming-flash-omni-Preview config states its llm_config's video_rope factor null (None × int)."""
    rope = _config("inclusionAI--Ming-flash-omni-Preview")["llm_config"]["rope_scaling"]
    assert "factor" in rope and rope["factor"] is None
    _refused_for("inclusionAI--Ming-flash-omni-Preview", "get_context_length")


def test_intern_s1_pro_decoder_layer_without_start_layer_is_refused() -> None:
    """SGLang 0.5.23's models/interns1pro.py InternS1ProTextDecoderLayer.__init__ takes no start_layer, which
    models/qwen2_moe.py's layer builder always passes: every InternS1ProForConditionalGeneration build fails."""
    assert _config("internlm--Intern-S1-Pro")["architectures"] == ["InternS1ProForConditionalGeneration"]
    _refused_for("internlm--Intern-S1-Pro", "takes no start_layer")


def test_mamba2_without_intermediate_size_is_refused_as_kvtop_refuses() -> None:
    """SGLang 0.5.23's Mamba2Config subclasses transformers 5.19's, which defines `expand` and never sets
    intermediate_size; models/mamba2.py:72 Mamba2DecoderLayer reads config.intermediate_size. The class default (the
    registry's config) states none, so every launch of it fails: the engine's refusal, and kvtop's
    (engines/sglang/config_checks.py UNDEFAULTED_FIELDS_ERAS). Before: 'engine could not build' (an AttributeError
    taken for a harness gap)."""
    config = _config("default--Mamba2ForCausalLM")
    assert "intermediate_size" not in config and config["expand"] == 2
    _refused_for("default--Mamba2ForCausalLM", "never sets intermediate_size")


def test_intern_s1_composed_default_states_what_sglang_reads() -> None:
    """The registry's InternS1 default is transformers' InternVLConfig (class_configs.json), whose vision config has
    no `dropout` nor `initializer_factor`; SGLang 0.5.23's interns1.py builds models/internvl.py's InternVisionModel,
    which reads both with no default (line 89 `nn.Dropout(config.dropout)`, 257-258 `config.initializer_factor`).
    Session 47 composed them in as SGLang's own InternVisionConfig defaults them (configs/internvl.py:226, :230):
    SGLang builds it at TP 1 and 2 (before: a harness error, HARNESS_CONFIG_LIMITS' reason)."""
    vision = _config("default--InternS1ForConditionalGeneration")["vision_config"]
    assert (vision["dropout"], vision["initializer_factor"]) == (0.0, 0.1)
    assert [row["status"] for row in _rows("default--InternS1ForConditionalGeneration")] == ["ok", "ok"]


def test_a_stand_ins_failure_is_not_taken_for_the_engines() -> None:
    """A shell's missing field raised inside SGLang's code is no config failure (the runner's own rule stands)."""
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks" / "engine_diff"))
    from sglang_config_failures import classify

    try:
        raise AttributeError("stand-in model-runner (ModelRunner without __init__) does not hold 'foo'")
    except AttributeError as exc:
        assert classify(exc, {"dir": str(ROOT)}) is None
