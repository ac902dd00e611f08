"""kvtop's own options given after the command (an operator trial: `kvtop probe --model M --demo` said "--demo: not
a flag of SGLang", though --demo is kvtop's): the error says whose option it is and where it goes."""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main


@pytest.mark.parametrize(("argv", "option", "command"), [
    (["probe", "--model", "llama-3-70b", "--demo"], "--demo", "probe"),
    (["plan", "--model", "llama-3-70b", "--tp", "8", "--gpu", "H100", "--theme", "dark"], "--theme", "plan"),
])  # fmt: skip
def test_an_option_of_kvtop_after_the_command_is_named_as_kvtops(argv, option, command, capsys) -> None:
    assert main(argv) != 0
    said = capsys.readouterr().err.strip()
    assert said == (
        f"kvtop: error: {option}: an option of kvtop itself, not of the engine: give it before the command "
        f"(kvtop {option} … {command} …)"
    )


def test_a_flag_no_one_knows_is_neither_kvtops_nor_the_engines(capsys) -> None:
    assert main(["plan", "--model", "llama-3-70b", "--tp", "8", "--gpu", "H100", "--bogus"]) != 0
    assert capsys.readouterr().err.strip() == (
        "kvtop: error: --bogus: not a kvtop flag (kvtop plan --help lists them), nor one of SGLang's that kvtop knows"
    )


@pytest.mark.parametrize(("typed", "said"), [
    (["--gpu-memroy", "80GiB"], "--gpu-memroy: not a kvtop flag: did you mean --gpu-memory?"),
    (["--jsn"], "--jsn: not a kvtop flag: did you mean --json?"),
    (["--mem-fraction-stati", "0.8"], "--mem-fraction-stati: not a kvtop flag, nor one of SGLang's that kvtop knows: "
                                      "did you mean SGLang's --mem-fraction-static?"),
    # after `--` a token is the engine's alone: the engine's words, never kvtop's
    (["--", "--gpu-memroy", "80GiB"], "--gpu-memroy: not a flag of SGLang that kvtop knows"),
    (["--", "--mem-fraction-stati", "0.8"], "--mem-fraction-stati: not a flag of SGLang that kvtop knows "
                                            "(like --mem-fraction-static?)"),
])  # fmt: skip
def test_a_typo_of_kvtops_own_flag_is_named_as_kvtops(typed, said, capsys) -> None:
    """An operator's typo of kvtop's --gpu-memory was refused as 'not a flag of SGLang that kvtop knows'."""
    assert main(["plan", "--model", "llama-3-70b", "--gpu", "H100", *typed]) == 2
    assert capsys.readouterr().err.strip() == f"kvtop: error: {said}"


def test_the_engines_flags_may_follow_a_double_dash(capsys) -> None:
    """`--` ends kvtop's options: what follows is read as the engine's flags, as without it."""
    assert main(["plan", "--model", "llama-3-70b", "--gpu", "H100", "--json", "--", "--mem-fraction-static", "0.8"]) == 0
    fraction = json.loads(capsys.readouterr().out)["memory_fraction"]
    assert fraction == {"value": 0.8, "source": "--mem-fraction-static"}


def test_explain_given_engine_log_is_told_the_log_is_its_argument(capsys) -> None:
    """`kvtop explain --engine-log LOG` was told to give --engine-log before the command, where explain still asks
    for its `log` argument ("the following arguments are required: log"): it names the form that works."""
    log = "tests/data/cases/vllm/wsl-v0151-whisper-large-v3/engine.log"
    assert main(["explain", "--engine-log", log]) == 2
    assert capsys.readouterr().err.strip() == (
        "kvtop: error: --engine-log: explain reads the log as its own argument: kvtop explain LOG (--engine-log is "
        "for the live views: kvtop --engine-log LOG snapshot)"
    )
