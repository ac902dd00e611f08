"""vLLM's capture sizes under speculative decoding from v0.29.0 and the V2 runner's decode keys (graph_keys.py).

Expected counts are vLLM's arithmetic worked by hand. `_set_cudagraph_sizes` (config/vllm.py:2006-2091, :2142-2144 at
v0.29.0): q = uniform_decode_query_len = 1 + num_speculative_tokens; the default largest size min(max_num_seqs × q × 2,
512); the strided sizes 1, 2, 4, every 8 below 256, every 16; then `uniform_decode_sizes` = n × q for n in
request_counts(max_num_seqs) (1, 2, 4, every 8 below 256, every 16, max_num_seqs itself) at or below that largest,
appended where at or below max_num_batched_tokens. The V2 runner's `CudaGraphManager._init_candidates`
(v1/worker/gpu/cudagraph_utils.py:252-274 at v0.29.0): a FULL decode key at round_up(size, q) where it is at most
q × max_num_seqs and the largest size, de-duplicated; the mixed mode one graph a size.
At 8 seqs and k = 2 (q = 3): largest 48, strided [1, 2, 4, 8, 16, 24, 32, 40, 48]; decode sizes 3 × [1, 2, 4, 8] =
[3, 6, 12, 24], so 12 sizes; FULL decode keys {3, 6, 9, 12, 18, 24} = 6 (bound 24).
"""

from __future__ import annotations

import pytest

from benchmarks.calibration.corpus import load
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.graph_keys import spec_decode_sizes
from kvtop.domain.engines.vllm.profile_run import graph_counts
from kvtop.domain.launch import parse_flags

# a MoE at TP 4 on A100s (capability 8.0: the 512 cap); V2 runner from v0.29.0 (runner_eras), V1 at v0.28.0
RECORD = {record.id: record for record in load("vllm")}["file54924313720-minimax-m2.7-fp8-4xa100-tp4-v0221"]
MTP2 = ["--speculative-config", '{"method": "mtp", "num_speculative_tokens": 2}']  # a method V2 runs


def _counts(release: str, *flags: str) -> tuple[int, int]:
    settings = parse_flags("vllm", ["--tensor-parallel-size", "4", "--max-model-len", "8192", "--max-num-seqs", "8",
                                    *flags], strict=True)  # fmt: skip
    inputs: CalibrationInputs = RECORD.inputs()
    return graph_counts(inputs.model_copy(update={"settings": settings, "version": ResolvedVersion(text=release)}))


@pytest.mark.parametrize(("release", "flags", "counts"), [
    ("0.29.0", [], (12, 6)),  # the decode sizes join; V2 rounds the decode keys to multiples of 3 up to 24
    ("0.33.0", [], (12, 6)),  # the same code at v0.33.0 (config/vllm.py:2487-2548, cudagraph_utils.py:321-343)
    ("0.29.0", ["-cc.cudagraph_mode=PIECEWISE"], (12, 0)),
    ("0.29.0", ["-cc.cudagraph_mode=FULL_DECODE_ONLY"], (0, 6)),
    # largest min(48, 40): strided [1 … 40] (8) + 3, 6, 12 (24 already there) = 11; decode keys bound 24: 6
    ("0.29.0", ["--max-num-batched-tokens", "40"], (11, 6)),
    # a stated largest size: no decode sizes added (9 strided); decode keys {3, 6, 9, 18, 24}
    ("0.29.0", ["-cc.max_cudagraph_capture_size=48"], (9, 5)),
    # v0.28.0: the V1 runner (MoE), no decode sizes; its keys (graph_keys.rounded_sizes): multiples of 3 up to 48
    ("0.28.0", [], (8, 5)),
])  # fmt: skip
def test_speculative_decoding_sizes_and_v2_decode_keys(release: str, flags: list[str], counts: tuple[int, int]) -> None:
    assert _counts(release, *MTP2, *flags) == counts


def test_plain_decoding_on_v2_keeps_its_count() -> None:
    """Without drafts: largest min(16, 512), sizes [1, 2, 4, 8, 16], FULL at the 4 up to 8 seqs (q = 1)."""
    assert _counts("0.29.0") == (5, 4)


def test_the_request_count_grid_stops_at_the_cap() -> None:
    """256 seqs, q = 3: request_counts(256) = 1, 2, 4, 8 … 248, 256; n × 3 ≤ 512 keeps n ≤ 168 (24 counts: 1, 2, 4
    and 8 … 168), so 3, 6, 12, 24, 48, …, 504."""
    sizes = spec_decode_sizes(3, 256, 512, 512, ResolvedVersion(text="0.29.0"))
    assert sizes == (3, 6, 12, *range(24, 505, 24))
    assert spec_decode_sizes(3, 256, 512, 512, ResolvedVersion(text="0.28.0")) == ()
    assert spec_decode_sizes(1, 256, 512, 512, ResolvedVersion(text="0.29.0")) == ()


# a dense Qwen3 (V2 runner's listed class from v0.22.0: runner_eras) at 8 seqs, k = 2
DENSE = {record.id: record for record in load("vllm")}["llmd-v019-qwen3-8b"]


@pytest.mark.parametrize(("release", "counts", "flags"), [
    # v0.22.0: sizes [1, 2, 4, 8, 16, …, 48] rounded to multiples of 3 ≤ 48 in every mode: {3, 6, 9, 18, 24, 33, 42,
    # 48} (8); FULL decode keys 3 ≤ size ≤ 24: {3, 6, 9, 18, 24} (cudagraph_utils.py:113-116, :137-148 at v0.22.0)
    ("0.22.0", (8, 5), []),
    ("0.22.0", (8, 0), ["-cc.cudagraph_mode=PIECEWISE"]),  # rounded under PIECEWISE too (the V1 runner: 9 sizes)
    # v0.25.0: the 9 sizes unrounded, decode keys round_up(size, 3) ≤ 24: {3, 6, 9, 18, 24} (:232-255 at v0.25.0)
    ("0.25.0", (9, 5), []),
    ("0.29.0", (12, 6), []),  # the decode sizes 3, 6, 12 join (config/vllm.py:2030-2091)
])  # fmt: skip
def test_the_v2_runner_keys_decode_graphs_by_release(release: str, counts: tuple[int, int], flags: list[str]) -> None:
    settings = parse_flags("vllm", ["--max-model-len", "8192", "--max-num-seqs", "8", *MTP2, *flags], strict=True)
    inputs: CalibrationInputs = DENSE.inputs()
    version = ResolvedVersion(text=release)
    assert graph_counts(inputs.model_copy(update={"settings": settings, "version": version})) == counts
