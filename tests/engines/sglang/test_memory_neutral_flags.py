"""SGLang flags with no effect on memory: accepted, named under the plan's engine flags, never changing a figure.

C01's pasted line (tests/data/cases/sglang/C01/engine.log, vllm-project/vllm#21348: Qwen3-235B-A22B-FP8 on 4× H100,
SGLang beside vLLM) logged 367,404 tokens (tests/data/calibration/sglang.jsonl `case-sglang-C01-qwen3-235b-fp8-h100-tp4`).
SGLang's own Qwen 3 guide (sgl-project/sglang#5858) launches the same checkpoint at TP 4 with `--reasoning-parser qwen3`.
The flag table's rows are checked against the wheels' declarations: `--reasoning-parser` (v0.4.6.post5 on; v0.5.23
srt/server_args.py:368), `--log-level` (v0.4.0 on; v0.5.23 srt/arg_groups/fields/observability.py:31), `--api-key`
(v0.4.0 on; v0.5.23 srt/arg_groups/fields/serving.py:160), `--enable-symm-mem` (symmetric memory: not modelled).
"""

from __future__ import annotations

import pytest

from kvtop.cli import main
from kvtop.domain.engines.sglang.flags import MEMORY_NEUTRAL, SglangFlags
from kvtop.domain.engines.sglang.flags_table import RELEASES_READ
from kvtop.domain.engines.sglang.flags_unmodelled import UNMODELLED
from tests.data_paths import CONFIGS, DATA

QWEN3_FP8 = str(CONFIGS / "Qwen--Qwen3-235B-A22B-FP8.json")
C01_LOG = DATA / "cases" / "sglang" / "C01" / "engine.log"
LOGGED_TOKENS = 367_404  # C01: SGLang's max_total_num_tokens
GUIDE_FLAGS = " --reasoning-parser qwen3"  # sgl-project/sglang#5858


def _c01_line() -> str:
    return next(line.strip() for line in C01_LOG.read_text().splitlines() if "sglang.launch_server" in line)


def _plan(capsys: pytest.CaptureFixture[str], cmd: str) -> list[str]:
    assert main(["plan", "--model", QWEN3_FP8, "--gpu", "H100", "--cmd", cmd]) == 0
    return capsys.readouterr().out.splitlines()


def _row(lines: list[str], head: str) -> str:
    return next(line for line in lines if line.startswith(head))


def _typed_and_bare(
    capsys: pytest.CaptureFixture[str], launch: list[str], typed: list[str], logged: int
) -> tuple[list[str], list[str]]:
    """The plan with `typed` and without, having asserted both give one capacity whose interval holds `logged`."""
    assert main([*launch, *typed]) == 0
    with_flags = capsys.readouterr().out.splitlines()
    assert main(launch) == 0
    bare = capsys.readouterr().out.splitlines()
    assert _row(with_flags, "Token capacity") == _row(bare, "Token capacity")
    low, high = (int(n.replace(",", "")) for n in _row(with_flags, "Interval").split()[1:4:2])
    assert low <= logged <= high
    return with_flags, bare


def test_c01s_pasted_line_plans_the_same_with_the_guides_parser_and_neutral_flags(
    capsys: pytest.CaptureFixture[str],
) -> None:
    line = _c01_line()
    without = _plan(capsys, line)
    with_neutral = _plan(capsys, line + GUIDE_FLAGS + " --log-level info --api-key sk-c01-not-a-real-key")
    assert _row(with_neutral, "Token capacity") == _row(without, "Token capacity")
    assert _row(with_neutral, "Interval") == _row(without, "Interval")
    low, high = (int(n.replace(",", "")) for n in _row(with_neutral, "Interval").split()[1:4:2])
    assert low <= LOGGED_TOKENS <= high
    flags_at = next(i for i, text in enumerate(with_neutral) if text.startswith("engine flags:"))
    assert "--reasoning-parser" not in with_neutral[flags_at]  # not written back: not a sizing input
    assert with_neutral[flags_at + 1] == (
        "  no effect on memory (accepted, not modelled): --reasoning-parser --log-level --api-key"
    )
    assert not any("sk-c01" in text for text in with_neutral)
    assert not any("no effect on memory" in text for text in without)


def test_a_flag_kvtop_does_not_model_is_refused_typed_and_named_on_a_pasted_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    typed = ["plan", "--engine", "sglang", "--model", QWEN3_FP8, "--gpu", "H100", "--tp", "4", "--enable-symm-mem"]
    assert main(typed) == 2
    err = capsys.readouterr().err
    assert "--enable-symm-mem: a flag of SGLang whose effect on memory kvtop does not model" in err
    lines = _plan(capsys, _c01_line() + " --enable-symm-mem")
    assert "--enable-symm-mem" not in _row(lines, "engine flags:")


def test_the_tables_are_disjoint_from_what_kvtop_reads_and_span_the_releases_read() -> None:
    flags = SglangFlags()
    read = set(flags.spellings) | flags.read_by_rules | {"--trust-remote-code"}
    assert not set(MEMORY_NEUTRAL) & set(UNMODELLED)
    assert not (set(MEMORY_NEUTRAL) | set(UNMODELLED)) & read
    assert MEMORY_NEUTRAL["--api-key"].first == RELEASES_READ[0]  # in v0.4.0's add_cli_args already
    assert MEMORY_NEUTRAL["--reasoning-parser"].source == "srt/server_args.py:368 (v0.5.23)"
    assert UNMODELLED["--enable-symm-mem"].last is None  # still in v0.5.23


R1 = str(CONFIGS / "deepseek-ai--DeepSeek-R1.json")
# SGLang's docs, 'Deploy On Kubernetes' (search-index id 609128784): DeepSeek-R1 over 2 × 8 H20, every rank's
# 'max_total_num_tokens=712400' (tests/data/calibration/sglang.jsonl `file609128784-…-2x8h20-tp16-v043`)
H20_LOGGED = 712_400
H20_LAUNCH = ["plan", "--model", R1, "--engine", "sglang", "--engine-version", "0.4.3", "--gpu", "H20", "--tp", "16",
              "--nnodes", "2", "--mem-fraction-static", "0.93", "--max-running-requests", "20", "--trust-remote-code"]  # fmt: skip


def test_torch_compile_max_bs_alone_changes_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    """The docs' lws.yaml types `--torch-compile-max-bs 8` without `--enable-torch-compile`: SGLang reads the cap only
    for compiled batch sizes (cuda_graph_runner.py:137-141 at 0.4.3), so the launch as typed plans as without it and
    holds the logged pool; with `--enable-torch-compile` it is refused at 0.4.3 (torch_compile.py: read from 0.5.10)."""
    typed, _ = _typed_and_bare(capsys, H20_LAUNCH, ["--torch-compile-max-bs", "8"], H20_LOGGED)
    assert "--torch-compile-max-bs" in typed[typed.index(_row(typed, "engine flags:")) + 1]
    assert main([*H20_LAUNCH, "--torch-compile-max-bs", "8", "--enable-torch-compile"]) == 2


R1_QWEN_32B = str(DATA / "calibration" / "configs" / "deepseek-ai--DeepSeek-R1-Distill-Qwen-32B.RECONSTRUCTED.json")
# a lab's note (search-index id 19161898403): 4 × RTX 3090 without NVLink, SGLang 0.4.2.post1,
# 'max_total_num_tokens=67772' (tests/data/calibration/sglang.jsonl `file19161898403-…-4x3090-tp4-v042post1`)
RTX3090_LOGGED = 67_772
RTX3090_LAUNCH = ["plan", "--model", R1_QWEN_32B, "--engine", "sglang", "--engine-version", "0.4.2.post1", "--gpu",
                  "RTX3090", "--tp", "4", "--trust-remote-code"]  # fmt: skip


def test_the_p2p_check_changes_nothing_kvtop_plans(capsys: pytest.CaptureFixture[str]) -> None:
    """`--enable-p2p-check` runs SGLang's peer-access test, which can only turn the custom all-reduce off, after the
    test that turns it off on more than two PCIe GPUs (custom_all_reduce.py:194-210 at 0.4.3): the 4 × 3090 launch as
    typed plans as without it and holds the logged pool."""
    typed, _ = _typed_and_bare(capsys, RTX3090_LAUNCH, ["--enable-p2p-check"], RTX3090_LOGGED)
    assert "--enable-p2p-check" in typed[typed.index(_row(typed, "engine flags:")) + 1]


QWEN3_8B = str(CONFIGS / "Qwen--Qwen3-8B.json")
QWEN3_VL_4B = str(CONFIGS / "heldout" / "Qwen--Qwen3-VL-4B-Instruct.json")
# Extious/sglang b63fa3dc…: baseline-fixed-4090/logs/server_35272.log, '#tokens: 30882' on each DP rank
# (tests/data/calibration/sglang.jsonl `extious-qwen3-8b-dp2-rtx4090-hicache`)
RTX4090_LOGGED = 30_882
RTX4090_LAUNCH = ["plan", "--model", QWEN3_8B, "--engine", "sglang", "--engine-version", "0.5.11", "--gpu", "RTX4090",
                  "--dp-size", "2", "--attention-backend", "triton", "--enable-hierarchical-cache", "--hicache-size", "20"]  # fmt: skip
# zcnrex/sglang bd5cf9dd…: production_validation/control/server.log, '#tokens: 1607904'
# (sglang.jsonl `zcnrex-qwen3-vl-4b-b300-control-devbuild`)
B300_LOGGED = 1_607_904
B300_LAUNCH = ["plan", "--model", QWEN3_VL_4B, "--engine", "sglang", "--engine-version", "0.5.23", "--gpu", "B300",
               "--dtype", "bfloat16", "--kv-cache-dtype", "bfloat16", "--attention-backend", "trtllm_mha",
               "--page-size", "32", "--chunked-prefill-size", "16384"]  # fmt: skip


@pytest.mark.parametrize(
    ("launch", "logged", "typed"),
    [
        # the sampler's kernel (layers/sampler.py:402) and the DP controller's dispatch (data_parallel_controller.py:173)
        (RTX4090_LAUNCH, RTX4090_LOGGED, ["--sampling-backend", "pytorch"]),
        (RTX4090_LAUNCH, RTX4090_LOGGED, ["--load-balance-method", "round_robin"]),
        # the BF16 GEMM kernel (unquant.py:598), a chunk mixed with decodes (scheduler.py:1377), no all-reduce fusion
        # workspace at graph capture (overrides.py:1009, base_runner.py:299-333): none before the pool (v0.5.23)
        (B300_LAUNCH, B300_LOGGED, ["--bf16-gemm-backend", "cutedsl"]),
        (B300_LAUNCH, B300_LOGGED, ["--enable-mixed-chunk"]),
        (B300_LAUNCH, B300_LOGGED, ["--enforce-disable-flashinfer-allreduce-fusion"]),
    ],
)
def test_runtime_flags_plan_as_without_and_hold_the_logged_pool(
    capsys: pytest.CaptureFixture[str], launch: list[str], logged: int, typed: list[str]
) -> None:
    with_flag, _ = _typed_and_bare(capsys, launch, typed, logged)
    assert typed[0] in with_flag[with_flag.index(_row(with_flag, "engine flags:")) + 1]
    assert typed[0] in MEMORY_NEUTRAL and typed[0] not in UNMODELLED


@pytest.mark.parametrize(
    "typed",
    [["--cuda-graph-backend-prefill", "full"]],
)
def test_flags_read_and_kept_refused_are_refused_by_name(capsys: pytest.CaptureFixture[str], typed: list[str]) -> None:
    """Kept refused with the reason read (flags_unmodelled.py): the prefill-graph backend's reserve."""
    assert main([*RTX4090_LAUNCH, *typed]) == 2
    assert typed[0] in capsys.readouterr().err


def test_the_overlap_schedule_off_plans_a_dense_model_as_typed(capsys: pytest.CaptureFixture[str]) -> None:
    """`--disable-overlap-schedule` is read only for a hybrid Mamba model's slots (mamba_strategy.mamba_ratio): Extious's
    launch as typed (its three runtime flags with it) plans as without them and holds the logged 30,882."""
    typed = ["--disable-overlap-schedule", "--sampling-backend", "pytorch", "--load-balance-method", "round_robin"]
    with_flags, bare = _typed_and_bare(capsys, RTX4090_LAUNCH, typed, RTX4090_LOGGED)
    assert _row(with_flags, "Max running reqs") == _row(bare, "Max running reqs")
