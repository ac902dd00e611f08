"""databricks/dbrx-instruct states ffn_config.moe_normalize_expert_weights as 1, an int, where transformers 5.x's
`@strict` DbrxFFNConfig types it `float | None`: vLLM 0.33.0 (transformers 5.20.2) and SGLang 0.5.23 (5.19.0)
cannot load the config, and kvtop refuses it there by the field's name (kvtop.domain.architectures.strict_fields,
each engine's config_checks). The engines' answers: the registry sweep's rows (tests/data/engine_diff/registry/
vllm-0.33.0.json, sglang-0.5.23.json, `registry_sweep.py --engine vllm|sglang --only databricks--dbrx-instruct`),
StrictDataclassFieldValidationError at TP 1 and 2. Releases on transformers 4.x (vLLM 0.13.0: 4.57.6, SGLang
0.5.6.post2: 4.57.1) take the int, and kvtop plans it there.

RedHatAI/DeepSeek-V4-Flash-NVFP4-FP8 states kv_lora_rank null: SGLang 0.5.23 loads deepseek_v4 through transformers
5.19's DeepseekV3Config (kv_lora_rank: int) and refuses it (its rows: StrictDataclassFieldValidationError, `--only
RedHatAI--DeepSeek-V4-Flash-NVFP4-FP8`); vLLM 0.33.0's DeepseekV4Config has no such field and builds it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.engines.vllm.config_checks import check_config as check_vllm_config
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
DSV4_NVFP4 = CONFIGS / "heldout" / "wave2" / "RedHatAI--DeepSeek-V4-Flash-NVFP4-FP8.json"


def _engine_rows(fixture: str, config: str = "databricks--dbrx-instruct") -> list[dict[str, Any]]:
    rows = json.loads((REGISTRY / fixture).read_text())["rows"]
    return [row for row in rows if row["config"] == config]


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
    assert model.strict_type_mismatches == ()
    _plan(model, "vllm", "0.33.0")
    _plan(model, "sglang", "0.5.23")


def test_a_null_kv_lora_rank_is_refused_where_sglang_loads_deepseek_v4_as_deepseek_v3() -> None:
    rows = _engine_rows("sglang-0.5.23.json", "RedHatAI--DeepSeek-V4-Flash-NVFP4-FP8")
    assert sorted(row["tp"] for row in rows) == [1, 2]
    for row in rows:
        assert (row["status"], row["error_type"]) == ("refused", "StrictDataclassFieldValidationError")
        assert "'kv_lora_rank' expected int, got NoneType" in row["message"]
    vllm_rows = _engine_rows("vllm-0.33.0.json", "RedHatAI--DeepSeek-V4-Flash-NVFP4-FP8")
    assert {row["status"] for row in vllm_rows} == {"ok"}
    model = load_model(str(DSV4_NVFP4))
    assert model.strict_type_mismatches == ("kv_lora_rank",)
    with pytest.raises(InputError) as refused:
        _plan(model, "sglang", "0.5.23")
    assert refused.value.field == "kv_lora_rank"
    check_vllm_config(model, ResolvedVersion(text="0.33.0", source=VersionSource.FLAG))  # not refused there
