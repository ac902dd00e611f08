"""`--demo PATH` and `--demo-cluster PATH` naming something that is there but is no file: an operator trial got
"scenario file not found in /dev/zero" and "no demo cluster '/tmp/x/'" for a folder; each now says what the path is,
as `plan --model` does (sources/json_file.read_regular_file), and a path that is not there is still "not found"."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_in_process import run_kvtop


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["snapshot", "--demo", "/dev/null"], "kvtop: error: --demo: not a regular file (a device, pipe or socket)"),
        (["snapshot", "--demo", "{folder}/"], "kvtop: error: --demo: a folder: a scenario is read from a file"),
        (["snapshot", "--demo", "{folder}/none.json"], "kvtop: error: --demo: scenario file not found"),
        (["cluster", "--demo-cluster", "/dev/null"], "kvtop: error: --demo-cluster: not a regular file"),
        (["cluster", "--demo-cluster", "{folder}/"], "kvtop: error: --demo-cluster: a folder: a demo cluster is read"),
        (["cluster", "--demo-cluster", "{folder}/none.json"], "kvtop: error: --demo-cluster: no demo cluster"),
    ],
)
def test_a_demo_path_that_is_no_file_is_named_for_what_it_is(argv: list[str], said: str, tmp_path: Path) -> None:
    result = run_kvtop(*(arg.format(folder=tmp_path) for arg in argv))
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith(said)
