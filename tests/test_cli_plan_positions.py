"""`kvtop plan` for a model whose config class names no position field (BLOOM: ALiBi, BloomConfig has none of the
keys the engines derive a length from): the engines' own figure where no key is found, read alike by both.

vLLM v0.33.0 config/model.py `_get_and_verify_max_len`: `derived_max_model_len` stays `float("inf")` when no key is
found, and then "if max_model_len is not None: # If max_model_len is specified, we use it. return max_model_len";
2,048 (`default_max_len`) is taken only where no length is stated. SGLang 0.5.23 utils/hf_transformers/common.py
`get_context_length` ends `return 2048`, and ModelConfig._derive_context_length raises "User-specified context_length
(…) is greater than the derived context_length (…)" unless SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN is set.
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from tests.conftest import CONFIGS

BLOOM = str(CONFIGS / "families" / "bigscience--bloom-560m.json")  # bloom-560m config.json (families/SOURCES.md)
NOMINAL = (
    "max_position_embeddings=2048: vLLM's and SGLang's context where a config names no position field "
    "(vLLM _get_and_verify_max_len, SGLang get_context_length)"
)


def test_a_bloom_plan_under_vllm_takes_a_stated_4096_as_it_is(capsys: pytest.CaptureFixture[str]) -> None:
    """vLLM builds BLOOM-560m at --max-model-len 4,096 (no position key: the stated length is used as is). KV a token:
    24 layers × 2 (K, V) × 16 heads × 64 head dim (1,024 ÷ 16) × 2 B (bf16) = 98,304 B."""
    args = ["plan", "--json", "--no-calibration-store", "--engine", "vllm", "--model", BLOOM, "--gpu", "H100",
            "--max-model-len", "4096"]  # fmt: skip
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["context_length"] == 4096 and out["kv_bytes_per_token"] == 98_304
    assert out["config_nominal_defaults"] == [NOMINAL]
    # BloomConfig has that field: the class's; the file states no dtype: its 2 B are the engines' 16 bit, assumed
    assert out["config_defaults_used"] == ["tie_word_embeddings=True", "torch_dtype=bfloat16 (assumed)"]


def test_a_bloom_plan_under_sglang_at_4096_is_refused_above_its_2048(capsys: pytest.CaptureFixture[str]) -> None:
    """SGLang derives 2,048 for a config with no position key and refuses --context-length 4,096 above it (and it
    registers no BloomForCausalLM: the registry sweep's row, "BloomForCausalLM has no SGlang implementation")."""
    args = ["plan", "--no-calibration-store", "--engine", "sglang", "--model", BLOOM, "--gpu", "H100",
            "--context-length", "4096"]  # fmt: skip
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "has no model class for BloomForCausalLM" in err
    assert ("refuses --context-length 4,096 above the model's 2,048 positions (its default where the config names no "
            "position field)") in err  # fmt: skip
    assert "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1" in err


def test_a_falcon_mamba_plan_under_sglang_names_sglangs_rule_for_its_2048(capsys: pytest.CaptureFixture[str]) -> None:
    """FalconMambaConfig names no position field; SGLang 0.5.23 (and 0.5.6.post2 utils/hf_transformers_utils.py)
    `get_context_length` loops over CONTEXT_LENGTH_KEYS and ends `return 2048`: a SGLang plan's context is 2,048 and
    its note names SGLang's rule, not vLLM's alone (an operator trial read "vLLM's context" on a SGLang plan)."""
    falcon_mamba = str(CONFIGS / "tiiuae--falcon-mamba-7b.json")  # falcon-mamba-7b config.json (configs/SOURCES.md)
    args = ["plan", "--json", "--no-calibration-store", "--engine", "sglang", "--model", falcon_mamba, "--gpu", "H100"]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["context_length"] == 2048
    assert out["config_nominal_defaults"][0] == NOMINAL and "SGLang get_context_length" in NOMINAL
