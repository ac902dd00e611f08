"""SGLang's MindSporeForCausalLM is a backend, not a model (issue 26): kvtop names it so.

SGLang 0.5.23 model_loader/utils.py get_model_architecture sets architectures = ["MindSporeForCausalLM"] when
model_impl is mindspore, and models/mindspore.py builds the class the config names from sgl_mindspore.models
(_get_arch_from_config, "Unsupported arch" otherwise) on an Ascend NPU. No checkpoint names the class.
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.architectures.coverage import GENERIC, reason_not_modelled, verdict
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA


def test_mindspore_is_named_a_backend_not_read_generically() -> None:
    kind, why = verdict("MindSporeForCausalLM")
    assert kind == "not_modelled" and "MindSporeForCausalLM" not in GENERIC
    assert why.startswith("not a model of its own: ") and "--model-impl mindspore" in why
    assert reason_not_modelled("MindSporeForCausalLM") == why


def test_a_config_naming_it_is_refused_with_that_reason() -> None:
    """Ling-plus's own config (tests/data/configs/heldout) with its class swapped for the backend's name."""
    data = json.loads((DATA / "configs" / "heldout" / "inclusionAI--Ling-plus.json").read_text())
    with pytest.raises(UnsupportedModelError) as refused:
        model_from_config({**data, "architectures": ["MindSporeForCausalLM"]}, source="mindspore")
    assert "--model-impl mindspore" in str(refused.value)
