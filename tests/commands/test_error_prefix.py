"""Every refusal of a typed flag starts `kvtop: error: --FLAG: ` (operator pass, session 72).

argparse's own refusals read `kvtop plan: error: argument --timeout: …` beside kvtop's `kvtop: error: --tp: …`: a
script or a person matching the one form missed the other. The `type=` checks are cli_args.py's; argparse's
'argument ' word goes, the command stays named in the help hint."""

from __future__ import annotations

import pytest

from kvtop.cli import main


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["plan", "--timeout", "-1"], "kvtop: error: --timeout: must be a positive number of seconds, at most 86400 "
                                      "(got '-1') (see kvtop plan --help)"),
        (["export", "--interval", "0"], "kvtop: error: --interval: must be a positive number of seconds, at most 86400 "
                                        "(got '0') (see kvtop export --help)"),
        (["probe", "--gpu", "-1"], "kvtop: error: --gpu: expected the index of the GPU to probe (NVML order, as "
                                   "nvidia-smi lists them), e.g. 0 (got '-1') (see kvtop probe --help)"),
        (["plan", "--model", "llama-3.1-8b", "--tp", "x"], "kvtop: error: --tp: expected a whole number, got 'x'"),
    ],
)
def test_argparse_and_kvtop_refusals_share_one_prefix(
    capsys: pytest.CaptureFixture[str], argv: list[str], said: str
) -> None:
    code = None
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    assert code == 2
    out, err = capsys.readouterr()
    assert out == "" and err.strip() == said
