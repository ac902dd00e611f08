"""`--engine-version` outside what kvtop models says whose rules apply; a word that is no release is refused."""

from __future__ import annotations

import pytest

from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import from_flag
from kvtop.domain.errors import InputError
from kvtop.domain.launch import parse_flags


def test_a_release_newer_than_the_newest_modelled_takes_the_newest_rules_and_says_so() -> None:
    calendar = engine_rules("sglang").calendar
    newest = max(calendar, key=lambda day: day.day).release  # the last release on PyPI kvtop read
    detail = from_flag("9.0.0", calendar).detail
    assert detail == f"--engine-version 9.0.0 (newer than {newest}, the newest release kvtop models: its rules apply)"


def test_a_release_older_than_the_oldest_modelled_takes_the_oldest_rules_and_says_so() -> None:
    calendar = engine_rules("vllm").calendar
    oldest = min(calendar, key=lambda day: day.day).release
    assert from_flag("0.1.0", calendar).detail.endswith(
        f"(older than {oldest}, the oldest release kvtop models: the oldest rules apply)"
    )


def test_a_release_inside_the_calendar_is_just_the_flag() -> None:
    assert from_flag("0.5.9", engine_rules("sglang").calendar).detail == "--engine-version 0.5.9"


@pytest.mark.parametrize("engine", ["sglang", "vllm", "lmdeploy", "trtllm"])
def test_a_word_that_is_no_release_is_refused_naming_the_flag(engine: str) -> None:
    with pytest.raises(InputError, match=r"^--engine-version: not a release: 'garbage'"):
        parse_flags(engine, ["--engine-version", "garbage"])


@pytest.mark.parametrize("typed", ["9.9.9x", "0.10.2abc", "0.9.2.", "0.10.2/x", "0.10.2_1"])
def test_a_release_with_more_written_onto_it_is_refused_naming_the_flag(typed: str) -> None:
    # packaging's Version refuses each ('InvalidVersion: Invalid version: '9.9.9x'', likewise '0.10.2/x' and
    # '0.10.2_1', packaging 24's VERSION_PATTERN); the search that finds a release
    # inside a log's words read 9.9.9 in the first, and the plan went on as "newer than 0.34.0"
    with pytest.raises(InputError, match=rf"^--engine-version: not a release: '{typed}'"):
        parse_flags("vllm", ["--engine-version", typed])


@pytest.mark.parametrize("typed", ["0.10.2", "v0.10.2", "0.4.3.post2", "0.5.3rc2", "0.9.0.1", "0.5.4-cu129", "0.10.2+cu128"])
def test_a_release_as_typed_is_taken(typed: str) -> None:
    assert parse_flags("sglang", ["--engine-version", typed]).engine_version == typed
