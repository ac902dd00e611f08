"""vLLM's `--compilation-config` (and `-cc`, `-O.<field>`, the dotted `--compilation-config.<field>`) and the
optimization level, read for the CUDA graphs the profile captures (kvtop/domain/engines/vllm/compilation.py).

Expected counts are vLLM's own arithmetic: `_set_cudagraph_sizes` (config/vllm.py at v0.22.0: 1, 2, 4, every 8 below
256, every 16 up to min(2 × max_num_seqs, 512, max_num_batched_tokens)) and the profile's "Profiling CUDA graph
memory: PIECEWISE=51 (largest=512), FULL=35 (largest=256)" at 256 seqs (test_calibration_vllm_graphs.py).
"""

from __future__ import annotations

import pytest

from benchmarks.calibration.corpus import load
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm import calibration as vllm
from kvtop.domain.engines.vllm.compilation import graph_config, graph_mode_not_modelled, unread_fields
from kvtop.domain.engines.vllm.flags import VllmFlags
from kvtop.domain.engines.vllm.profile_run import graph_counts, graphs_charged
from kvtop.domain.errors import InputError
from kvtop.domain.launch import parse_flags

MINIMAX = "file54924313720-minimax-m2.7-fp8-4xa100-tp4-v0221"
RECORD = {record.id: record for record in load("vllm")}[MINIMAX]
# the guide's launch (search-index id 54924313720): `--compilation-config '{"cudagraph_mode":"PIECEWISE"}'`
PIECEWISE_JSON = ["--compilation-config", '{"cudagraph_mode":"PIECEWISE"}']


def _with(tokens: list[str], release: str = "0.22.1") -> CalibrationInputs:
    """The MiniMax-M2.7 TP 4 A100 start (256 seqs, 2,048 tokens) with `tokens` for its compilation config."""
    inputs = RECORD.inputs()
    kept = {key: value for key, value in inputs.settings.flags.items() if key != "compilation-config"}
    flags = parse_flags("vllm", tokens, strict=True).flags
    settings = inputs.settings.model_copy(update={"flags": {**kept, **flags}})
    return inputs.model_copy(update={"settings": settings, "version": ResolvedVersion(text=release)})


def test_the_minimax_launch_captures_piecewise_graphs_only() -> None:
    assert RECORD.settings.flags["compilation-config"] == PIECEWISE_JSON[1]  # the corpus record holds the launch's
    assert graph_counts(RECORD.inputs()) == (51, 0)
    assert graph_counts(_with([])) == (51, 35)  # the default FULL_AND_PIECEWISE
    graphs = {term.term: term for term in vllm.terms(RECORD.inputs())}[Term.CUDA_GRAPHS]
    assert "51 PIECEWISE + 0 FULL" in graphs.basis and "cudagraph_mode PIECEWISE" in graphs.basis
    default = {term.term: term for term in vllm.terms(_with([]))}[Term.CUDA_GRAPHS]
    assert graphs.bytes < default.bytes  # 34 FULL captures fewer


@pytest.mark.parametrize(("tokens", "counts"), [
    (["-cc.cudagraph_mode=full_decode_only"], (0, 35)),  # any case (CUDAGraphMode[value.upper()])
    (["--compilation-config.cudagraph_mode", "FULL"], (0, 51)),
    (["-O.cudagraph_mode=PIECEWISE"], (51, 0)),  # -O's dotted form, read as the compilation config's
    (["--compilation-config.cudagraph_capture_sizes", "[1, 2, 4, 8, 4096]"], (4, 4)),  # 4096 > 2,048 tokens: dropped
    (["--compilation-config", '{"max_cudagraph_capture_size": 256}'], (35, 35)),  # 1, 2, 4, 8 … 248, 256
    (["--compilation_config", '{"cudagraph_mode": "PIECEWISE", "mode": 3}'], (51, 0)),  # other fields accepted
    (["-O1"], (51, 0)),  # OPTIMIZATION_LEVEL_01: PIECEWISE
    (["-O", "2"], (51, 35)),
])  # fmt: skip
def test_the_graph_fields_set_the_captures(tokens: list[str], counts: tuple[int, int]) -> None:
    assert graph_counts(_with(tokens)) == counts


def test_no_graphs_no_charge() -> None:
    """cudagraph_mode NONE (or -O0 from v0.12.0) skips `profile_cudagraph_memory` (gpu_worker.py)."""
    for tokens in (["-O0"], ["-cc", '{"cudagraph_mode": "NONE"}'], ["--optimization-level", "0"]):
        inputs = _with(tokens)
        assert not graphs_charged(inputs)
        assert Term.CUDA_GRAPHS not in {term.term for term in vllm.terms(inputs)}


def test_o_is_the_compilation_config_before_v0_12() -> None:
    """At v0.11.0 `-O` is `--compilation-config` (`-O3` its level, no graph field), from v0.12.0 the level."""
    old = ResolvedVersion(text="0.11.0")
    assert graph_config({"O": '{"cudagraph_mode": "PIECEWISE"}'}, old).mode == "PIECEWISE"
    assert graph_config({"O": "0"}, ResolvedVersion(text="0.12.0")).mode == "NONE"


@pytest.mark.parametrize(("flags", "release", "mode"), [
    ({"O0": True}, "0.11.0", "NONE"),  # level 0, NO_COMPILATION: config/__init__.py:361-382 sets cudagraph_mode NONE
    ({"O": "0"}, "0.11.2", "NONE"),  # config/vllm.py:465-501 (the level read as CompilationMode 0)
    ({"O2": True}, "0.10.1", "NONE"),  # level 2, Dynamo once: not PIECEWISE, no graphs (:3554-3560)
    ({"compilation-config": "1"}, "0.11.0", "NONE"),  # CompilationConfig.from_cli: a digit is the level
    ({"O3": True}, "0.11.0", None),  # PIECEWISE: vLLM's default mode holds
    ({"O0": True}, "0.10.0", None),  # config.py:4585-4591: V1 sets level PIECEWISE whatever -O says
    ({"O0": True}, "0.9.0", None),  # config.py:4305-4322 at v0.9.0.1, the same
    ({"O0": True, "compilation-config.cudagraph_mode": "FULL"}, "0.11.0", "FULL"),  # a stated mode wins
])  # fmt: skip
def test_a_compilation_level_below_3_captures_no_graphs_at_v0_10_1_to_v0_11(
        flags: dict[str, object], release: str, mode: str | None) -> None:
    """v0.10.1 … v0.11.2 (vllm#19340): where the config states no cudagraph_mode, a stated compilation level other
    than 3 (PIECEWISE) leaves it NONE, read in each release's wheel; before v0.10.1 V1 compiled at level 3 anyway."""
    assert graph_config(flags, ResolvedVersion(text=release)).mode == mode


@pytest.mark.parametrize(("tokens", "field"), [
    (["--compilation-config", "{cudagraph_mode: PIECEWISE}"], "--compilation-config"),
    (["--compilation-config", "[1, 2]"], "--compilation-config"),
    (["-cc.cudagraph_mode=SOMETIMES"], "--compilation-config"),
    (["-cc.cudagraph_capture_sizes=[0, 8]"], "--compilation-config"),
    (["-O", "7"], "--optimization-level"),
])  # fmt: skip
def test_a_value_vllm_refuses_is_refused_by_its_flag(tokens: list[str], field: str) -> None:
    with pytest.raises(InputError) as err:
        graph_counts(_with(tokens))
    assert err.value.field == field


def test_the_flags_are_written_back() -> None:
    settings = parse_flags("vllm", ["--tensor-parallel-size", "4", *PIECEWISE_JSON], strict=True)
    written = VllmFlags().to_flags(settings)
    assert written[-2:] == PIECEWISE_JSON


@pytest.mark.parametrize("tokens", [["-cc", '{"cudagraph_mode": "NONE"}'], ["-cc.cudagraph_mode=NONE"]])
def test_cc_is_refused_before_v0_12_as_vllm_refuses_it(tokens: list[str]) -> None:
    """`-cc` is first in v0.12.0's arg_utils.py:1128 (`"--compilation-config", "-cc"`); the v0.11.2 wheel's
    arg_utils.py and argparse_utils.py have no `-cc`, so its argparse rejects it ("unrecognized arguments"), and kvtop
    says so as it says it of any flag a release lacks (flags_table.missing_at); v0.12.0 reads it as the long flag."""
    settings = parse_flags("vllm", [*tokens, "--engine-version", "0.11.2"], strict=True)
    with pytest.raises(InputError) as err:
        VllmFlags().check_parallel(settings)
    assert err.value.field == tokens[0].split("=")[0]
    assert "vLLM 0.11.2 has no -cc (first in v0.12.0 of the releases read" in str(err.value)
    # a release the plan resolves later (a log's) refuses it too, from the same table: test_release_spans.py
    assert graph_config(settings.flags, ResolvedVersion(text="0.12.0")).mode == "NONE"


@pytest.mark.parametrize(("flags", "release", "mode"), [
    # `-O3` is equivalent to `-O.level=3` (same as `-O='{"level":3}'`): config/__init__.py:124 at v0.11.0, the field
    # config/compilation.py:155; the default-mode branch :336-376 leaves cudagraph_mode NONE unless level 3
    ({"compilation-config": '{"level": 0}'}, "0.11.0", "NONE"),
    ({"compilation-config.level": "2"}, "0.10.1", "NONE"),
    ({"O": '{"level": 3}'}, "0.11.0", None),
    # v0.11.1: "mode" beside the deprecated "level", a mode's name accepted; only mode where both (:609-618)
    ({"compilation-config": '{"mode": "NONE"}'}, "0.11.1", "NONE"),
    ({"compilation-config": '{"mode": 3, "level": 0}'}, "0.11.2", None),
    # v0.12.0-v0.29.x: a mode other than VLLM_COMPILE overrides even a stated cudagraph_mode (config/vllm.py:648-658)
    ({"compilation-config": '{"mode": 0, "cudagraph_mode": "FULL"}'}, "0.22.1", "NONE"),
    ({"compilation-config": '{"level": 1}'}, "0.17.1", "NONE"),
    ({"compilation-config": '{"mode": "VLLM_COMPILE", "cudagraph_mode": "PIECEWISE"}'}, "0.29.0", "PIECEWISE"),
])  # fmt: skip
def test_the_json_level_and_mode_set_the_graphs_as_a_digit_does(
        flags: dict[str, object], release: str, mode: str | None) -> None:
    assert graph_config(flags, ResolvedVersion(text=release)).mode == mode


def test_the_json_level_is_refused_from_v0_18_and_a_mode_from_v0_30_named_not_read() -> None:
    """v0.18.0's CompilationConfig has no `level` and forbids extra fields; from v0.30.0 a mode other than 3 drops only
    the piecewise graphs unless breakable graphs run (by architecture, not read): vLLM's default mode holds in the
    count and the field stays named unread (as everywhere: a compiled pass may hang on it, fusion_workspace.py)."""
    with pytest.raises(InputError) as err:
        graph_config({"compilation-config": '{"level": 0}'}, ResolvedVersion(text="0.18.0"))
    assert err.value.field == "--compilation-config"
    json_mode = {"compilation-config": '{"mode": 0}'}
    assert graph_config(json_mode, ResolvedVersion(text="0.30.0")).mode is None
    assert unread_fields(json_mode, ResolvedVersion(text="0.30.0")) == ("mode",)
    lora = {"compilation-config": '{"cudagraph_specialize_lora": false}'}  # read by graph_keys.py
    assert unread_fields(lora, ResolvedVersion(text="0.22.1")) == ()


@pytest.mark.parametrize(("flags", "release", "named"), [
    ({"compilation-config": '{"mode": 0}'}, "0.30.0", True),  # _normalize_piecewise_cudagraph_mode, :1013-1029
    ({"compilation-config": '{"mode": "DYNAMO_TRACE_ONCE"}'}, "0.33.0", True),
    ({"compilation-config": '{"mode": 3}'}, "0.33.0", False),  # VLLM_COMPILE keeps the piecewise graphs
    ({"compilation-config": '{"mode": 0, "cudagraph_mode": "NONE"}'}, "0.31.0", False),  # no graphs to drop
    ({"compilation-config": '{"mode": 0}'}, "0.29.0", False),  # graphs NONE before v0.30.0: counted as such
    ({}, "0.33.0", False),
])  # fmt: skip
def test_a_mode_dropping_the_piecewise_graphs_from_v0_30_is_named_not_modelled(
        flags: dict[str, object], release: str, named: bool) -> None:
    """From v0.30.0 vLLM keeps or drops the piecewise graphs of a mode other than VLLM_COMPILE by the model's
    architecture (breakable CUDA graphs), which kvtop does not read: the plan says so rather than count silently."""
    said = graph_mode_not_modelled(flags, ResolvedVersion(text=release))
    assert (said is not None) == named
    if said is not None:
        assert "piecewise" in said and f"vLLM {release}" in said
