"""Typed at the door: every malformed config field is one InputError naming the field and the file.

Each row plants one fault in a real config; the rows cover the shapes of the tracebacks a fuzzing
attacker got (issue 17: "'float' object is not subscriptable", "'str' object has no attribute
'get'", "KeyError: 0", "int() argument must be … not 'list'", "cannot fit 'int' into an
index-sized integer", "integer division result too large for a float", "invalid literal for
int() … '模型'") and the impossible configs of issue 21 (more KV heads than heads, bits 0,
a negative chunk size).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from kvtop.domain.errors import InputError
from kvtop.domain.model_config import model_from_config
from tests.conftest import CONFIGS


def config(name: str) -> dict[str, Any]:
    return json.loads((CONFIGS / name).read_text())


def planted(name: str, path: str, value: Any) -> dict[str, Any]:
    """`name`'s config with `value` at the dotted `path` (a missing step is created)."""
    cfg = copy.deepcopy(config(name))
    *steps, last = path.split(".")
    node = cfg
    for step in steps:
        node = node.setdefault(step, {})
    node[last] = value
    return cfg


LLAMA = "meta-llama--Llama-3.1-8B-Instruct.json"
GEMMA = "google--gemma-3-27b-it.json"
DEEPSEEK = "deepseek-ai--DeepSeek-V3.json"
QWEN_FP8 = "Qwen--Qwen3-32B-FP8.json"
SCOUT = "meta-llama--Llama-4-Scout-17B-16E-Instruct.json"
NEMOTRON = "nvidia--Nemotron-H-56B-Base-8K.json"
MIXTRAL = "mistralai--Mixtral-8x7B-v0.1.json"

CASES = [
    # wrong types where a count is read
    (LLAMA, "hidden_size", 4096.5, r"hidden_size: must be an integer \(got 4096\.5\)"),
    (LLAMA, "num_hidden_layers", [32], r"num_hidden_layers: must be an integer \(got a list of 1\)"),
    (LLAMA, "num_attention_heads", "模型", r"num_attention_heads: must be an integer \(got '模型'\)"),
    (LLAMA, "num_key_value_heads", True, r"num_key_value_heads: must be an integer \(got true\)"),
    (LLAMA, "vocab_size", {"0": 1}, r"vocab_size: must be an integer \(got an object\)"),
    (
        LLAMA,
        "max_position_embeddings",
        float("nan"),
        r"max_position_embeddings: must be an integer \(got nan\)",
    ),
    # overflow and absurd sizes
    (LLAMA, "num_hidden_layers", 10**30, r"num_hidden_layers: must be at most 10,000 \(got 1e\+30\)"),
    (LLAMA, "hidden_size", 1 << 40, r"hidden_size: must be at most 1,048,576"),
    (LLAMA, "max_position_embeddings", 1e308, r"max_position_embeddings: must be an integer \(got 1e\+308\)"),
    (LLAMA, "vocab_size", 0, r"vocab_size: must be at least 1 \(got 0\)"),
    (LLAMA, "num_attention_heads", -8, r"num_attention_heads: must be at least 1 \(got -8\)"),
    # nested sections of the wrong shape
    (GEMMA, "text_config", "gemma3_text", r"text_config: must be an object \(got 'gemma3_text'\)"),
    (GEMMA, "text_config", [1, 2], r"text_config: must be an object \(got a list of 2\)"),
    (GEMMA, "text_config.num_hidden_layers", 62.0, r"text_config\.num_hidden_layers: must be an integer"),
    (GEMMA, "text_config.layer_types", "sliding_attention", r"text_config\.layer_types: must be a list"),
    (GEMMA, "text_config.layer_types", ["sliding_attention"] * 3, r"text_config\.layer_types: must list one"),
    (
        GEMMA,
        "text_config.layer_types",
        [0] * 62,
        r"text_config\.layer_types\[0\]: must be a string \(got 0\)",
    ),
    (GEMMA, "text_config.rope_scaling", "linear", r"text_config\.rope_scaling: must be an object"),
    (
        GEMMA,
        "text_config.rope_scaling.factor",
        float("inf"),
        r"rope_scaling\.factor: must be a finite number",
    ),
    (GEMMA, "vision_config", 27, r"vision_config: must be an object \(got 27\)"),
    (GEMMA, "vision_config.num_hidden_layers", -1, r"vision_config\.num_hidden_layers: must be at least 1"),
    (LLAMA, "architectures", "LlamaForCausalLM", r"architectures: must be a list"),
    (LLAMA, "torch_dtype", "int3", r"torch_dtype: unknown dtype 'int3'"),
    # quantization sections
    (QWEN_FP8, "quantization_config", "fp8", r"quantization_config: must be an object \(got 'fp8'\)"),
    (QWEN_FP8, "quantization_config.weight_block_size", 128, r"weight_block_size: must be a list"),
    (
        QWEN_FP8,
        "quantization_config.weight_block_size",
        [0, 128],
        r"weight_block_size\[0\]: must be at least 1",
    ),
    (
        QWEN_FP8,
        "quantization_config.weight_block_size",
        [128],
        r"weight_block_size\[1\]: missing \(got a list of 1\)",
    ),
    (
        QWEN_FP8,
        "quantization_config.modules_to_not_convert",
        "lm_head",
        r"modules_to_not_convert: must be a list",
    ),
    (
        LLAMA,
        "quantization_config",
        {"quant_method": "awq", "bits": 0},
        r"quantization_config\.bits: must be at least 1",
    ),
    (
        LLAMA,
        "quantization_config",
        {"quant_method": "gptq", "bits": "模型"},
        r"quantization_config\.bits: must be an integer",
    ),
    (
        LLAMA,
        "quantization_config",
        {"quant_method": "gptq", "group_size": 0},
        r"group_size: must be a positive group size or -1",
    ),
    (
        LLAMA,
        "quantization_config",
        {"quant_method": "gptq", "group_size": -7},
        r"group_size: must be at least -1",
    ),
    (
        LLAMA,
        "quantization_config",
        {"quant_method": "compressed-tensors", "config_groups": []},
        r"config_groups: must be an object",
    ),
    (
        LLAMA,
        "quantization_config",
        {"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {"num_bits": [4]}}}},
        r"config_groups\.g\.weights\.num_bits: must be an integer",
    ),
    # family fields
    (DEEPSEEK, "kv_lora_rank", "512", r"kv_lora_rank: must be an integer \(got '512'\)"),
    (DEEPSEEK, "n_routed_experts", 1e9, r"n_routed_experts: must be an integer"),
    (DEEPSEEK, "num_experts_per_tok", 300, r"num_experts_per_tok: 300 experts per token out of 256"),
    (MIXTRAL, "num_local_experts", 1 << 20, r"num_local_experts: must be at most 65,536"),
    (
        SCOUT,
        "text_config.attention_chunk_size",
        -8192,
        r"text_config\.attention_chunk_size: must be at least 1",
    ),
    (
        SCOUT,
        "text_config.no_rope_layers",
        [1, 0],
        r"text_config\.no_rope_layers: must list one flag per layer",
    ),
    (NEMOTRON, "hybrid_override_pattern", 5, r"hybrid_override_pattern: must be a string \(got 5\)"),
    (
        NEMOTRON,
        "hybrid_override_pattern",
        "M*",
        r"hybrid_override_pattern: must have one of M \* - E per layer",
    ),
    (NEMOTRON, "mamba_num_heads", 0, r"mamba_num_heads: must be at least 1"),
    ("Qwen--Qwen3-30B-A3B.json", "mlp_only_layers", {"a": 1}, r"mlp_only_layers: must be a list"),
    ("Qwen--Qwen3-30B-A3B.json", "mlp_only_layers", [-1], r"mlp_only_layers\[0\]: must be at least 0"),
    # impossible geometry
    (LLAMA, "num_key_value_heads", 64, r"num_key_value_heads: 64 KV heads cannot serve 32 attention heads"),
    (LLAMA, "num_key_value_heads", 3, r"num_key_value_heads: 3 KV heads cannot serve 32 attention heads"),
    (
        "meta-llama--Llama-2-7b-hf.json",
        "num_attention_heads",
        8192,
        r"num_attention_heads: 8192 heads leave no width",
    ),
]


@pytest.mark.parametrize(("name", "path", "value", "pattern"), CASES, ids=lambda v: str(v)[:40])
def test_a_planted_fault_is_one_line_naming_the_field_and_the_file(
    name: str, path: str, value: Any, pattern: str
) -> None:
    with pytest.raises(InputError, match=pattern) as caught:
        model_from_config(planted(name, path, value), source=name)
    message = str(caught.value)
    assert message.endswith((f" (in {name})", f": {name}")) and "\n" not in message


def test_a_config_that_is_not_an_object_names_the_file() -> None:
    with pytest.raises(InputError, match=r"^must be an object \(got a list of 0\): x\.json$"):
        model_from_config([], source="x.json")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("hf_quant", "pattern"),
    [
        ({"quantization": "NVFP4"}, r"^quantization: must be an object \(got 'NVFP4'\) \(in q\.json\)$"),
        (
            {"quantization": {"quant_algo": "NVFP4", "group_size": "x"}},
            r"^quantization\.group_size: must be an integer",
        ),
        (
            {"quantization": {"quant_algo": "NVFP4", "exclude_modules": [1]}},
            r"^quantization\.exclude_modules\[0\]: must be a string",
        ),
        (
            {"quantization": {"quant_algo": "INT3"}},
            r"^quantization\.quant_algo: ModelOpt algorithm 'INT3' is not modelled",
        ),
    ],
)
def test_hf_quant_config_faults_name_its_own_file(hf_quant: dict[str, Any], pattern: str) -> None:
    with pytest.raises(InputError, match=pattern):
        model_from_config(config(LLAMA), source="config.json", hf_quant_config=hf_quant, hf_source="q.json")


def test_sizes_at_the_bounds_still_plan_and_stay_integers() -> None:
    """10,000 layers of hidden 2^20 is absurd but bounded: a spec, not an overflow or a hang."""
    cfg = planted(LLAMA, "num_hidden_layers", 10_000)
    cfg.update(
        hidden_size=1 << 20, intermediate_size=1 << 24, vocab_size=1 << 24, max_position_embeddings=1 << 32
    )
    model = model_from_config(cfg, source="big")
    assert model.num_layers == 10_000 and model.head_dim == (1 << 20) // 32


def test_a_config_without_model_type_is_read_by_its_class_name() -> None:
    cfg = config(LLAMA)
    del cfg["model_type"]
    model = model_from_config(cfg, source="x")
    assert model.model_type == "llama" and model.reading.endswith("by its class LlamaForCausalLM (no model_type)")
