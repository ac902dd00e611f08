"""Releases in PEP 440 order, and source builds whose version names no release (issue 28, cause 6).

The expected order is PEP 440's (https://peps.python.org/pep-0440/#summary-of-permitted-suffixes-and-relative-ordering):
`X.devN < XaN < XbN < XrcN < X < X.postN`, a dev segment before the release it belongs to, and a local
part (`+g690e127b1`) that does not order. A setuptools-scm build of a checkout without tags is
`0.1.devN+g<hash>`: its number says nothing of the code, so the rules come from the log instead.
"""

from __future__ import annotations

import pytest

from kvtop.domain.engines.trtllm.eras import engine_tokens_per_block
from kvtop.domain.engines.versions import (
    ResolvedVersion,
    VersionSource,
    build_date,
    names_no_release,
    parse_release,
)
from kvtop.domain.engines.vllm.release_calendar import resolve_version as vllm_version
from kvtop.sources.engine_logs import read_engine_log
from tests.conftest import CASES

# PEP 440's own example order (the spec's "Summary of permitted suffixes and relative ordering")
PEP440_ORDER = [
    "1.0.dev456", "1.0a1", "1.0a2.dev456", "1.0a12.dev456", "1.0a12", "1.0b1.dev456", "1.0b2",
    "1.0b2.post345.dev456", "1.0b2.post345", "1.0rc1.dev456", "1.0rc1", "1.0", "1.0+abc.5", "1.0.post456.dev34",
    "1.0.post456", "1.1.dev1",
]  # fmt: skip


def test_releases_sort_as_pep_440_orders_them() -> None:
    keys = [parse_release(text) for text in PEP440_ORDER]
    assert all(key is not None for key in keys)
    assert keys == sorted(keys)  # type: ignore[type-var]
    # a local part does not order: 1.0 and 1.0+abc.5 are the same release
    assert parse_release("1.0") == parse_release("1.0+abc.5")


@pytest.mark.parametrize(
    ("earlier", "later"),
    [
        ("0.13.0.dev2024082000", "0.13.0"),  # TensorRT-LLM's nightly before its release (#2268)
        ("0.29.1rc1.dev339+gda9888462", "0.29.1rc1"),  # vLLM's dev build of an rc (#57475)
        ("0.15.2rc1.dev93+g11a4c9d30", "0.15.2"),  # vLLM (#34076)
        ("0.14.0rc2+cu130", "0.14.0"),  # an rc with a local part (#32105)
        ("0.9.0", "0.9.0.1"),  # vLLM's four-part release
        ("0.4.3", "0.4.3.post2"),
    ],
)
def test_a_pre_release_or_dev_build_comes_before_its_release(earlier: str, later: str) -> None:
    low, high = parse_release(earlier), parse_release(later)
    assert low is not None and high is not None and low < high


def test_a_dev_build_of_a_release_takes_the_rules_before_it() -> None:
    """TensorRT-LLM's engine tokens per block were 64 up to v0.13 (docs/engines/trtllm.md §6); a 0.13.0 dev
    build is before 0.13.0, so it reads 64 either way — and 0.13.0.dev is no longer equal to 0.13.0."""
    assert parse_release("0.13.0.dev2024082000") != parse_release("0.13.0")
    assert engine_tokens_per_block(ResolvedVersion(text="0.13.0.dev2024082000")) == 64


@pytest.mark.parametrize(
    ("text", "no_release"),
    [
        ("0.1.dev15312+g690e127b1", True),  # vLLM source build (the srcbuild case)
        ("0.1.dev7548+gbaba038", True),
        ("0.1.dev8331+g74e7551.d20250806", True),
        ("0.0.0.dev0", True),
        ("0.13.0.dev2024082000", False),  # a nightly of a named release
        ("0.29.1rc1.dev339+gda9888462", False),
        ("0.8.5", False),
    ],
)
def test_a_setuptools_scm_fallback_names_no_release(text: str, no_release: bool) -> None:
    assert names_no_release(text) is no_release


def test_a_dirty_source_build_dates_itself() -> None:
    # setuptools-scm's `.dYYYYMMDD`: the day of a build from a modified checkout
    assert build_date("0.1.dev8331+g74e7551.d20250806") == "2025-08-06"
    assert build_date("0.1.dev15312+g690e127b1") is None


def test_the_source_builds_log_is_read_as_a_release_before_the_extensible_cache_and_says_why() -> None:
    """`v0.1.dev15312+g690e127b1` used to parse as release 0.1 — older than every era, the oldest rules.
    The log has no year in its lines (`INFO 04-22 …`), so no date rules either. It sized its KV cache without v0.34.0's
    'Memory after warmup' line, and its connector (P2pNcclConnector) keeps v0.34.0's extensible cache on
    (config/vllm.py:3194-3260 at v0.34.0): so a release before v0.34.0, read as 0.33.0 and said to be approximate."""
    log = read_engine_log(CASES / "vllm/srcbuild-dev15312-qwen3-vl-8b-init-failed/engine.log")
    assert log.engine_version == "0.1.dev15312+g690e127b1"
    assert log.release_version is None
    assert "P2pNcclConnector" in log.server_args["kv_transfer_config"]
    version = vllm_version(log)
    assert version.text == "0.33.0" and version.approximate and version.source is VersionSource.LOG
    assert "extensible KV cache" in version.detail and "a release before v0.34.0" in version.detail
