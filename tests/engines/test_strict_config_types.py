"""databricks/dbrx-instruct states ffn_config.moe_normalize_expert_weights as 1, an int, where transformers 5.x's
`@strict` DbrxFFNConfig types it `float | None`: vLLM 0.33.0 (transformers 5.20.2) and SGLang 0.5.23 (5.19.0)
cannot load the config, and kvtop refuses it there by the field's name (kvtop.domain.architectures.strict_fields,
each engine's config_checks). The engines' answers: the registry sweep's rows (tests/data/engine_diff/registry/
vllm-0.33.0.json, sglang-0.5.23.json, `registry_sweep.py --engine vllm|sglang --only databricks--dbrx-instruct`),
StrictDataclassFieldValidationError at TP 1 and 2. Releases on transformers 4.x (vLLM 0.13.0: 4.57.6, SGLang
0.5.6.post2: 4.57.1) take the int, and kvtop plans it there.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kvtop.domain.errors import InputError
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS
from tests.data_paths import DATA

REGISTRY = DATA / "engine_diff" / "registry"
H100 = 81559 << 20
DBRX = CONFIGS / "families" / "databricks--dbrx-instruct.json"
FIELD = "ffn_config.moe_normalize_expert_weights"


def _engine_rows(fixture: str) -> list[dict[str, Any]]:
    rows = json.loads((REGISTRY / fixture).read_text())["rows"]
    return [row for row in rows if row["config"] == "databricks--dbrx-instruct"]


def _plan(model: ModelSpec, engine: str, version: str) -> Any:
    settings = parse_flags(engine, ["--engine-version", version])
    return predict(model, settings, gpu_total_bytes=H100, gpu_name="H100")


@pytest.mark.parametrize(
    ("engine", "fixture", "version", "before"),
    [
        ("vllm", "vllm-0.33.0.json", "0.33.0", "0.13.0"),
        ("sglang", "sglang-0.5.23.json", "0.5.23", "0.5.6.post2"),
    ],
)
def test_dbrx_is_refused_by_its_int_typed_float_where_transformers_5_loads_it(
    engine: str, fixture: str, version: str, before: str
) -> None:
    rows = _engine_rows(fixture)
    assert sorted(row["tp"] for row in rows) == [1, 2]
    for row in rows:
        assert (row["status"], row["error_type"]) == ("refused", "StrictDataclassFieldValidationError")
        assert "'moe_normalize_expert_weights' with value 1" in row["message"]
    model = load_model(str(DBRX))
    with pytest.raises(InputError) as refused:
        _plan(model, engine, version)
    assert refused.value.field == FIELD
    _plan(model, engine, before)  # transformers 4.x takes the int: planned


def test_dbrx_with_a_float_is_planned() -> None:
    """The same config stating 1.0 (the type DbrxFFNConfig declares) passes the strict validation."""
    data = json.loads(DBRX.read_text())
    assert data["ffn_config"]["moe_normalize_expert_weights"] == 1
    data["ffn_config"]["moe_normalize_expert_weights"] = 1.0
    model = model_from_config(data, source="dbrx-instruct with a float")
    assert model.float_fields_given_int == ()
    _plan(model, "vllm", "0.33.0")
    _plan(model, "sglang", "0.5.23")
