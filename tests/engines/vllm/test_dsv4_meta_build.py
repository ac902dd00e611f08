"""DeepSeek-V4 on vLLM 0.33.0: the class builds on the meta device with the harness's import stand-ins
(benchmarks/engine_diff/vllm_standins.py: tilelang for the mHC kernels, the compressor's CuteDSL warmup module), and
kvtop plans it from the same specs, role by role (engines/vllm/dsv4.py, docs/engines/vllm.md §4.7): the
sliding-window cache's SlidingWindowMLASpec pages of 37,440 B per 64 tokens (584 B rows padded to 576), the
compressed latents and FP8 index keys at the backend's 256-token block, fp32 compressor states in blocks of 4 / 8.

Expected figures: the registry rows of tests/data/engine_diff/registry/vllm-0.33.0.json (`registry_sweep.py --engine
vllm --only deepseek-ai--DeepSeek-V4-Flash,…`, specs read before the engine core's sizing, vllm_runner.run_case):
each rank's parameter bytes, and each layer's specs.
"""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.engine_diff.architectures import _dsv4_roles
from benchmarks.engine_diff.registry_judge import kvtop_answer
from benchmarks.engine_diff.registry_sweep import row_of


def _row(config: str, tp: int) -> dict[str, Any]:
    return row_of("vllm", "0.33.0", config, tp)


@pytest.mark.parametrize(
    ("config", "tp", "engine_bytes"),
    [
        ("deepseek-ai--DeepSeek-V4-Flash", 1, 156_006_389_980),
        ("deepseek-ai--DeepSeek-V4-Flash", 2, 78_656_967_644),
        ("deepseek-ai--DeepSeek-V4-Pro", 1, 850_738_896_844),
        ("deepseek-ai--DeepSeek-V4-Pro", 2, 427_143_932_012),
        ("nvidia--DeepSeek-V4-Flash-NVFP4", 1, 164_663_697_628),
        ("nvidia--DeepSeek-V4-Pro-NVFP4", 2, 451_322_559_596),
    ],
)
def test_vllm_builds_it_and_kvtop_plans_its_specs(config: str, tp: int, engine_bytes: int) -> None:
    row = _row(config, tp)
    assert row["status"] == "ok"
    assert sum(sum(s["param_bytes"].values()) for s in row["stages"]) == engine_bytes
    swa = [s for s in row["stages"][0]["layer_specs"] if s["first"].endswith(".attn.swa_cache")]
    assert {(s["kind"], s["block_size"], s["page_size_bytes"]) for s in swa} == {
        ("SlidingWindowMLASpec", 64, 64 * 585)
    }
    latents = [s for s in row["stages"][0]["layer_specs"] if s["first"].endswith(".attn")]
    assert {(s["block_size"], s["page_size_bytes"]) for s in latents} == {(256, 37_440), (256, 1_728)}
    plan = kvtop_answer("vllm", "0.33.0", row)
    assert plan["status"] == "ok"
    # the book as vLLM builds it (vllm.md §4.7): e8m0 block scales, bf16 compressor norms, no KV-cache scalars,
    # the sink over the rank's heads padded to 64 / 128 (Pro TP 2: [64], the --params listing)
    assert plan["stages"][0]["weights_bytes"] == engine_bytes
    assert plan["dsv4_specs"] == _dsv4_roles(row["stages"][0]["layer_specs"])
