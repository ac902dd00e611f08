"""SGLang's MindSporeForCausalLM is a backend, not a model (issue 26): kvtop names it so.

SGLang 0.5.23 model_loader/utils.py get_model_architecture sets architectures = ["MindSporeForCausalLM"] when
model_impl is mindspore, and models/mindspore.py builds the class the config names from sgl_mindspore.models
(_get_arch_from_config, "Unsupported arch" otherwise) on an Ascend NPU. No checkpoint names the class.
"""

from __future__ import annotations

from kvtop.domain.architectures.coverage import GENERIC, reason_not_modelled, verdict


def test_mindspore_is_named_a_backend_not_read_generically() -> None:
    kind, why = verdict("MindSporeForCausalLM")
    assert kind == "not_modelled" and "MindSporeForCausalLM" not in GENERIC
    assert why.startswith("not a model of its own: ") and "--model-impl mindspore" in why
    assert reason_not_modelled("MindSporeForCausalLM") == why
