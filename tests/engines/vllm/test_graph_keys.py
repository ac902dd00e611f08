"""The V1 runner's CUDA-graph capture keys under speculative decoding and LoRA (kvtop/domain/engines/vllm/graph_keys.py).

Expected counts are vLLM's own arithmetic, worked by hand: `_set_cudagraph_sizes` (config/vllm.py:1650-1660 at
v0.22.0: largest min(max_num_seqs × (1 + k) × 2, 512), sizes 1, 2, 4, every 8 below 256), `adjust_cudagraph_sizes_for_
spec_decode` (config/compilation.py:1464-1510 at v0.22.0: rounded up to multiples of 1 + k, kept up to the largest),
the dispatcher's FULL decode keys (v1/cudagraph_dispatcher.py:225: 1 + k ≤ size ≤ (1 + k) × max_num_seqs) and its LoRA
cases ([0] + get_captured_lora_counts, lora/utils.py:48-62), each key one graph in `profile_cudagraph_memory`.
At 8 seqs: plain sizes [1, 2, 4, 8, 16] (5 PIECEWISE, 4 FULL at ≤ 8); with k = 3 (q = 4) the largest is 64, sizes
[1, 2, 4, 8, 16, …, 64] (11) rounded to [4, 8, 16, …, 64] (9), FULL decode keys 4 … 32 (5).
"""

from __future__ import annotations

import pytest

from benchmarks.calibration.corpus import load
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.profile_run import graph_counts
from kvtop.domain.launch import parse_flags

# a MoE (V1 runner to v0.28.x: runner_eras.runs_v2) at TP 4 on A100s, vLLM 0.22.1
RECORD = {record.id: record for record in load("vllm")}["file54924313720-minimax-m2.7-fp8-4xa100-tp4-v0221"]
NGRAM3 = ["--speculative-config", '{"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4}']


def _counts(release: str, *flags: str) -> tuple[int, int]:
    settings = parse_flags("vllm", ["--tensor-parallel-size", "4", "--max-model-len", "8192", "--max-num-seqs", "8",
                                    *flags], strict=True)  # fmt: skip
    inputs: CalibrationInputs = RECORD.inputs()
    return graph_counts(inputs.model_copy(update={"settings": settings, "version": ResolvedVersion(text=release)}))


def test_plain_decoding_keeps_its_count() -> None:
    assert _counts("0.22.1") == (5, 4)


@pytest.mark.parametrize(("release", "flags", "counts"), [
    ("0.22.1", [], (9, 5)),  # the sizes rounded to multiples of 4, FULL decode keys 4 … 32
    ("0.13.0", [], (9, 5)),  # gpu_model_runner.py:4896-4912: FULL_AND_PIECEWISE rounds
    ("0.19.0", ["-cc.cudagraph_mode=FULL"], (0, 11)),  # FULL alone not rounded before v0.20.0 (:6387-6390)
    ("0.20.0", ["-cc.cudagraph_mode=FULL"], (0, 9)),  # compilation.py:1411-1418: any FULL decode rounds
    ("0.22.1", ["-cc.cudagraph_mode=PIECEWISE"], (11, 0)),  # no FULL decode: the larger grid, unrounded
    ("0.12.0", [], (5, 4)),  # before v0.13.0: not read, plain decoding's count
])  # fmt: skip
def test_speculative_tokens_widen_and_round_the_grid(release: str, flags: list[str], counts: tuple[int, int]) -> None:
    assert _counts(release, *NGRAM3, *flags) == counts


@pytest.mark.parametrize(("flags", "counts"), [
    (["--enable-lora"], (10, 8)),  # with and without LoRA: [0, max_loras + 1]
    (["--enable-lora", "--compilation-config", '{"cudagraph_specialize_lora": false}'], (5, 4)),  # with LoRA only
    (["--enable-lora", "--max-loras", "4"], (10, 8)),  # [0, 5]: specialize_active_lora off by default
])  # fmt: skip
def test_lora_captures_each_size_once_a_case(flags: list[str], counts: tuple[int, int]) -> None:
    assert _counts("0.22.1", *flags) == counts
