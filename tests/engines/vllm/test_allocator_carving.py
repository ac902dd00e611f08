"""Torch's caching allocator carving a small model's 1–10 MiB matrices from shared 20 MiB segments
(engines/vllm/weights_held.py `carved_extra`): the last ≤ 1 MiB of a segment is held by the tensor that leaves it.

Expected figures from the engines' logs, not from kvtop: 'Loading model weights took 0.2378 GB' (gpt2, vLLM 0.4.2 and
0.6.4.post1: corpus ids saikiranbsk10-latency-gpt2-colab-a100-40gb-v042, dongukmoon-misc-gpt2-half-colab-*-v064post1)
and 'Model loading took 0.2389 GiB' (opt-125m, vLLM 0.10.2 V0: cnubigdata-vllm-test-opt-125m-colab-t4-v0102-v0),
printed to 4 decimals (± 0.00005 GiB); and the allocator's rule as hand arithmetic (c10/cuda/CUDACachingAllocator.cpp:
kLargeBuffer 20 MiB under kMinLargeAlloc 10 MiB, a block split only when more than kSmallSize 1 MiB remains).
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from kvtop.domain.engines.vllm.weights_held import carved_extra
from tests.data_paths import CONFIGS

MiB = 1 << 20
GiB = 1 << 30


def test_one_segment_by_hand() -> None:
    """gpt2's first layer after its position table: 1.5, 3.375, 1.125, 4.5, 4.5 MiB fill 15 of a 20 MiB segment
    (5 left, split); the next layer's 3.375 leaves 1.625 (split), its 1.125 leaves 0.5 ≤ 1 MiB: held (+0.5 MiB);
    its 4.5 opens a new segment (15.5 left)."""
    sizes = [int(x * MiB) for x in (1.5, 3.375, 1.125, 4.5, 4.5, 3.375, 1.125, 4.5)]
    assert carved_extra(sizes) == MiB // 2
    assert carved_extra([int(73.6875 * MiB)]) == int(0.3125 * MiB)  # a large one: its 74 MiB segment, 0.3125 held
    assert carved_extra([int(129.5 * MiB), int(24.5 * MiB)]) == MiB // 2  # 24.5 of 26 leaves 1.5: split


@pytest.mark.parametrize(
    ("config", "version", "logged_gib"),
    [("heldout/mlc--gpt2.json", "0.6.4.post1", 0.2378), ("families/facebook--opt-125m.json", "0.10.2", 0.2389)],
)
def test_tiny_models_weights_as_logged(
    capsys: pytest.CaptureFixture[str], config: str, version: str, logged_gib: float
) -> None:
    """The plan's weights within the log's rounding and 0.1 MiB (the small pool's biases and norms, not carved):
    gpt2's tensors alone are 248,879,616 B (0.2318 GiB), opt-125m's 250,478,592 B (0.2333)."""
    args = ["plan", "--json", "--engine", "vllm", "--engine-version", version, "--gpu", "T4"]
    assert main([*args, "--model", str(CONFIGS / config)]) == 0
    weights = json.loads(capsys.readouterr().out)["weights_bytes"]
    assert abs(weights - logged_gib * GiB) <= 0.00005 * GiB + 0.1 * MiB
