"""An argument no parser takes, given after a command, points at that command's help (`kvtop snapshot --bogus` said
'see kvtop --help', which lists none of snapshot's options); given before the command, at kvtop's."""

from __future__ import annotations

import pytest

from kvtop.cli import main


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["snapshot", "--demo", "--jsn"], "kvtop: error: unrecognized arguments: --jsn (see kvtop snapshot --help)"),
        (["export", "--port", "9401"], "kvtop: error: unrecognized arguments: --port 9401 (see kvtop export --help)"),
        (["--bogus", "snapshot"], "kvtop: error: unrecognized arguments: --bogus (see kvtop --help)"),
    ],
)
def test_an_unknown_argument_names_the_help_that_lists_the_options_there(
    capsys: pytest.CaptureFixture[str], argv: list[str], said: str
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and err.strip() == said  # one line, no usage dump, no traceback


def test_the_probe_offers_no_list_of_gpu_names(capsys: pytest.CaptureFixture[str]) -> None:
    """The probe's --gpu is an index (NVML order), yet its help offered `--list-gpus`, "the GPU names --gpu takes"
    (session 67's walk): `plan` offers it, the probe refuses it as an engine flag it does not know."""
    assert main(["probe", "--list-gpus"]) == 2
    assert capsys.readouterr().err.strip() == (
        "kvtop: error: --list-gpus: not a kvtop flag (kvtop probe --help lists them), nor one of SGLang's that kvtop knows"
    )
