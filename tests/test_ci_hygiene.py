"""The test command changes nothing on the host, and a failure prints a screenful (issue 25, item 7).

`.ci/run` used to `apt-get install prometheus` as root: 37 packages, two services listening on
every interface and five timers, back after every reboot. Now `.ci/prometheus` downloads Debian's
package into a cache folder and unpacks it there; these tests read the scripts for any step that
installs or enables something, and check that an error or a failing test stays one screenful.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from kvtop.domain.errors import MAX_MESSAGE_CHARS, InputError

REPO = Path(__file__).resolve().parent.parent
CI = REPO / ".ci"
# Steps that install a package, enable or start a service, or write the host's apt state.
_CHANGES_THE_HOST = re.compile(
    r"apt(?:-get)?\s+(?:-\S+\s+)*(?:install|upgrade|dist-upgrade|remove|purge)\b|dpkg\s+(?:-\S+\s+)*-i\b|dpkg\s+--install"
    r"|systemctl\s+(?:enable|start|restart|daemon-reload)|update-rc\.d|service\s+\S+\s+start|pip\s+install\s+--user"
)


def _code_lines(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if not line.lstrip().startswith("#")]


def test_no_ci_script_installs_or_enables_anything_on_the_host() -> None:
    """Before: `.ci/run` ran `apt-get install -y -qq prometheus` as root."""
    scripts = sorted(path for path in CI.iterdir() if path.is_file())
    assert {path.name for path in scripts} >= {"run", "prometheus"}
    found = {path.name: [line.strip() for line in _code_lines(path) if _CHANGES_THE_HOST.search(line)] for path in scripts}
    assert found == {path.name: [] for path in scripts}


def test_prometheus_is_unpacked_into_a_cache_with_apts_state_kept_there() -> None:
    code = "\n".join(_code_lines(CI / "prometheus"))
    assert "dpkg-deb -x" in code and " download " in code
    for option in ("Dir::State::Lists=$APT/lists", "Dir::Cache=$APT/cache", "Debug::NoLocking=1"):
        assert option in code  # the host's package lists, cache and lock are never written
    assert "KVTOP_PROMETHEUS" in (CI / "run").read_text()


def test_an_error_quoting_a_huge_input_is_one_screenful() -> None:
    """Bounded where it is made: a message quoting 1 MB (or 100,000 validation errors) stays short."""
    error = InputError("x" * 1_000_000, field="--model")
    assert len(str(error)) < MAX_MESSAGE_CHARS + 100
    assert str(error).endswith("… (998,000 more characters)")


def test_a_failing_test_prints_a_screenful_not_its_whole_exception(tmp_path: Path) -> None:
    """Before: a failure quoting a 100,003-line message printed it three times (900k lines of output)."""
    (tmp_path / "conftest.py").write_text("from tests.conftest import pytest_runtest_makereport  # noqa: F401\n")
    (tmp_path / "test_huge.py").write_text(
        "def test_huge():\n"
        "    print('\\n'.join(f'captured {i}' for i in range(100_003)))\n"
        "    raise ValueError('\\n'.join(f'line {i}' for i in range(100_003)))\n"
    )
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path), str(tmp_path)],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    lines = run.stdout.count("\n")
    assert run.returncode == 1 and "1 failed" in run.stdout
    assert lines < 250 and "lines left out" in run.stdout
