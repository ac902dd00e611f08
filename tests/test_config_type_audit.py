"""The config type audit's classifier (benchmarks/architectures/config_type_audit.py, #26): kvtop's own type and
shape complaints count as defects, an engine's quoted message or a named refusal does not."""

from __future__ import annotations

import pytest

from benchmarks.architectures.config_type_audit import TYPE_COMPLAINT, bucket, model_configs
from kvtop.domain.config_schema import _PLAIN


@pytest.mark.parametrize("phrase", sorted(set(_PLAIN.values()) - {"missing"}))
def test_every_schema_type_phrase_is_a_defect(phrase: str) -> None:
    assert TYPE_COMPLAINT.search(f"text_config.hidden_size: {phrase} (got a list of 2)")


@pytest.mark.parametrize(
    "line",
    [
        "text_config.moe_num_experts: must be one [text, vision] pair in x.json",  # moe_rules.py before this fix
        "layer_types: must list one type per layer (28), not 27",
        "text_config.num_attention_heads: must have at most 4,096 items",
    ],
)
def test_kvtops_shape_complaints_are_defects(line: str) -> None:
    assert TYPE_COMPLAINT.search(line)


@pytest.mark.parametrize(
    "line",
    [
        # SGLang's own message, quoted in an engine rule (registry default GraniteSWAForCausalLM)
        "layer_types: SGLang latest takes GraniteSWAForCausalLM as a hybrid sliding-window model ('Hybrid SWA model "
        "must have at least one SWA layer')",
        "text_config.moe_num_experts: one expert count (64) for both expert groups beside a moe_intermediate_size "
        "pair is a converted layout kvtop does not model",
        "hidden_size: missing (a generic reading of 'moondream1' needs it)",
    ],
)
def test_named_refusals_are_not_defects(line: str) -> None:
    assert not TYPE_COMPLAINT.search(line)


def test_the_audit_reads_configs_and_params_but_not_quant_siblings() -> None:
    names = [path.name for path in model_configs()]
    assert "params.json" in names and "Qwen--Qwen3-8B.json" in names
    assert not any("hf_quant_config" in name for name in names)
    assert bucket("--model: vLLM 0.33.0 (no release stated: the newest read) has no model class for X") == (
        "--model: the engine release has no model class for the architecture"
    )
