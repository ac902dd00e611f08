"""Dory (vLLM 0.33.0 models/dory.py) is named "not modelled": read generically, its default config planned
11,157,591,040 B of weights at TP 1 where vLLM's meta build holds 7,950,458,880 B (registry sweep row
`default--DoryForCausalLM`, tests/data/engine_diff/registry/vllm-0.33.0.json), and vLLM refuses it at TP 2."""

from __future__ import annotations

import json

import pytest

from kvtop.domain.architectures.coverage import verdict
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.model_config import model_from_config
from tests.conftest import DATA

REGISTRY = DATA / "engine_diff" / "registry"


def _engine_rows() -> dict[int, dict[str, object]]:
    rows = json.loads((REGISTRY / "vllm-0.33.0.json").read_text())["rows"]
    return {row["tp"]: row for row in rows if row["config"] == "default--DoryForCausalLM"}


def test_dory_is_refused_with_its_reason() -> None:
    config = json.loads((REGISTRY / "configs" / "DoryForCausalLM.json").read_text())
    # vLLM's DoryConfig defaults: half the layers are MLP-only, which a generic decoder reading cannot see
    assert config["layer_types"].count("mlp") == 36 and config["recurrent_kv_cache_mode"] == "per_loop"
    rows = _engine_rows()  # the engine's answers on this config: built at TP 1, refused at TP 2
    assert sum(rows[1]["stages"][0]["param_bytes"].values()) == 7_950_458_880  # type: ignore[index]
    assert rows[2]["status"] == "refused" and "tensor_parallel_size=1 only" in str(rows[2]["message"])
    assert verdict("DoryForCausalLM")[0] == "not_modelled"
    with pytest.raises(UnsupportedModelError, match=r"^architectures: DoryForCausalLM .*a KV cache per loop"):
        model_from_config(config, source="dory")
