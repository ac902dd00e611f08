"""Shared fixtures; the real inputs' paths come from tests/data_paths.py (re-exported here)."""

from __future__ import annotations

import itertools
import json
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.data_paths import CASES, CONFIGS, DATA, SAMPLES

if TYPE_CHECKING:
    from benchmarks.calibration.judgement import Judgement

__all__ = ["CASES", "CONFIGS", "DATA", "SAMPLES"]

#: The xdist group of every test that reads `corpus_judgement`: `--dist loadgroup` (.ci/run) runs them on one
#: worker, so the judgement is made once per run, not once per worker.
JUDGEMENT_GROUP = "calibration-judgement"


#: Where a live node built in a test looks for the kernel's version string and WSL2's GPU device when the test names
#: none: paths that do not exist, so no test reads the test machine's own /proc/version or /dev/dxg (a WSL2 test
#: machine would otherwise put its desktop into every live node). Tests of the desktop fact pass their own fakes.
NO_HOST_PROC_VERSION = DATA / "host" / "absent" / "proc_version"
NO_HOST_DXG = DATA / "host" / "absent" / "dxg"


@pytest.fixture(autouse=True)
def fake_host_desktop_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test's live node reads the absent fake paths above, never the machine's (`read_host_desktop`'s defaults)."""
    monkeypatch.setattr("kvtop.sources.host_desktop.PROC_VERSION_FILE", NO_HOST_PROC_VERSION)
    monkeypatch.setattr("kvtop.sources.host_desktop.DXG_DEVICE", NO_HOST_DXG)


@pytest.fixture(autouse=True)
def prose_unwrapped(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test reads a command's prose (notes, hints, engine flags, errors) whole, on one line: COLUMNS wide, so
    `kvtop.commands.output.terminal_columns` never wraps it at the piped default of 100. The tests of the wrapping
    itself (tests/commands/test_prose_wrap.py) and of the README's examples (tests/test_cli_readme.py, a pipe's 100
    columns as a person sees them) set their own width."""
    monkeypatch.setenv("COLUMNS", "10000")


@pytest.fixture(scope="session")
def needs_torch() -> None:
    """Skip, with the reason, a test whose probe really allocates: that takes torch (the probe extra)."""
    if find_spec("torch") is None:
        pytest.skip("torch is not installed: the probe's real allocations need it (pip install '.[probe]')")


@pytest.fixture(scope="session")
def corpus_judgement() -> Judgement:
    """The calibration corpus judged once per test session, as `benchmarks/calibration/run.py` judges it: the fits,
    the fits without each source, the plans' coverage scores (blind and with logged weights) and both
    leave-one-source-out judgements, from which the fitted blocks and docs/calibration.md are rendered (≈ 16 s of one
    core in session 53, ≈ 150 s before the desktop share's search halved; the 6 tests of `JUDGEMENT_GROUP` read it)."""
    from benchmarks.calibration.corpus import load_all
    from benchmarks.calibration.judgement import judge_corpus

    return judge_corpus(load_all())


#: A failing test prints at most this many lines of its report, and of each captured section: a
#: screenful, even when an exception quotes a huge input (a 100,000-line message printed three times
#: made one run's output 900k lines).
FAILURE_LINES = 60


def screenful(text: str, lines: int = FAILURE_LINES) -> str:
    """`text` cut to its first and last lines, saying how many were left out."""
    parts = text.splitlines()
    if len(parts) <= lines:
        return text
    head, tail = parts[: lines // 2], parts[-(lines // 2) :]
    return "\n".join([*head, f"… {len(parts) - len(head) - len(tail):,} lines left out …", *tail])


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    """Bound a failure's report (its traceback and captured output) to a screenful each."""
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        if report.longrepr is not None:
            text = str(report.longrepr)
            if text.count("\n") > FAILURE_LINES:
                report.longrepr = screenful(text)
        report.sections = [(title, screenful(content)) for title, content in report.sections]


@pytest.fixture(scope="session")
def _xdg_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder per test session (per xdist worker) that holds every test's private XDG directories."""
    return tmp_path_factory.mktemp("xdg")


_XDG_NUMBERS = itertools.count()


@pytest.fixture(autouse=True)
def _private_xdg_dirs(_xdg_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test (and every kvtop it starts) gets its own XDG state and config directories, new and empty: the
    calibration store, the actions log and the TUI's settings of the person running the tests are never read or
    written. Numbered by a counter under one session folder, not by `tmp_path_factory.mktemp`: that lists the whole
    base temp folder on each call, so two per test made the suite's setup quadratic (≈ 37 s of CPU for 8,000 calls, session 56)."""
    own = _xdg_root / str(next(_XDG_NUMBERS))
    own.mkdir(mode=0o700)
    (own / "state").mkdir(mode=0o700)
    (own / "config-home").mkdir(mode=0o700)
    monkeypatch.setenv("XDG_STATE_HOME", str(own / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(own / "config-home"))


@pytest.fixture(scope="module")
def demo_json() -> dict:
    """`kvtop cluster --demo-cluster --json` as a user runs it (the demo cluster's tests read it)."""
    import contextlib
    import io

    from kvtop.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["cluster", "--demo-cluster", "--json"]) == 0
    return json.loads(out.getvalue())
