"""Configs vLLM 0.33.0 cannot build from what they hold (kvtop.domain.engines.vllm.config_checks, docs/engines/vllm.md
§3.6), each refused against the engine's own recorded answer for the same config: the registry sweep's rows
(tests/data/engine_diff/registry/vllm-0.33.0.json, vLLM's class built on the meta device by registry_sweep.py at TP
1 and 2), whose messages name the engine's error."""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.versions import from_flag
from kvtop.domain.engines.vllm.config_checks import check_config
from kvtop.domain.engines.vllm.release_calendar import CALENDAR
from kvtop.domain.errors import InputError
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model import ModelSpec
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS
from tests.data_paths import DATA

REGISTRY = DATA / "engine_diff" / "registry"
H100 = 81559 << 20


def engine_rows(config: str) -> list[dict]:
    rows = json.loads((REGISTRY / "vllm-0.33.0.json").read_text())["rows"]
    return [row for row in rows if row["config"] == config]


def plan(model: ModelSpec, version: str = "0.33.0"):
    settings = parse_flags("vllm", ["--engine-version", version])
    return predict(model, settings, gpu_total_bytes=H100, gpu_name="H100")


@pytest.mark.parametrize("config", ["sgl-project--DeepSeek-V4-Flash-FP8", "sgl-project--DeepSeek-V4-Pro-FP8"])
def test_vllm_refuses_a_model_type_nobody_registers(config: str) -> None:
    """model_type `deepseek_ref`, no auto_map: vLLM's get_config hands it to AutoConfig (its _CONFIG_REGISTRY names
    deepseek_v4), which raises "has model type `deepseek_ref` but Transformers does not recognize this architecture"
    (the sweep's rows at TP 1 and 2). v0.13.0 is not read: its config checks pass it."""
    rows = engine_rows(config)
    assert sorted(row["tp"] for row in rows) == [1, 2]
    assert all(row["status"] == "refused" and "`deepseek_ref` but Transformers does not recognize" in row["message"]
               for row in rows)  # fmt: skip
    path = CONFIGS / "heldout" / f"{config}.json"
    data = json.loads(path.read_text())
    assert data["model_type"] == "deepseek_ref" and "auto_map" not in data
    model = load_model(str(path))
    with pytest.raises(InputError) as refused:
        plan(model)
    assert refused.value.field == "model_type" and "does not recognize this architecture" in str(refused.value)
    check_config(model, from_flag("0.13.0", CALENDAR))


def test_the_published_deepseek_v4_is_still_planned() -> None:
    """deepseek-ai's DeepSeek-V4-Flash says deepseek_v4, which vLLM's config registry holds: built (rows ok)."""
    assert {row["status"] for row in engine_rows("deepseek-ai--DeepSeek-V4-Flash")} == {"ok"}
    plan(load_model(str(CONFIGS / "heldout" / "deepseek-ai--DeepSeek-V4-Flash.json")))


def test_vllm_refuses_step3p7_whatever_the_config() -> None:
    """Step3p7ForConditionalGeneration: step_vl.py:361-364 reads output_dim/width/heads/layers off the vision config,
    which transformers 5.20.2's Step3p7VisionConfig renames or lacks (AttributeError for any config.json): the
    sweep's rows are the engine-failure classification (vllm_config_failures.py) at TP 1 and 2."""
    name = "default--Step3p7ForConditionalGeneration"
    rows = engine_rows(name)
    assert sorted(row["tp"] for row in rows) == [1, 2]
    assert all(row["status"] == "refused" and "step_vl.py:361-364" in row["message"] for row in rows)
    model = load_model(str(REGISTRY / "configs" / "Step3p7ForConditionalGeneration.json"))
    with pytest.raises(InputError) as refused:
        plan(model)
    assert refused.value.field == "architectures" and "step_vl.py:361-364" in str(refused.value)
    plan(model, "0.13.0")  # not read before v0.33.0
