"""`--engine-version` outside what kvtop models says whose rules apply; a word that is no release is refused."""

from __future__ import annotations

import re

import pytest

from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import from_flag, reported_release
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
    assert from_flag("0.0.1", calendar).detail.endswith(
        f"(older than {oldest}, the oldest release kvtop models: the oldest rules apply)"
    )


def test_a_release_inside_the_calendar_is_just_the_flag() -> None:
    assert from_flag("0.5.9", engine_rules("sglang").calendar).detail == "--engine-version 0.5.9"


@pytest.mark.parametrize("engine", ["sglang", "vllm", "lmdeploy", "trtllm"])
def test_a_word_that_is_no_release_is_refused_naming_the_flag(engine: str) -> None:
    with pytest.raises(InputError, match=r"^--engine-version: not a release: 'garbage'"):
        parse_flags(engine, ["--engine-version", "garbage"])


@pytest.mark.parametrize("typed", ["9.9.9x", "0.10.2abc", "0.9.2.", "0.10.2/x", "0.10.2_1", "0.10.2 x", "0.5.9 api_key=k"])
def test_a_release_with_more_written_onto_it_is_refused_naming_the_flag(typed: str) -> None:
    # packaging's Version refuses each ('InvalidVersion: Invalid version: '9.9.9x'', likewise '0.10.2/x',
    # '0.10.2_1' and '0.10.2 x', packaging 24's VERSION_PATTERN; session 70 let a word after a space through for an
    # endpoint's '0.5.9 …', which the endpoint's reader now reads itself: typed, it is more written on); the search that finds a release
    # inside a log's words read 9.9.9 in the first, and the plan went on as "newer than 0.34.0"
    shown = typed.replace("api_key=k", "api_key=***")  # the refusal quotes the typed words masked (redact.quoted)
    with pytest.raises(InputError, match=rf"^--engine-version: not a release: '{re.escape(shown)}'"):
        parse_flags("vllm", ["--engine-version", typed])


@pytest.mark.parametrize("typed", ["0.10.2", "v0.10.2", "0.4.3.post2", "0.5.3rc2", "0.9.0.1", "0.5.4-cu129", "0.10.2+cu128"])
def test_a_release_as_typed_is_taken(typed: str) -> None:
    assert parse_flags("sglang", ["--engine-version", typed]).engine_version == typed


@pytest.mark.parametrize("typed", ["0.10.2 ", " 0.10.2", "\t0.10.2\n"])
def test_whitespace_around_a_typed_release_is_dropped(typed: str) -> None:
    """PEP 440 ("Leading and trailing whitespace must be silently ignored"; packaging 26's `Version(' 0.10.2 ')` is
    0.10.2): a release typed in quotes with a stray space is that release, and no space is kept for a heading."""
    assert parse_flags("vllm", ["--engine-version", typed]).engine_version == "0.10.2"


@pytest.mark.parametrize(
    ("said", "release"),
    [
        ("0.5.9", "0.5.9"),  # tests/data/samples/sglang_server_info: SGLang 0.5.9's `version`
        ("1.3.0rc4", "1.3.0rc4"),  # trtllm-serve's /version: {"version": "1.3.0rc4"}
        ("0.5.9 api_key=***", "0.5.9"),  # more words after a space (the secrets test's planted answer, redacted)
        ("v0.10.2", "0.10.2"),
        ("0.5.4-cu129", "0.5.4"),  # an image's build suffix
        ("0.29.1rc1.dev17+g1234abc", "0.29.1rc1.dev17+g1234abc"),  # a local label is part of the version (PEP 440)
    ],
)
def test_a_reported_release_is_read_from_the_start_of_the_words(said: str, release: str) -> None:
    assert reported_release(said) == release


@pytest.mark.parametrize("said", ["dev", "", " ", "nightly", "9.9.9x", "0.10.2_1", "latest 0.5.9", None])
def test_words_that_do_not_start_with_a_whole_release_report_none(said: str | None) -> None:
    """Not a number read out of words ('latest 0.5.9' is no statement that it is 0.5.9): the caller names it."""
    assert reported_release(said) is None
