"""What a 2-byte KV cache under `--kv-cache-dtype auto` is called: the 16-bit dtype the config names, as vLLM keeps it
(v0.33.0 config/model.py:2423-2465 `_resolve_auto_dtype`: a config dtype the platform supports is the model's;
auto_gptq.py:178 `get_supported_act_dtypes` [half, bfloat16]: a float16 GPTQ checkpoint stays float16).

Expected values are the engine's: the KV spec dtype vLLM 0.33.0 built for each config at TP 1 on sm90
(tests/data/engine_diff/vllm-0.33.0.json, `groups[].dtype`), never kvtop's.
"""

from __future__ import annotations

import json

import pytest

from benchmarks.engine_diff.cases import config_path
from kvtop.cli import main
from tests.data_paths import DATA

TORCH_TO_KVTOP = {"torch.float16": "fp16", "torch.bfloat16": "bf16"}
CONFIGS = (
    "Qwen--Qwen1.5-7B-Chat-GPTQ-Int4.RECONSTRUCTED",  # "torch_dtype": "float16"
    "Qwen--Qwen2.5-7B-Instruct-GPTQ-Int4.RECONSTRUCTED",  # "torch_dtype": "float16"
    "Qwen--Qwen3-30B-A3B-GPTQ-Int4",  # "torch_dtype": "float16"
    "Qwen--Qwen3-8B",  # "torch_dtype": "bfloat16"
)


def _engine_kv_dtype(config: str) -> str:
    rows = json.loads((DATA / "engine_diff" / "vllm-0.33.0.json").read_text())["results"]
    row = next(r for r in rows if (r["config"], r["tp"], r["gpu"], r["kv_dtype"]) == (config, 1, "sm90", "auto"))
    return TORCH_TO_KVTOP[row["groups"][0]["dtype"]]


@pytest.mark.parametrize("config", CONFIGS)
def test_kv_auto_is_named_as_vllm_builds_it(config: str, capsys: pytest.CaptureFixture[str]) -> None:
    main(["plan", "--model", str(config_path(config)), "--engine", "vllm", "--gpu", "H100", "--json"])
    assert json.loads(capsys.readouterr().out)["kv_cache_dtype"] == _engine_kv_dtype(config)


def test_the_engine_rows_name_both_dtypes() -> None:
    assert [_engine_kv_dtype(config) for config in CONFIGS] == ["fp16", "fp16", "fp16", "bf16"]
