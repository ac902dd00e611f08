"""A model class the engine's release does not register is refused first, whatever the TP.

Qwen2_5OmniModel (tests/data/engine_diff/registry/configs/Qwen2_5OmniModel.json: 28 attention heads) on SGLang
0.5.23: the wheel registers no such class (tests/data/architectures/engine_registries.json lists it under vLLM's
multimodal models only, not SGLang's) and transformers has none, so SGLang raises "Cannot find model module"
resolving the class, before any layer (and its head split) is built. Before, kvtop refused TP 1
and 2 for the class but TP 8 with "28 attention heads do not divide over attention TP 8".
"""

from __future__ import annotations

import pytest

from kvtop.cli import main
from tests.data_paths import DATA

CONFIG = DATA / "engine_diff" / "registry" / "configs" / "Qwen2_5OmniModel.json"


@pytest.mark.parametrize("tp", [1, 2, 8])
def test_the_class_refusal_comes_first(capsys: pytest.CaptureFixture[str], tp: int) -> None:
    assert main(["plan", "--model", str(CONFIG), "--engine", "sglang", "--gpu", "H100", "--tp", str(tp)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kvtop: error: --model: SGLang 0.5.23") and "has no model class for Qwen2_5OmniModel" in err
    assert "do not divide" not in err
