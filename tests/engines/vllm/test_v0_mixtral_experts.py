"""Mixtral before vLLM's fused MoE: 0.2.5 – 0.2.7 run each rank's whole experts over every profiled token (mixtral.py
:57-94, 133-160 at v0.2.7), named not modelled with the figure. By hand from that code at Mixtral-8x7B's shapes (hidden
4,096, intermediate 14,336, top-2, bf16) and V0's 32,768-token profile at TP 4: 3 × 32,768 × 14,336 × 2 B + the
kept sum 32,768 × 4,096 × 2 B = 3,087,007,744 B (2.88 GiB); the fused path's caches 32,768 × 2 × 2 B × (3 × 3,584
+ 4,096) = 1,946,157,056 B (1.81 GiB); 1.06 GiB between — brettin's rbdgx1 starts left 1.29 GiB more KV at 0.3.0
than at 0.2.7 (17,156 against 14,524 blocks of 0.5 MiB)."""

from __future__ import annotations

import pytest

from kvtop.cli import main
from tests.data_paths import CONFIGS

MIXTRAL = str(CONFIGS / "mistralai--Mixtral-8x7B-v0.1.json")


def _notes(capsys: pytest.CaptureFixture[str], version: str) -> str:
    argv = ["plan", "--model", MIXTRAL, "--engine", "vllm", "--engine-version", version, "--gpu", "A100-40GB"]
    assert main([*argv, "--tp", "4"]) == 0
    return " ".join(capsys.readouterr().out.split())


def test_full_width_experts_named_with_the_figure(capsys: pytest.CaptureFixture[str]) -> None:
    out = _notes(capsys, "0.2.7")
    assert "about 2.88 GiB at the expert's product against the fused path's 1.81 GiB" in out
    assert "about 1.06 GiB less KV than planned" in out
    assert "whole Mixtral experts" in _notes(capsys, "0.2.6")


def test_fused_from_0_3_0_and_megablocks_at_0_2_4(capsys: pytest.CaptureFixture[str]) -> None:
    assert "whole Mixtral experts" not in _notes(capsys, "0.3.0")
    assert "MegaBlocks' sparse kernels" in _notes(capsys, "0.2.4")
