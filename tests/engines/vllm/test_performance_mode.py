"""`--performance-mode` (kvtop/domain/engines/vllm/performance_mode.py), expected values from vLLM's own arithmetic.

- "throughput" doubles the defaults the launch leaves to vLLM (engine/arg_utils.py:2905-2909 at v0.29.0: `self.
  max_num_batched_tokens *= 2` / `self.max_num_seqs *= 2` only where the original was None): an L4's API-server
  defaults, 2,048 tokens and 256 seqs (get_batch_defaults), become 4,096 and 512; an H100's 8,192 and 1,024 become
  16,384 and 2,048.
- "interactivity" captures 1 … 32 one by one (config/vllm.py:2114-2118 at v0.29.0): at 256 seqs and 2,048 tokens the
  sizes are 1-32 (32), 40-248 every 8 (27) and 256-512 every 16 (17): 76 PIECEWISE graphs, and the 60 of them up to
  256 seqs FULL, against the balanced 51 and 35 (the profile's "PIECEWISE=51 (largest=512), FULL=35 (largest=256)").
- v0.16.0's wheel has no performance_mode; v0.17.0's first has it (arg_utils.py:602, :1277).
- A start of v0.29.0 with `--performance-mode throughput` and both limits given (akamaslabs/vllm-benchmark study 10,
  smoke config tp1-fp8) printed the flags' 8,192 tokens (`compile_ranges_endpoints: [8192]`): nothing doubled.
"""

from __future__ import annotations

import pytest

from benchmarks.calibration.corpus import load
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.batching import default_batch_limits
from kvtop.domain.engines.vllm.flags import VllmFlags
from kvtop.domain.engines.vllm.profile_run import batch_limits, graph_counts
from kvtop.domain.errors import InputError
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags

V029 = ResolvedVersion(text="0.29.0")
MINIMAX = "file54924313720-minimax-m2.7-fp8-4xa100-tp4-v0221"  # 256 seqs, 2,048 tokens, default compilation
RECORD = {record.id: record for record in load("vllm")}[MINIMAX]
AKAMAS_FP8 = {record.id: record for record in load("vllm")}["akamas-s10-gpt-oss-20b-l4-tp1-fp8-v0290"]


def _flags(mode: str | None) -> dict[str, object]:
    return dict(parse_flags("vllm", ["--performance-mode", mode] if mode else [], strict=True).flags)


@pytest.mark.parametrize(("gpu", "mode", "limits"), [
    ("L4", None, (2048, 256)), ("L4", "balanced", (2048, 256)), ("L4", "interactivity", (2048, 256)),
    ("L4", "throughput", (4096, 512)), ("H100", "throughput", (16384, 2048)),
])  # fmt: skip
def test_throughput_doubles_the_defaults(gpu: str, mode: str | None, limits: tuple[int, int]) -> None:
    assert default_batch_limits(gpu_total_bytes(gpu), gpu, V029, flags=_flags(mode))[:2] == limits


def _with(tokens: list[str], release: str = "0.29.0") -> CalibrationInputs:
    """The MiniMax-M2.7 TP 4 A100 start with `tokens` added to its launch (its PIECEWISE config dropped)."""
    inputs = RECORD.inputs()
    kept = {key: value for key, value in inputs.settings.flags.items() if key != "compilation-config"}
    settings = inputs.settings.model_copy(update={"flags": {**kept, **parse_flags("vllm", tokens, strict=True).flags}})
    return inputs.model_copy(update={"settings": settings, "version": ResolvedVersion(text=release)})


def test_a_limit_the_launch_gives_is_not_doubled() -> None:
    assert batch_limits(_with(["--performance-mode", "throughput"]))[:2] == (4096, 512)
    assert batch_limits(AKAMAS_FP8.inputs())[:2] == (8192, 512)  # both given: the start's own 8,192 and 512


@pytest.mark.parametrize(("mode", "counts"), [
    ("balanced", (51, 35)), ("interactivity", (76, 60)), ("throughput", (51, 51)),  # 512 seqs: every size FULL
])  # fmt: skip
def test_the_mode_sets_the_captures(mode: str, counts: tuple[int, int]) -> None:
    assert graph_counts(_with(["--performance-mode", mode])) == counts


def test_stated_capture_sizes_win_over_interactivity() -> None:
    tokens = ["--performance-mode", "interactivity", "--compilation-config.cudagraph_capture_sizes", "[1, 2, 4, 8]"]
    assert graph_counts(_with(tokens)) == (4, 4)


@pytest.mark.parametrize(("release", "value", "refused"), [
    ("0.16.0", "throughput", True), ("0.17.0", "throughput", False), ("0.29.0", "Throughput", True),
    ("0.29.0", "fast", True), ("0.34.0", "interactivity", False),
])  # fmt: skip
def test_the_release_and_the_choice_are_checked(release: str, value: str, refused: bool) -> None:
    settings = parse_flags("vllm", ["--performance-mode", value, "--engine-version", release])
    if refused:
        with pytest.raises(InputError) as err:
            VllmFlags().check_parallel(settings)
        assert err.value.field == "--performance-mode"
    else:
        VllmFlags().check_parallel(settings)


def test_the_flag_is_read_and_written_back() -> None:
    settings = parse_flags("vllm", ["--performance-mode", "interactivity"], strict=True)
    assert VllmFlags().to_flags(settings)[-2:] == ["--performance-mode", "interactivity"]
