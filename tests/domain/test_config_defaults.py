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


def test_blooms_positions_are_kvtops_nominal_figure_and_its_tie_a_class_default() -> None:
    """bigscience/bloom-560m's config.json states no length and no tie_word_embeddings (PretrainedConfig: True).
    BloomConfig has no position field at all (ALiBi: transformers 4.57.6 / 5.20.2 BloomConfig() has none of
    max_position_embeddings, n_positions, max_seq_len, seq_length, model_max_length, …), so its 2,048 is the engines'
    figure where no key is found (vLLM _get_and_verify_max_len default_max_len = 2048; SGLang get_context_length's
    `return 2048`), said as kvtop's nominal figure as Falcon-Mamba's is, never as a class default."""
    model = _model("families/bigscience--bloom-560m.json")
    read = tuple((d.field, d.value, d.kind) for d in model.config_defaults)
    # nor does it state a dtype: served in 16 bit, said as assumed (test_config_unstated_dtype.py)
    assert read == (
        ("max_position_embeddings", 2048, NOMINAL), ("tie_word_embeddings", True, CLASS),
        ("torch_dtype", "bfloat16", DefaultKind.ENGINE_ASSUMED),
    )  # fmt: skip
    assert type(read[0][1]) is int and read[1][1] is True  # a number and a flag, not their words
    assert model.positions_nominal and model.max_position_embeddings == 2048
    assert [d.said for d in model.defaults_used] == ["tie_word_embeddings=True"]
    assert [d.said for d in model.assumed_defaults] == ["torch_dtype=bfloat16 (assumed)"]
    assert model.defaults_used[0].what == "BloomConfig's class default"
    assert [d.said for d in model.nominal_defaults] == [
        "max_position_embeddings=2048: vLLM's and SGLang's context where a config names no position field "
        "(vLLM _get_and_verify_max_len, SGLang get_context_length)"
    ]


def test_every_family_without_a_position_field_reads_one_nominal_figure() -> None:
    """The config classes that name none of vLLM's position keys, found by building every class transformers 4.57.6,
    5.19.0 and 5.20.2 (or vLLM's configs) register for kvtop's model types with no arguments: BloomConfig,
    MambaConfig, FalconMambaConfig, Mamba2Config. Each entry fills max_position_embeddings with the same 2,048 and
    the same words, as kvtop's own figure; no other entry calls its positions kvtop's."""
    from kvtop.domain.architectures.registry import ARCHITECTURES

    nominal = {mt: (a.defaults["max_position_embeddings"], dict(a.own_defaults)["max_position_embeddings"])
               for mt, a in ARCHITECTURES.items() if "max_position_embeddings" in dict(a.own_defaults)}  # fmt: skip
    assert set(nominal) == {"bloom", "mamba", "falcon_mamba", "mamba2"}
    assert set(nominal.values()) == {
        (2048, "vLLM's and SGLang's context where a config names no position field (vLLM _get_and_verify_max_len, "
               "SGLang get_context_length)")
    }


def test_a_config_default_says_its_value_as_the_ledger_prints_it() -> None:
    default = ConfigDefault(field="head_dim", value=256, what="Gemma2Config's class default", kind=CLASS)
    assert default.said == "head_dim=256"
