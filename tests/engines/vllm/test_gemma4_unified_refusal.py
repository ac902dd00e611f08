"""vLLM 0.33.0 refuses Gemma-4 Unified without a vision_config: the registry row of
default--Gemma4UnifiedForConditionalGeneration is the engine's refusal ("Gemma4 Unified requires a vision
configuration", gemma4_unified.py, meta build at TP 1 and 2), and kvtop now refuses it by name (it planned it)."""

from __future__ import annotations

import json

import pytest

from benchmarks.engine_diff.registry_judge import kvtop_answer
from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.engines.vllm.config_checks import check_config
from kvtop.domain.errors import InputError
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA

CONFIG = "default--Gemma4UnifiedForConditionalGeneration"
PATH = DATA / "engine_diff" / "registry" / "configs" / "Gemma4UnifiedForConditionalGeneration.json"


@pytest.mark.parametrize("tp", [1, 2])
def test_both_refuse_it(tp: int) -> None:
    row = row_of("vllm", "0.33.0", CONFIG, tp)
    assert row["status"] == "refused" and "requires a vision configuration" in row["message"]
    plan = kvtop_answer("vllm", "0.33.0", row)
    assert plan["status"] != "ok" and "requires a vision configuration" in plan["message"]


def test_a_vision_config_lets_it_through_and_older_releases_are_not_read() -> None:
    data = json.loads(PATH.read_text())
    at_0_33 = ResolvedVersion(text="0.33.0", source=VersionSource.FLAG)
    with pytest.raises(InputError, match="requires a vision configuration"):
        check_config(model_from_config(data, source=CONFIG), at_0_33)
    check_config(
        model_from_config(data, source=CONFIG), ResolvedVersion(text="0.13.0", source=VersionSource.FLAG)
    )
    data["vision_config"] = {"hidden_size": 768, "patch_size": 16}
    check_config(model_from_config(data, source=CONFIG), at_0_33)
