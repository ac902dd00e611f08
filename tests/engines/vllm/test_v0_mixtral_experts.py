"""Mixtral before vLLM's fused MoE: 0.2.5 – 0.2.7 run each rank's whole experts over every profiled token (mixtral.py
:57-94, 133-160 at v0.2.7). By hand from that code at Mixtral-8x7B's shapes (hidden 4,096, intermediate 14,336, 8
experts, top-2, bf16) and V0's 32,768-token profile: SiLU of w1's output (the pre-SiLU one rebound, freed), w3's
output and their product still bound when w2 writes its output, 3 × 32,768 × 14,336 × 2 B = 2,818,572,288 beside w2's
output 32,768 × 4,096 × 2 = 268,435,456 and, from a rank's second expert (two a rank at TP 4), the rank's sum, as much
again (review R7 E4-1); the router's logits and their float32 softmax 32,768 × 8 × (2 + 4) = 1,572,864, top-2 weights
and ids 32,768 × 2 × 12 = 786,432; the residual and normed input 2 × 32,768 × 4,096 × 2 = 536,870,912:
3,894,673,408 B (3.63 GiB) at TP 4, 3,626,237,952 at TP 8 (one expert a rank: no sum beside w2's output). The fused path (0.3.0) holds
32,768 × 2 × 2 × (3 × 3,584 + 4,096) = 1,946,157,056 B of caches at TP 4 instead. brettin's rbdgx1 starts (A100 40GB,
TP 4) left 14,524 blocks at 0.2.7 and 17,156 at 0.3.0 (0.5 MiB each): 1.29 GiB more at 0.3.0."""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.v0_profile import v0_forward_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.wording import GIB
from tests.data_paths import CONFIGS

MIXTRAL = CONFIGS / "mistralai--Mixtral-8x7B-v0.1.json"


def _forward(version: str, tp: int = 4) -> int | None:
    inputs = CalibrationInputs(
        model=model_from_config(json.loads(MIXTRAL.read_text())), settings=parse_flags("vllm", [], strict=True), layout=ParallelLayout(tp=tp),
        gpu_name="A100-40GB", gpu_total_bytes=40 * GIB, version=ResolvedVersion(text=version), weights_bytes=0,
        context_length=32768,
    )  # fmt: skip
    return v0_forward_bytes(inputs)


def test_whole_experts_at_full_width_from_0_2_5_to_0_2_7() -> None:
    for version in ("0.2.5", "0.2.6", "0.2.7"):
        assert _forward(version) == 3_894_673_408
    assert _forward("0.2.7", tp=8) == 3_626_237_952
    fused = _forward("0.3.0")
    assert fused is not None and fused < 3_894_673_408 - 1_946_157_056 // 2  # the fused caches, split by TP


def _plan(capsys: pytest.CaptureFixture[str], version: str) -> str:
    argv = ["plan", "--model", str(MIXTRAL), "--engine", "vllm", "--engine-version", version, "--gpu", "A100-40GB"]
    assert main([*argv, "--tp", "4"]) == 0
    return " ".join(capsys.readouterr().out.split())


def test_megablocks_at_0_2_4_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    assert "MegaBlocks' sparse kernels" in _plan(capsys, "0.2.4")
    assert "MegaBlocks" not in _plan(capsys, "0.2.7")
    assert "MegaBlocks" not in _plan(capsys, "0.2.3")  # no Mixtral class before 0.2.4: none of the paths
