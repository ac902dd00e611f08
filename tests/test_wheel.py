"""The built wheel alone runs kvtop: presets, scenarios and palettes ship inside it.

The wheel is built from a copy of what packaging needs (pyproject, README, kvtop/, examples/,
themes/), installed (not editable) into a fresh venv, and run from a directory outside the
repository with no PYTHONPATH. The venv borrows this interpreter's installed dependencies through a
`.pth` line (so nothing is downloaded); kvtop itself comes from the wheel, which the test checks.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import venv
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BUILD_INPUTS = ("pyproject.toml", "README.md", "kvtop", "examples", "themes")


@dataclass(frozen=True)
class InstalledWheel:
    python: Path
    kvtop: Path
    site_packages: Path
    outside: Path  # an empty working directory outside the repository
    env: dict[str, str]

    def run(self, *argv: str | Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(arg) for arg in argv], cwd=self.outside, env=self.env, capture_output=True, text=True, timeout=120
        )


def _pip(*argv: str | Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", *map(str, argv)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> InstalledWheel:
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"
    source.mkdir()
    for name in BUILD_INPUTS:
        path = ROOT / name
        if path.is_dir():  # links kept: kvtop/_bundled/* point at ../../examples and ../../themes
            shutil.copytree(path, source / name, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(path, source / name)
    _pip("wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", work / "dist", source)
    (built,) = (work / "dist").glob("kvtop_ledger-*.whl")

    env_dir = work / "venv"
    venv.create(env_dir, with_pip=False, symlinks=os.name != "nt")
    python = env_dir / "bin" / "python"
    site_packages = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
    )  # fmt: skip
    # The dependencies: this interpreter's site-packages, after the venv's own (where kvtop goes).
    borrowed = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (site_packages / "_kvtop_test_dependencies.pth").write_text("\n".join(sorted(borrowed)) + "\n")
    _pip("--python", python, "install", "--no-deps", "--no-index", built)

    outside = work / "elsewhere"
    outside.mkdir()
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "KVTOP_PRESETS")}
    env["HF_HUB_OFFLINE"] = "1"
    return InstalledWheel(python, env_dir / "bin" / "kvtop", site_packages, outside, env)


def test_kvtop_is_imported_from_the_installed_wheel(wheel: InstalledWheel) -> None:
    result = wheel.run(wheel.python, "-c", "import kvtop; print(kvtop.__file__)")
    assert result.returncode == 0, result.stderr
    assert Path(result.stdout.strip()).is_relative_to(wheel.site_packages)


def test_version_is_the_pyprojects(wheel: InstalledWheel) -> None:
    declared = re.search(r'^version = "([^"]+)"$', (ROOT / "pyproject.toml").read_text(), re.MULTILINE)
    assert declared is not None
    result = wheel.run(wheel.kvtop, "--version")
    assert (result.returncode, result.stdout.strip()) == (0, f"kvtop {declared.group(1)} (package kvtop-ledger)")
    # the package's own name is a second command: kvcached installs a `kvtop` of its own
    ledger = wheel.run(wheel.kvtop.with_name("kvtop-ledger"), "--version")
    assert (ledger.returncode, ledger.stdout) == (0, result.stdout)


def test_plan_finds_the_shipped_preset_and_answers_as_the_checkout_does(wheel: InstalledWheel) -> None:
    installed = wheel.run(wheel.kvtop, "plan", "--model", "llama-3-70b", "--json")
    assert installed.returncode == 0, installed.stderr
    plan = json.loads(installed.stdout)
    preset = Path(plan.pop("model_source"))
    assert preset.is_relative_to(wheel.site_packages) and preset.name == "llama-3-70b.json"
    assert preset.read_bytes() == (ROOT / "examples" / "models" / "llama-3-70b.json").read_bytes()
    checkout = subprocess.run(
        [sys.executable, "-m", "kvtop", "plan", "--model", "llama-3-70b", "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    expected = json.loads(checkout.stdout)
    expected.pop("model_source")
    assert plan == expected


def test_snapshot_demo_runs_the_shipped_default_scenario(wheel: InstalledWheel) -> None:
    scenario = json.loads((ROOT / "examples" / "scenarios" / "llama70b-tp8-sglang.json").read_text())
    result = wheel.run(wheel.kvtop, "snapshot", "--demo", "--json")
    assert result.returncode == 0, result.stderr
    snapshot = json.loads(result.stdout)
    assert snapshot["source"] == "demo:llama70b-tp8-sglang"
    assert len(snapshot["gpus"]) == scenario["gpu"]["count"] == 8


def test_the_palettes_are_read_from_the_shipped_themes(wheel: InstalledWheel) -> None:
    script = (
        "import json; from kvtop.ui.theming import default_themes_dir, load_palettes\n"
        "folder = default_themes_dir()\n"
        "print(json.dumps([str(folder), sorted(p.name for p in folder.glob('*.toml')),"
        " [t.name for t in load_palettes()]]))"
    )
    result = wheel.run(wheel.python, "-c", script)
    assert result.returncode == 0, result.stderr
    folder, files, names = json.loads(result.stdout)
    assert Path(folder).is_relative_to(wheel.site_packages)
    assert files == sorted(p.name for p in (ROOT / "themes").glob("*.toml"))
    assert set(names) == {Path(name).stem for name in files}
