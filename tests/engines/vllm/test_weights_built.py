"""What vLLM 0.33's MXFP4 experts build beyond the checkpoint's tensors (engines/vllm/weights_built.py; issue 26, A16).

Expected figures: vLLM's classes built on the meta device by benchmarks/engine_diff (each stage's
`named_parameters()` bytes, tests/data/engine_diff/vllm-0.33.0.flags.json, sm90) and the shapes those runs listed
(benchmarks/engine_diff/param_shapes.py), quoted in each test. Never kvtop's own figures.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.engine_diff.kvtop_side import kvtop_plan
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA

AT_0_33 = ResolvedVersion(text="0.33.0", source=VersionSource.FLAG)
# gpt-oss-20b at TP 2 (sm90, Triton): w13_weight [32, 2944, 1440] uint8 (4-bit pairs), w13_weight_scale
# [32, 2944, 90], w13_bias [32, 2944] bf16, w2_weight [32, 2880, 736], w2_weight_scale [32, 2880, 46]: 1,472 rows
# a rank where the checkpoint's shard has 1,440, so 32 more rows an expert:
PER_EXPERT = 32 * 2 * 2_880 // 2 + 32 * 2 * 2_880 // 32 + 2_880 * 32 // 2 + 2_880 * 32 // 32 + 2 * 32 * 2
assert PER_EXPERT == 147_008


def _row(config: str, variant: str) -> dict[str, Any]:
    rows = json.loads((DATA / "engine_diff" / "vllm-0.33.0.flags.json").read_text())["results"]
    return next(r for r in rows if r["config"] == config and r.get("variant") == variant and r["kv_dtype"] == "auto")


@pytest.mark.parametrize("config", ["openai--gpt-oss-20b", "openai--gpt-oss-120b"])
@pytest.mark.parametrize("variant", ["ctx4k", "pp2", "pp4", "ep"])
def test_each_stage_weighs_what_vllm_builds(config: str, variant: str) -> None:
    """TP 2 pads (1,440 → 1,472), TP 1 × PP 4 and EP (2,880 wide) do not: every stage equals the engine's."""
    row = _row(config, variant)
    plan = kvtop_plan("vllm", "0.33.0", row)
    assert plan["status"] == "ok"
    engine = [sum(stage["param_bytes"].values()) for stage in row["stages"]]
    assert [stage["weights_bytes"] for stage in plan["stages"]] == engine


def _built(config: str, layout: ParallelLayout, layers: range, gpu: str = "H100") -> dict[str, int]:
    model = model_from_config(json.loads((DATA / "configs" / f"{config}.json").read_text()), source=config)
    return {row.component: row.bytes for row in engine_rules("vllm").weights_built(model, layout, layers, gpu, AT_0_33)}


def test_the_padded_rows_of_a_tp2_stage() -> None:
    """gpt-oss-120b at TP 2 × PP 2, stage 0 (18 MoE layers of 128 experts): the engine built 17,243,476,992 B
    where the checkpoint's tensors were 338,706,432 B fewer (docs/fidelity.md's A16 row before this rule)."""
    built = _built("openai--gpt-oss-120b", ParallelLayout(tp=2, pp=2), range(18))
    assert built == {"expert_padding": 18 * 128 * PER_EXPERT} and 18 * 128 * PER_EXPERT == 338_706_432
    assert _built("openai--gpt-oss-20b", ParallelLayout(tp=2), range(24)) == {"expert_padding": 24 * 32 * PER_EXPERT}


def test_no_padding_where_the_width_is_a_multiple_of_64_or_not_on_triton() -> None:
    """2,880 = 45 × 64: TP 1 and EP build the checkpoint's width; Blackwell's FlashInfer backends are not modelled."""
    assert _built("openai--gpt-oss-120b", ParallelLayout(tp=1), range(36)) == {}
    assert _built("openai--gpt-oss-120b", ParallelLayout(tp=2, ep=2), range(36)) == {}
    assert _built("openai--gpt-oss-120b", ParallelLayout(tp=2), range(36), gpu="B200") == {}
