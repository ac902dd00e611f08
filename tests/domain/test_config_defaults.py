"""The fields a config.json leaves out, read as typed values (`ConfigDefault`): whose figure each is, and its value."""

from __future__ import annotations

import json

from kvtop.domain.config_default import ConfigDefault, DefaultKind
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from tests.conftest import CONFIGS

NOMINAL, CLASS = DefaultKind.KVTOP_NOMINAL, DefaultKind.CLASS_DEFAULT


def _model(path: str) -> ModelSpec:
    return model_from_config(json.loads((CONFIGS / path).read_text()), source=path)


def test_a_state_only_models_head_and_positions_are_kvtops_nominal_figures() -> None:
    """tiiuae/falcon-mamba-7b's config.json states neither num_attention_heads nor max_position_embeddings, and
    FalconMambaConfig has neither field: kvtop's nominal head 1 and vLLM's 2,048 (_get_and_verify_max_len)."""
    model = _model("tiiuae--falcon-mamba-7b.json")
    assert tuple((d.field, d.value, d.kind) for d in model.config_defaults) == (
        ("max_position_embeddings", 2048, NOMINAL),
        ("num_attention_heads", 1, NOMINAL),
    )
    assert model.defaults_used == () and model.positions_nominal
    assert model.nominal_defaults[1].said == (
        "num_attention_heads=1: kvtop's nominal head (no layer attends; no book reads it)"
    )


def test_blooms_left_out_fields_are_class_defaults_with_typed_values() -> None:
    """bigscience/bloom-560m's config.json states no length and no tie_word_embeddings (PretrainedConfig: True)."""
    model = _model("families/bigscience--bloom-560m.json")
    read = tuple((d.field, d.value, d.kind) for d in model.config_defaults)
    assert read == (("max_position_embeddings", 2048, CLASS), ("tie_word_embeddings", True, CLASS))
    assert type(read[0][1]) is int and read[1][1] is True  # a number and a flag, not their words
    assert not model.positions_nominal and model.nominal_defaults == ()
    assert [d.said for d in model.defaults_used] == [
        "max_position_embeddings=2048",
        "tie_word_embeddings=True",
    ]
    assert model.defaults_used[1].what == "BloomConfig's class default"


def test_a_config_default_says_its_value_as_the_ledger_prints_it() -> None:
    default = ConfigDefault(field="head_dim", value=256, what="Gemma2Config's class default", kind=CLASS)
    assert default.said == "head_dim=256"
