"""Palettes: the files in themes/ parse, match the built-ins, register, and `t` / `--theme` switch them."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvtop.domain.errors import InputError
from kvtop.ui.theming import (
    BUILTIN_PALETTES,
    KV_TOKENS,
    PaletteFile,
    default_themes_dir,
    load_palettes,
    read_palette,
)
from tests.ui.conftest import wait_for_snapshot

REPO_THEMES = Path(__file__).resolve().parents[2] / "themes"


def test_the_loader_finds_the_repos_themes_folder():
    assert default_themes_dir() == REPO_THEMES
    assert sorted(p.name for p in REPO_THEMES.glob("*.toml")) == [
        "dark.toml",
        "high-contrast.toml",
        "light.toml",
    ]


@pytest.mark.parametrize("raw", BUILTIN_PALETTES, ids=lambda raw: raw["name"])
def test_each_palette_file_equals_its_built_in_fallback(raw):
    assert read_palette(REPO_THEMES / f"{raw['name']}.toml") == PaletteFile.model_validate(raw)


def test_every_palette_sets_every_kv_token():
    for theme in load_palettes(REPO_THEMES):
        assert set(KV_TOKENS) <= set(theme.variables), theme.name


def test_without_a_themes_folder_the_built_ins_load(tmp_path):
    assert [theme.name for theme in load_palettes(tmp_path / "absent")] == ["dark", "light", "high-contrast"]


def test_a_palette_file_overrides_the_built_in_of_its_name(tmp_path):
    (tmp_path / "dark.json").write_text(
        '{"name": "dark", "primary": "#112233", "variables": {"kv-pool": "#445566"}}'
    )
    dark = next(theme for theme in load_palettes(tmp_path) if theme.name == "dark")
    assert dark.primary == "#112233"
    assert dark.variables["kv-pool"] == "#445566"
    assert dark.variables["kv-weights"] == KV_TOKENS["kv-weights"]


def test_a_malformed_palette_names_its_file_and_field(tmp_path):
    bad = tmp_path / "broken.toml"
    bad.write_text('name = "broken"\nprimry = "#000000"\n')
    with pytest.raises(InputError) as caught:
        load_palettes(tmp_path)
    assert "broken.toml" in str(caught.value)
    assert "primary" in str(caught.value)


async def test_t_cycles_the_palettes_and_the_bar_colours_follow(make_app, healthy_snapshot):
    app = make_app(healthy_snapshot)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_snapshot(pilot)
        assert app.theme == "dark"
        assert app.theme_variables["kv-pool"] == "#5FD7AF"
        await pilot.press("t")
        assert app.theme == "light"
        assert app.theme_variables["kv-pool"] == "#00875F"
        await pilot.press("t", "t")
        assert app.theme == "dark"


async def test_theme_option_chooses_the_start_palette(make_app, healthy_snapshot):
    app = make_app(healthy_snapshot, theme="high-contrast")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_snapshot(pilot)
        assert app.theme_variables["kv-foreign"] == "#FF0000"
        assert app.current_theme.background == "#000000"


def test_an_unknown_theme_is_an_input_error(make_app, healthy_snapshot):
    with pytest.raises(InputError, match="unknown theme 'sepia'"):
        make_app(healthy_snapshot, theme="sepia")
