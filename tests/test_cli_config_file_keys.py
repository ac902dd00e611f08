"""The settings file's errors name the file and its key, and it reads the name --help uses (session 49, F2 #4).

A `--config` file with `theme = "neon"` said "--theme: unknown theme…" (no --theme was given); one with
`interval = -5` said "interval: Extra inputs are not permitted" (the key was `interval_s`, a name --help never
says, and the error did not say which keys there are).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvtop.cli import main
from kvtop.domain.preferences import Preferences
from kvtop.sources.preferences_file import PreferencesFile

KEYS = "theme, sort, reverse_sort, interval_s, hidden_columns"


def _error(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, *argv: str) -> tuple[str, Path]:
    config = tmp_path / "kvtop.toml"
    config.write_text(text, encoding="utf-8")
    assert main(["--config", str(config), *argv]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "Traceback" not in err
    return err.strip(), config


@pytest.mark.parametrize("view", [["--demo"], ["--demo-cluster"]])
def test_an_unknown_theme_in_the_file_names_the_file_and_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], view: list[str]
) -> None:
    err, config = _error(tmp_path, capsys, 'theme = "neon"\n', *view)
    assert (
        err == f"kvtop: error: theme: unknown theme 'neon' (kvtop's: dark, light, high-contrast) (in {config})"
    )


def test_an_unknown_theme_given_as_the_flag_is_still_the_flags(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err, _ = _error(tmp_path, capsys, 'theme = "dark"\n', "--demo", "--theme", "neon")
    assert err == "kvtop: error: --theme: unknown theme 'neon' (kvtop's: dark, light, high-contrast)"


def test_interval_is_read_as_the_help_names_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err, config = _error(tmp_path, capsys, "interval = -5\n", "--demo")
    assert err == (
        "kvtop: error: interval: must be at least 0.1 s: every refresh reads NVML and each engine's endpoints "
        f"(got -5.0) (in {config})"
    )
    config.write_text("interval = 3\n", encoding="utf-8")
    store = PreferencesFile(config)
    assert store.load() == Preferences(interval_s=3.0)
    assert store.save(store.load()) is None  # written back under the key kvtop writes
    assert "interval_s = 3.0" in config.read_text(encoding="utf-8") and store.load().interval_s == 3.0


def test_a_key_kvtop_has_not_says_which_keys_there_are(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err, config = _error(tmp_path, capsys, "refresh = 2\n", "--demo")
    assert err == f"kvtop: error: refresh: not a kvtop setting (it reads {KEYS}) (in {config})"
