"""kvtop's own options given after the command (an operator trial: `kvtop probe --model M --demo` said "--demo: not
a flag of SGLang", though --demo is kvtop's): the error says whose option it is and where it goes."""

from __future__ import annotations

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


def test_a_flag_no_one_knows_is_still_the_engines_to_refuse(capsys) -> None:
    assert main(["plan", "--model", "llama-3-70b", "--tp", "8", "--gpu", "H100", "--bogus"]) != 0
    assert capsys.readouterr().err.strip() == "kvtop: error: --bogus: not a flag of SGLang that kvtop knows"


def test_explain_given_engine_log_is_told_the_log_is_its_argument(capsys) -> None:
    """`kvtop explain --engine-log LOG` was told to give --engine-log before the command, where explain still asks
    for its `log` argument ("the following arguments are required: log"): it names the form that works."""
    log = "tests/data/cases/vllm/wsl-v0151-whisper-large-v3/engine.log"
    assert main(["explain", "--engine-log", log]) == 2
    assert capsys.readouterr().err.strip() == (
        "kvtop: error: --engine-log: explain reads the log as its own argument: kvtop explain LOG (--engine-log is "
        "for the live views: kvtop --engine-log LOG snapshot)"
    )
