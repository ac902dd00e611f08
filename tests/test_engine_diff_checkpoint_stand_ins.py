"""Held-out configs whose model type only the checkpoint's own configuration_*.py knows, built once the harness
stands that class in (benchmarks/engine_diff/checkpoint_configs.py, issue #26):

- inclusionAI/Ling-plus (`bailing_moe`): the published BailingMoeConfig derives head_dim as hidden_size //
  num_attention_heads (5,376 // 42 = 128), which vLLM 0.33.0's and SGLang 0.5.23's bailing_moe.py read.
- LGAI-EXAONE/EXAONE-3.0-7.8B-Instruct (`exaone`): the published ExaoneConfig maps num_hidden_layers to the
  config's num_layers (32), which vLLM 0.33.0's exaone.py reads (SGLang ships its own ExaoneConfig).

Engine figures: tests/data/engine_diff/registry/{vllm-0.33.0,sglang-0.5.23}.json, written by `registry_sweep.py
--engine vllm|sglang --only inclusionAI--Ling-plus,LGAI-EXAONE--EXAONE-3.0-7.8B-Instruct` (meta builds: Ling-plus
581,205,821,952 B at TP 1, 290,634,140,160 B a rank at TP 2, in both engines). KV bytes below from the configs' own arithmetic.
"""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.engine_diff.registry_judge import EQUAL, judge
from benchmarks.engine_diff.registry_sweep import row_of

BF16 = 2
LING, EXAONE = "inclusionAI--Ling-plus", "LGAI-EXAONE--EXAONE-3.0-7.8B-Instruct"
VERSIONS = {"vllm": "0.33.0", "sglang": "0.5.23"}
LING_BYTES = {
    1: 581_205_821_952,
    2: 290_634_140_160,
}  # the meta builds' parameter bytes per rank (norms, router whole)


def _row(engine: str, config: str, tp: int) -> dict[str, Any]:
    return row_of(engine, VERSIONS[engine], config, tp)


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
@pytest.mark.parametrize("tp", [1, 2])
def test_ling_plus_builds_with_its_derived_head_dim_and_kvtop_plans_it_equal(engine: str, tp: int) -> None:
    row = _row(engine, LING, tp)
    assert row["status"] == "ok"
    (stage,) = row["stages"]
    assert sum(stage["param_bytes"].values()) == LING_BYTES[tp]  # the same in both engines
    if engine == "sglang":  # 88 layers × K and V × 6 KV heads × head_dim 128 (5,376 // 42), bf16, per rank
        assert row["cell_size"] == 88 * 2 * (6 // tp) * (5376 // 42) * BF16
    assert judge(engine, VERSIONS[engine], row).verdict == EQUAL


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
@pytest.mark.parametrize("tp", [1, 2])
def test_exaone3_builds_with_its_num_layers_and_kvtop_plans_it_equal(engine: str, tp: int) -> None:
    row = _row(engine, EXAONE, tp)
    assert row["status"] == "ok"
    if engine == "vllm":  # 32 layers (num_layers) of 8 KV heads × 128, K and V in bf16, 16 tokens a page
        (spec,) = row["stages"][0]["layer_specs"]
        assert (spec["layers"], spec["page_size_bytes"]) == (32, 16 * 2 * (8 // tp) * 128 * BF16)
    else:
        assert row["cell_size"] == 32 * 2 * (8 // tp) * 128 * BF16
    assert judge(engine, VERSIONS[engine], row).verdict == EQUAL
