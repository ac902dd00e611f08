"""vLLM flags with no effect on memory: accepted, named under the plan's engine flags, never changing a figure.

The AIMO-3 start (tests/data/calibration/vllm.jsonl `jxm-aimo3-gpt-oss-120b-fp8kv-h100-v0112`, vLLM 0.11.2, one
H100) was launched with `--seed 42 --stream-interval 200 --disable-log-stats` beside the flags kvtop reads; kvtop
refused each ("not a flag of vLLM that kvtop knows"). Its log: 'GPU KV cache size: 233,296 tokens'. The flag table's
rows are checked against the wheels' argparse calls: `--seed` (EngineArgs.add_cli_args, v0.11.2 arg_utils.py:619),
`--stream-interval` (v0.11.2 arg_utils.py:1101, absent from v0.11.0's and v0.10.2's arg_utils.py), `--disable-log-stats`
(v0.11.2 arg_utils.py:1159), `--cpu-offload-gb` (v0.33.0 arg_utils.py:1470: weights moved to the host, not modelled).
"""

from __future__ import annotations

import pytest

from kvtop.cli import main
from kvtop.domain.engines.vllm.flags import MEMORY_NEUTRAL, VllmFlags
from kvtop.domain.engines.vllm.flags_table import RELEASES_READ, FlagSpan, missing_at
from kvtop.domain.engines.vllm.flags_unmodelled import UNMODELLED
from kvtop.domain.errors import InputError
from kvtop.domain.launch import parse_flags
from kvtop.domain.launch_notes import ignored_flags_note
from kvtop.sources.processes import ProcessRecord, _engine_from_server
from tests.data_paths import CONFIGS

GPT_OSS = str(CONFIGS / "openai--gpt-oss-120b.json")
AIMO3 = ["--engine", "vllm", "--engine-version", "0.11.2", "--gpu", "H100", "--max-model-len", "65536",
         "--gpu-memory-utilization", "0.96", "--kv-cache-dtype", "fp8_e4m3", "--enable-prefix-caching",
         "--max-num-seqs", "256", "--async-scheduling"]  # fmt: skip
NEUTRAL = ["--seed", "42", "--stream-interval", "200", "--disable-log-stats"]
LOGGED_TOKENS = 233_296  # 'GPU KV cache size: 233,296 tokens'


def _plan(capsys: pytest.CaptureFixture[str], *args: str) -> list[str]:
    assert main(["plan", "--model", GPT_OSS, *args]) == 0
    return capsys.readouterr().out.splitlines()


def _row(lines: list[str], head: str) -> str:
    return next(line for line in lines if line.startswith(head))


def test_the_aimo3_launch_plans_with_its_neutral_flags_and_the_figure_does_not_move(
    capsys: pytest.CaptureFixture[str],
) -> None:
    without = _plan(capsys, *AIMO3)
    with_neutral = _plan(capsys, *AIMO3, *NEUTRAL)
    assert _row(with_neutral, "Token capacity") == _row(without, "Token capacity")
    assert _row(with_neutral, "Interval") == _row(without, "Interval")
    low, high = (int(n.replace(",", "")) for n in _row(with_neutral, "Interval").split()[1:4:2])
    assert low <= LOGGED_TOKENS <= high  # the start's own figure inside the interval, as before
    flags_at = next(i for i, line in enumerate(with_neutral) if line.startswith("engine flags:"))
    assert "--seed" not in with_neutral[flags_at]  # not written back: vLLM's line, not a sizing input
    assert with_neutral[flags_at + 1] == (
        "  no effect on memory (accepted, not modelled): --seed --stream-interval --disable-log-stats"
    )
    assert not any("no effect on memory" in line for line in without)


def test_the_whole_launch_line_plans_and_an_api_key_is_named_never_shown(
    capsys: pytest.CaptureFixture[str],
) -> None:
    cmd = ("vllm serve /kaggle/input/models/danielhanchen/gpt-oss-120b/transformers/default/1 --host 0.0.0.0 --seed 42"
           " --max-model-len 65536 --served-model-name gpt-oss --gpu-memory-utilization 0.96 --kv-cache-dtype fp8_e4m3"
           " --enable-prefix-caching --max-num-seqs 256 --async-scheduling --stream-interval 200 --disable-log-stats"
           " --api-key sk-aimo3-not-a-real-key")  # fmt: skip
    lines = _plan(capsys, "--engine-version", "0.11.2", "--gpu", "H100", "--cmd", cmd)
    assert _row(lines, "Token capacity") == _row(_plan(capsys, *AIMO3), "Token capacity")
    assert lines[-1].endswith("--seed --stream-interval --disable-log-stats --api-key")
    assert not any("sk-aimo3" in line for line in lines)


def test_a_release_without_the_flag_refuses_it_as_vllms_argparse_would(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert (
        main(
            ["plan", "--model", GPT_OSS, *AIMO3[:2], "--engine-version", "0.10.2", "--stream-interval", "200"]
        )
        != 0
    )
    err = capsys.readouterr().err
    assert "--stream-interval: vLLM 0.10.2 has no --stream-interval (first in v0.11.1" in err
    assert "Traceback" not in err
    assert (
        missing_at("--stream-interval", MEMORY_NEUTRAL["--stream-interval"], "0.11.1") is None
    )  # v0.11.1's engine/arg_utils.py is v0.11.2's, byte for byte
    assert missing_at("--seed", MEMORY_NEUTRAL["--seed"], "0.6.0") is None  # before the oldest read: unknown


def test_a_flag_that_changes_memory_stays_refused_and_says_kvtop_knows_it() -> None:
    """`--cpu-offload-gb` (v0.33.0 arg_utils.py:1470: weights moved to host memory) is vLLM's own flag: refused as one
    kvtop does not model, not as unknown (which a typo still is, and a flag no release read has)."""
    with pytest.raises(InputError) as refused:
        parse_flags("vllm", ["--cpu-offload-gb", "8"], strict=True)
    assert str(refused.value) == ("--cpu-offload-gb: a flag of vLLM whose effect on memory kvtop does not model: plan "
                                  "without it, or read the log of a start that used it with `kvtop explain`")  # fmt: skip
    with pytest.raises(InputError, match="^--cpu_offload_gb: a flag of vLLM whose effect on memory"):
        parse_flags("vllm", ["--cpu_offload_gb", "8"], strict=True)  # vLLM's parser reads it as --cpu-offload-gb
    with pytest.raises(InputError, match="^--cpu-offload-gib: not a flag of vLLM that kvtop knows$"):
        parse_flags("vllm", ["--cpu-offload-gib", "8"], strict=True)
    assert "--cpu-offload-gb" in UNMODELLED and "--cpu-offload-gb" not in MEMORY_NEUTRAL


def test_a_launch_line_with_a_flag_kvtop_does_not_model_is_read_and_the_flag_named() -> None:
    """A running server's command line (the live view) or `--cmd` is what ran: never refused for such a flag. It is
    kept, and the note names it apart from a flag kvtop does not know."""
    argv = ("vllm", "serve", "openai/gpt-oss-120b", "--gpu-memory-utilization", "0.95", "--cpu-offload-gb", "8",
            "--enable-sleep-mode", "--max-totl-tokens", "3")  # fmt: skip
    engine = _engine_from_server(ProcessRecord(pid=4242, parent_pid=1, cmdline=argv), "vllm")
    assert engine.settings_message is None and engine.settings is not None
    assert engine.settings.gpu_memory_utilization == 0.95 and engine.settings.flags["cpu-offload-gb"] == "8"
    assert ignored_flags_note(engine.settings) == (
        "--cmd: kvtop ignored 2 flags of vLLM whose effect on memory it does not model: --cpu-offload-gb, "
        "--enable-sleep-mode; and 1 flag it does not know for vLLM: --max-totl-tokens"
    )


def test_every_flag_read_is_in_one_class_only() -> None:
    flags = VllmFlags()
    read = set(flags.spellings) | (set(flags.passthrough) - set(flags.memory_neutral))
    assert not read & set(MEMORY_NEUTRAL) and not read & set(UNMODELLED)
    assert not set(MEMORY_NEUTRAL) & set(UNMODELLED)
    assert not flags.unmodelled & (set(flags.passthrough) | set(flags.spellings))  # typed: refused
    rows: list[FlagSpan] = [*MEMORY_NEUTRAL.values(), *UNMODELLED.values()]
    assert all(row.first in RELEASES_READ and row.last in (None, *RELEASES_READ) for row in rows)
    assert MEMORY_NEUTRAL["--seed"] == FlagSpan("0.6.3.post1", None, "engine/arg_utils.py:978 (v0.33.0)")
    # a FrontendArgs bool field (get_kwargs: BooleanOptionalAction) takes --no-NAME; `--disable-log-stats` is a plain
    # store_true switch (v0.33.0 arg_utils.py:1919), so vLLM rejects --no-disable-log-stats and kvtop does too
    assert MEMORY_NEUTRAL["--disable-fastapi-docs"].negatable
    parse_flags("vllm", ["--no-disable-fastapi-docs"], strict=True)
    assert not MEMORY_NEUTRAL["--disable-log-stats"].negatable
    with pytest.raises(InputError, match="--no-disable-log-stats"):
        parse_flags("vllm", ["--no-disable-log-stats"], strict=True)


def test_a_short_alias_is_its_long_flag() -> None:
    """`-ep` and `--enable-expert-parallel` are one add_argument call (v0.33.0 arg_utils.py:1304); `-asc` is
    `--api-server-count` (entrypoints/common/cli_args.py, _customize_cli_kwargs): before, both were refused."""
    assert parse_flags("vllm", ["-tp", "2", "-ep"], strict=True).enable_expert_parallel is True
    assert parse_flags("vllm", ["-asc", "4"], strict=True).flags == {"api-server-count": "4"}
