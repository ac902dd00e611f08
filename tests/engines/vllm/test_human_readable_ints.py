"""vLLM reads `--max-model-len 32K` as 32,768 tokens: `human_readable_int` (vllm/engine/arg_utils.py; from v0.20.0
vllm/utils/argparse_utils.py), whose docstring's examples are '1k' -> 1,000, '1K' -> 1,024, '25.6k' -> 25,600.
--max-model-len takes it from v0.8.4 (arg_utils.py:394; v0.8.3 :369 type=int), --max-num-batched-tokens from v0.9.1
(:240; v0.9.0 :224 max_model_len only), t/T from v0.13.0 (:2042, :2048), 'auto' on --max-model-len from v0.14.0
(:300-302 human_readable_int_or_auto). Read in the released wheels (pip download vllm==X).

The held-out start that showed it (tests/data/calibration/vllm.jsonl, file39328153190-qwen3-30b-a3b-2507-fp8-2xl40s-
tp2-ep-v0102): a v0.10.2 `vllm serve … --max-model-len 32K` whose log says 'Maximum concurrency for 32,768 tokens
per request'; kvtop refused the flag ("expected a whole number, got '32K'")."""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from kvtop.domain.errors import InputError
from kvtop.domain.launch import parse_flags
from tests.data_paths import CONFIGS, DATA

RECORD = "file39328153190-qwen3-30b-a3b-2507-fp8-2xl40s-tp2-ep-v0102"


def _record() -> dict[str, object]:
    lines = (DATA / "calibration" / "vllm.jsonl").read_text().splitlines()
    return next(json.loads(line) for line in lines if line.strip() and json.loads(line)["id"] == RECORD)


@pytest.mark.parametrize(
    ("version", "flag", "text", "expected"),
    [
        ("0.10.2", "--max-model-len", "32K", 32_768),  # the held-out log: "32,768 tokens per request"
        ("0.10.2", "--max-model-len", "32k", 32_000),
        (
            "0.8.4",
            "--max-model-len",
            "1K",
            1_024,
        ),  # the docstring's examples, at the first release that has it
        ("0.8.4", "--max-model-len", "1k", 1_000),
        ("0.33.0", "--max-model-len", "25.6k", 25_600),
        ("0.9.1", "--max-num-batched-tokens", "8K", 8_192),
        ("0.13.0", "--max-num-batched-tokens", "1t", 10**12),
        (None, "--max-model-len", "128K", 131_072),  # no release stated: the latest's rule
        ("0.8.3", "--max-model-len", "32768", 32_768),  # a plain number at every release
    ],
)
def test_a_suffixed_count_is_the_number_vllm_reads(
    version: str | None, flag: str, text: str, expected: int
) -> None:
    stated = ["--engine-version", version] if version else []
    settings = parse_flags("vllm", [flag, text, *stated], strict=True)
    field = "context_length" if flag == "--max-model-len" else "max_num_batched_tokens"
    assert getattr(settings, field) == expected


@pytest.mark.parametrize(
    ("tokens", "flag", "says"),
    [
        (
            ["--max-model-len", "32K", "--engine-version", "0.8.3"],
            "--max-model-len",
            "expected a whole number, got '32K'",
        ),
        (
            ["--engine-version", "0.9.0", "--max-num-batched-tokens", "8K"],
            "--max-num-batched-tokens",
            "got '8K'",
        ),
        (
            ["--max-num-batched-tokens", "1T", "--engine-version", "0.12.0"],
            "--max-num-batched-tokens",
            "t/T suffixes",
        ),
        (["--max-model-len", "1.5K"], "--max-model-len", "no decimals with the binary suffix K"),
        (["--max-model-len", "32Q"], "--max-model-len", "expected a whole number, got '32Q'"),
        (["--max-model-len", "auto", "--engine-version", "0.13.0"], "--max-model-len", "got 'auto'"),
        (["--max-model-len", "auto", "--engine-version", "0.14.0"], "--max-model-len", "auto-fit to memory"),
    ],
)
def test_a_count_the_release_refuses_names_the_flag(tokens: list[str], flag: str, says: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_flags("vllm", tokens, strict=True)
    assert caught.value.field == flag and says in str(caught.value)


def test_another_engine_reads_no_suffix() -> None:
    """SGLang's --context-length is argparse type=int: '32K' stays refused there."""
    with pytest.raises(InputError) as caught:
        parse_flags("sglang", ["--context-length", "32K"], strict=True)
    assert caught.value.field == "--context-length"


def _plan(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str], str]:
    code = main(["plan", *args])
    captured = capsys.readouterr()
    return code, captured.out.splitlines(), captured.err


def test_the_held_out_launch_plans_as_launched(capsys: pytest.CaptureFixture[str]) -> None:
    record = _record()
    note = str(record["note"])
    launch = note.split("`")[1]  # the launch line as run, first in the note
    assert launch.endswith("--max-model-len 32K")
    model = str(CONFIGS / str(record["config"]))
    stated = ["--model", model, "--engine-version", str(record["version"]), "--gpu", str(record["gpu"])]
    code, launched, _ = _plan(capsys, *stated, "--cmd", launch)
    assert code == 0
    assert "context 32,768" in launched[0]
    flags = record["flags"]  # the record's launch with the value vLLM read: 32768
    assert isinstance(flags, list)
    code, typed, _ = _plan(capsys, *stated, "--engine", "vllm", "--tp", str(record["tp"]), *map(str, flags))
    assert code == 0
    capacity = [line for line in launched if line.startswith("Token capacity")]
    assert capacity == [line for line in typed if line.startswith("Token capacity")]  # 32K plans as 32,768
    # written back as the number vLLM read
    assert launched[-1].endswith("--max-model-len 32768 --swap-space 0")


def test_a_refused_count_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    model = str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")
    code, _, err = _plan(capsys, "--model", model, "--engine", "vllm", "--engine-version", "0.8.0",
                         "--max-model-len", "32K")  # fmt: skip
    assert code != 0
    assert err.strip().splitlines() == [
        "kvtop: error: --max-model-len: expected a whole number, got '32K' (vLLM reads suffixes like K on it from "
        "v0.8.4, not at 0.8.0)"
    ]
