"""The sizes vLLM adds to its default CUDA-graph capture sizes off the stride (profile_run.TOKENS_ADDED, SEQS_ADDED).

Expected counts are `_set_cudagraph_sizes`' own arithmetic (config/vllm.py): 1, 2, 4, every 8 below 256, every 16
up to the largest, min(2 × max_num_seqs, 512 (1024 on capability family 100 from v0.28.0), max_num_batched_tokens);
from v0.20.1 max_num_batched_tokens joins where it is at or below that largest ("ensure max_num_tokens is captured if
within max capture size", :1527-1532 at v0.20.1); from v0.31.0 max_num_seqs too, under plain decoding without a
stated largest size (`uniform_decode_sizes = [max_num_seqs]`, :2539-2540, kept at or below max_num_batched_tokens,
:2591-2593). FULL decode graphs are the sizes at or below max_num_seqs (FULL_AND_PIECEWISE).
"""

from __future__ import annotations

from benchmarks.calibration.corpus import load
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.profile_run import capture_sizes, graph_counts
from kvtop.domain.launch import parse_flags

L40S = "file67144197265-qwen2.5-7b-l40s-v0220"  # --max-num-batched-tokens 2048 --max-num-seqs 128, logs 35 and 19
RECORD = {record.id: record for record in load("vllm")}[L40S]


def _on(release: str, tokens: int, seqs: int, gpu: str = "L40S", extra: list[str] | None = None) -> CalibrationInputs:
    """The Qwen2.5-7B L40S start at `release` with `tokens` max_num_batched_tokens and `seqs` max_num_seqs."""
    inputs = RECORD.inputs()
    settings = inputs.settings.model_copy(update={"max_num_batched_tokens": tokens, "max_running_requests": seqs})
    if extra:
        settings = settings.model_copy(update={"flags": {**settings.flags,
                                                         **parse_flags("vllm", extra, strict=True).flags}})  # fmt: skip
    return inputs.model_copy(update={"settings": settings, "version": ResolvedVersion(text=release), "gpu_name": gpu})


def test_the_logged_start_keeps_its_counts() -> None:
    """The record's own "PIECEWISE=35 (largest=256), FULL=19 (largest=128)": 2,048 tokens are above the largest."""
    assert graph_counts(RECORD.inputs()) == (35, 19)


def test_max_num_batched_tokens_joins_from_0_20_1() -> None:
    """300 tokens, 256 seqs: largest min(512, 512, 300) = 300, strided sizes 1, 2, 4 (3), 8 … 248 (31), 256, 272, 288
    (3) = 37; v0.20.1 adds 300 (38). FULL at the sizes ≤ 256: 35 either way. At 296 tokens the last strided size is
    288 and 296 joins; at 288 it is already there."""
    assert graph_counts(_on("0.20.0", 300, 256)) == (37, 35)
    assert graph_counts(_on("0.20.1", 300, 256)) == (38, 35)
    assert graph_counts(_on("0.27.1", 296, 256)) == (38, 35)
    assert graph_counts(_on("0.27.1", 288, 256)) == (37, 35)
    assert capture_sizes(300, added=(300,))[-3:] == [272, 288, 300]
    # above the largest it stays out: 600 tokens, 256 seqs → largest 512 (51 sizes)
    assert graph_counts(_on("0.22.0", 600, 256)) == (51, 35)
    # tokens at or below max_num_seqs make a FULL decode graph too: 100 tokens, 64 seqs → largest 100
    # (1, 2, 4, 8 … 96: 15, + 100), FULL at ≤ 64 (3 + 8)
    assert graph_counts(_on("0.22.0", 100, 64)) == (16, 11)
    assert graph_counts(_on("0.20.0", 100, 64)) == (15, 11)


def test_max_num_seqs_joins_from_0_31_0() -> None:
    """100 seqs, 8,192 tokens on an H100: largest min(200, 512) = 200, strided 1, 2, 4, 8 … 200 (28), FULL at ≤ 100
    (15); v0.31.0 adds 100 to both (29, 16). Not under a stated largest size, nor where it is above the tokens."""
    assert graph_counts(_on("0.30.0", 8192, 100, gpu="H100")) == (28, 15)
    assert graph_counts(_on("0.31.0", 8192, 100, gpu="H100")) == (29, 16)
    assert graph_counts(_on("0.34.0", 8192, 100, gpu="H100")) == (29, 16)
    stated = ["--compilation-config", '{"max_cudagraph_capture_size": 200}']
    assert graph_counts(_on("0.31.0", 8192, 100, gpu="H100", extra=stated)) == (28, 15)
    # 100 seqs, 96 tokens: largest 96, 100 above it (and 96 on the stride): 1, 2, 4, 8 … 96 = 15
    assert graph_counts(_on("0.31.0", 96, 100, gpu="H100")) == (15, 15)
