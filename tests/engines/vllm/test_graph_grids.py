"""vLLM 0.34.0's wide CUDA-graph grids on SM 10.x (kvtop/domain/engines/vllm/graph_grids.py).

Expected figures are the wheel's own words (vllm-0.34.0 config/compilation.py): the prefill grid "1, 2, 4, every 8 up
to 64, four sizes per doubling up to 1024 …, then every 256 tokens, and every 512 once 7% of the size exceeds 512:
54 sizes at 8192" (:89-99) and the decode grid "every count up to 6, then a step of the largest power of two not
above 0.65 * n^(2/3) (2 from 8, 4 from 16, 8 from 48, 16 from 128, 32 from 352): 64 sizes at 1024" (:115-120);
`_split_cudagraph_capture_sizes` (config/vllm.py:2600-2660) takes them on capability family 100 only, unless the
deprecated sizes are set.
"""

from __future__ import annotations

from itertools import pairwise

from benchmarks.calibration.corpus import load
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.graph_grids import decode_grid, prefill_grid
from kvtop.domain.engines.vllm.profile_run import graph_counts
from kvtop.domain.launch import parse_flags

MINIMAX = "file54924313720-minimax-m2.7-fp8-4xa100-tp4-v0221"
RECORD = {record.id: record for record in load("vllm")}[MINIMAX]


def test_the_grids_as_the_wheel_describes_them() -> None:
    prefill = prefill_grid(8192)
    assert len(prefill) == 54 and prefill[:11] == [1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64]
    assert prefill[11:15] == [80, 96, 112, 128] and 1024 in prefill  # four a doubling from 64 up to 1024
    assert all(b - a in (256, 512) for a, b in pairwise(prefill[prefill.index(1024) :]))
    decode = decode_grid(1024)
    assert len(decode) == 64 and decode[:8] == [1, 2, 3, 4, 5, 6, 8, 10]
    assert {b - a for a, b in pairwise(decode) if 352 <= a < 1024} <= {32}  # 32 from 352 (the last to 1024)
    assert prefill_grid(2048, interactivity=True)[:32] == list(
        range(1, 33)
    )  # every count to 32 with dense_head


def _on(gpu: str, release: str, tokens: list[str] | None = None) -> CalibrationInputs:
    """The MiniMax-M2.7 TP 4 start (256 seqs, 2,048 tokens) on `gpu` at `release`, its compilation config replaced."""
    inputs = RECORD.inputs()
    kept = {key: value for key, value in inputs.settings.flags.items() if key != "compilation-config"}
    flags = parse_flags("vllm", tokens or [], strict=True).flags
    settings = inputs.settings.model_copy(update={"flags": {**kept, **flags}})
    return inputs.model_copy(update={"settings": settings, "version": ResolvedVersion(text=release),
                                     "gpu_name": gpu})  # fmt: skip


def test_sm100_at_0_34_captures_the_wide_grids() -> None:
    """A B200 (8,192 tokens, 1,024 seqs: vllm serve's defaults for the GPU) at v0.34.0 captures PIECEWISE graphs at
    the prefill grid to 8,192 and FULL ones at the decode grid to 1,024: the docstrings' 54 and 64. An H100 at
    v0.34.0 keeps the shared sizes: 51 to 512 tokens, FULL at all 51 under 1,024 seqs; a B200 at v0.33.0 the shared
    sizes to its 1,024 cap (profile_run.FAMILY_100_CAP): 3 + 31 + 49 = 83, FULL at all 83."""
    assert graph_counts(_on("B200", "0.34.0")) == (54, 64)
    assert graph_counts(_on("H100", "0.34.0")) == (51, 51)
    assert graph_counts(_on("B200", "0.33.0")) == (83, 83)
    # the deprecated sizes turn the wide defaults off (legacy_sizes, config/vllm.py:2380-2383)
    stated = ["--compilation-config", '{"cudagraph_capture_sizes": [1, 2, 4, 8]}']
    assert graph_counts(_on("B200", "0.34.0", stated)) == (4, 4)
    # one routine (PIECEWISE) takes the prefill sizes alone; FULL_DECODE_ONLY the decode ones alone
    assert graph_counts(
        _on("B200", "0.34.0", ["--compilation-config", '{"cudagraph_mode": "PIECEWISE"}'])
    ) == (54, 0)
    assert graph_counts(
        _on("B200", "0.34.0", ["--compilation-config", '{"cudagraph_mode": "FULL_DECODE_ONLY"}'])
    ) == (0, 64)


def test_the_largest_default_size_is_1024_on_family_100_from_0_28() -> None:
    """`default_max_graph_size = 1024 if current_platform.is_device_capability_family(100) else 512` (config/vllm.py
    :1937-1943 at v0.28.0, :2006 at v0.29.0 … :2401 at v0.34.0; v0.27.1 :1833-1835 caps at 512 on every GPU). At 1,024
    seqs and 8,192 tokens the sizes are 1, 2, 4 (3), 8 … 248 (31) and 256 … 1,024 by 16 (49): 83 on a B200 or a
    GB300 (capability 10.x) from v0.28.0 to v0.33.0; 51 (to 512) before, on an H100 (9.0) and on an RTX PRO 6000
    Blackwell (12.0, not family 100)."""
    for release in ("0.28.0", "0.29.0", "0.30.0", "0.31.0", "0.32.0", "0.33.0"):
        assert graph_counts(_on("B200", release)) == (83, 83), release
        assert graph_counts(_on("H100", release)) == (51, 51), release
    assert graph_counts(_on("GB300", "0.30.0")) == (83, 83)
    assert graph_counts(_on("B200", "0.27.1")) == (51, 51)
    assert graph_counts(_on("RTXPRO6000", "0.30.0"))[0] == 51
    # a stated largest size wins over the cap (max_cudagraph_capture_size, :1930-1933 at v0.28.0)
    stated_largest = ["--compilation-config", '{"max_cudagraph_capture_size": 512}']
    assert graph_counts(_on("B200", "0.30.0", stated_largest)) == (51, 51)
