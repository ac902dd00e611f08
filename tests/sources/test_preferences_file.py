"""The terminal UI's settings file: XDG's place, TOML both ways, and a bad file named with its key."""

from __future__ import annotations

import pytest

from kvtop.domain.errors import InputError
from kvtop.domain.preferences import Preferences
from kvtop.sources.preferences_file import PreferencesFile, default_config_path


def test_the_file_lives_where_xdg_says(tmp_path) -> None:
    assert default_config_path({"XDG_CONFIG_HOME": str(tmp_path), "HOME": "/home/ada"}) == tmp_path / "kvtop" / "config.toml"
    assert default_config_path({"HOME": "/home/ada"}) == tmp_path.__class__("/home/ada/.config/kvtop/config.toml")
    # a relative XDG_CONFIG_HOME is invalid per the specification: ignored
    assert default_config_path({"XDG_CONFIG_HOME": "rel", "HOME": "/home/ada"}).parts[:3] == ("/", "home", "ada")


def test_what_is_saved_is_what_is_loaded_and_a_missing_file_is_the_defaults(tmp_path) -> None:
    store = PreferencesFile(tmp_path / "nested" / "config.toml")
    assert store.load() == Preferences()
    chosen = Preferences(theme="light", sort="least free", reverse_sort=True, interval_s=2.5, hidden_columns=("vitals",))
    assert store.save(chosen) is None
    assert store.load() == chosen
    text = (tmp_path / "nested" / "config.toml").read_text()
    assert 'sort = "least free"' in text and "reverse_sort = true" in text and 'hidden_columns = ["vitals"]' in text


@pytest.mark.parametrize(
    ("text", "field"),
    [("sort = [1", "--config"), ("interval_s = -1", "interval_s"), ("colour = 'red'", "colour"), ("reverse_sort = 'yes'", "reverse_sort")],
)  # fmt: skip
def test_a_file_kvtop_cannot_read_is_one_error_naming_the_key_and_the_file(tmp_path, text, field) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(InputError) as refused:
        PreferencesFile(path).load()
    assert refused.value.field == field and str(path) in str(refused.value)


def test_a_file_that_cannot_be_written_says_why_and_raises_nothing(tmp_path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    assert PreferencesFile(blocked / "config.toml").save(Preferences(theme="dark")).startswith("settings not saved to ")


@pytest.mark.parametrize("text", ["interval_s = 0.0001", "interval_s = 0.05", "interval_s = 0"])
def test_the_files_interval_has_the_clis_floor(tmp_path, text) -> None:
    """`--interval 0.0001` is refused (tests/test_cli_refresh_floor.py) and the file's `interval_s = 0.0001`
    was taken (the model had only gt=0): one floor, 0.1 s (nvtop's and htop's shortest delay), both read it."""
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(InputError) as refused:
        PreferencesFile(path).load()
    assert refused.value.field == "interval_s"
    assert "must be at least 0.1 s: every refresh reads NVML and each engine's endpoints" in str(refused.value)


def test_a_tenth_of_a_second_in_the_file_is_allowed(tmp_path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("interval_s = 0.1")
    assert PreferencesFile(path).load().interval_s == 0.1
