"""SGLang's base class BailingMoEForCausalLM (issue 26): a config naming it is planned as Ling-plus's, and vLLM,
which registers no such class, refuses it.

SGLang 0.5.23 models/bailing_moe.py: `class BailingMoeForCausalLM(BailingMoEForCausalLM): pass` and EntryClass lists
all three, so the base class builds what BailingMoeForCausalLM builds. The config is Ling-plus's own (auto_map
included) with that class named (tests/data/configs/recon/SOURCES.md); the registry sweep's SGLang builds of it
recorded 581,205,821,952 B at TP 1 and 290,634,140,160 B at TP 2 (tests/data/engine_diff/registry/sglang-0.5.23.json),
the same as Ling-plus's.
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from kvtop.domain.architectures.registry import BY_CLASS_NAME
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.data_paths import DATA

CONFIG = DATA / "configs" / "recon" / "recon--inclusionAI--Ling-plus-as-BailingMoE.json"
BF16 = 2


def test_the_variant_is_ling_plus_under_the_base_class() -> None:
    ling = json.loads((DATA / "configs" / "heldout" / "inclusionAI--Ling-plus.json").read_text())
    variant = json.loads(CONFIG.read_text())
    assert variant == {**ling, "architectures": ["BailingMoEForCausalLM"]}
    assert BY_CLASS_NAME["BailingMoEForCausalLM"] is BY_CLASS_NAME["BailingMoeForCausalLM"]


@pytest.mark.parametrize("tp", [1, 2])
def test_weights_are_sglangs_build_of_the_base_class(tp: int) -> None:
    """bf16, Ling-plus's sizes (88 layers, hidden 5,376, 42 / 6 heads of 128, 64 experts of 3,072, one shared expert,
    vocabulary 126,464 untied, no expert bias, no q/k norms), SGLang 0.5.23 bailing_moe.py's parameters per rank:
    word_embeddings and lm_head [126464 / tp, 5376]; per layer query_key_value [(42 + 2 × 6) / tp × 128, 5376],
    dense [5376, 5376 / tp], two norms [5376]; gate [64, 5376] whole; experts w13 [64, 2 × 3072 / tp, 5376] and w2
    [64, 5376, 3072 / tp]; the shared expert gate_up [2 × 3072 / tp, 5376], down [5376, 3072 / tp]; final norm [5376]."""
    vocab, hidden = 126464, 5376
    attention = (54 // tp) * 128 * hidden + hidden * hidden // tp + 2 * hidden
    moe = 64 * hidden + 64 * (2 * 3072 // tp) * hidden + 64 * hidden * (3072 // tp)
    moe += (2 * 3072 // tp) * hidden + hidden * (3072 // tp)
    expected = (2 * (vocab // tp) * hidden + 88 * (attention + moe) + hidden) * BF16
    assert expected == {1: 581_205_821_952, 2: 290_634_140_160}[tp]
    m = model_from_config(json.loads(CONFIG.read_text()), source=CONFIG.name)
    book = weights_book(m, ParallelLayout(tp=tp), range(m.num_layers), first_stage=True, last_stage=True)
    assert book.total_bytes == expected


@pytest.mark.parametrize("release", ["0.13.0", "0.33.0"])
def test_vllm_refuses_the_base_class_whose_remote_code_does_not_rescue_it(
    release: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The config keeps Ling-plus's auto_map, so the check is the model's own (custom code), not a bare class name.
    vLLM 0.33.0's own refusal, the registry sweep's rows for this config at TP 1 and 2 (vllm-0.33.0.json):
    "Value error, Model architectures ['BailingMoEForCausalLM'] are not supported for now." The auto_map's
    modeling_bailing_moe.py (inclusionAI/Ling models/) raises ImportError under transformers 5.20.2
    (is_torch_fx_available) and imports under 4.57.6 with BailingMoeModel.is_backend_compatible() False (both
    imported here in the wheels' environments), so vLLM 0.33.0 and 0.13.0 registry.py _try_resolve_transformers
    return None and _raise_for_unsupported speaks."""
    m = model_from_config(json.loads(CONFIG.read_text()), source=CONFIG.name)
    assert m.auto_map_models  # the remote code is named: without the rule this was "custom code", planned
    at = ResolvedVersion(text=release, source=VersionSource.FLAG)
    check = engine_rules("vllm").architectures.check(m, LaunchSettings(engine="vllm", model="m"), at)
    assert check.refused
    assert check.engine_words == "Model architectures ['BailingMoEForCausalLM'] are not supported for now."
    assert f"vLLM {release}" in check.message and "modeling_bailing_moe.py" in check.message
    assert main(["plan", "--model", str(CONFIG), "--engine", "vllm", "--engine-version", release]) == 2
    assert "has no model class for BailingMoEForCausalLM" in capsys.readouterr().err


def test_sglang_registers_the_base_class() -> None:
    m = model_from_config(json.loads(CONFIG.read_text()), source=CONFIG.name)
    sglang = ResolvedVersion(text="0.5.23", source=VersionSource.FLAG)
    check = engine_rules("sglang").architectures.check(m, LaunchSettings(engine="sglang", model="m"), sglang)
    assert check.state == "registered"
