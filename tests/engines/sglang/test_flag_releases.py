"""One table of which SGLang releases have each flag (flag_releases.FLAG_RELEASES: the 40-wheel tables and the rows of
the flags kvtop reads by release), and its one reader. Expected values are the wheels' argparse lines, read by hand:
`--cuda-graph-max-bs` 0.4.0 server_args.py:691 … an alias at 0.5.19 :3928, none in 0.5.20 (declares neither it nor
the alias); `--enable-piecewise-cuda-graph` 0.5.4 :2976 … 0.5.13 :6665, none in 0.5.3.post1 or 0.5.14;
`--cuda-graph-backend-prefill` 0.5.14 :1932, none in 0.5.13; `--enable-deepep-waterfill` 0.5.12 … 0.5.15.post1
(flags_unmodelled.py's row, re-read in session 60)."""

from __future__ import annotations

import pytest

from kvtop.domain.engines.sglang.flag_releases import FLAG_RELEASES, READ, check_flag_release, missing_reason
from kvtop.domain.engines.sglang.flags import SPELLINGS
from kvtop.domain.engines.sglang.flags_neutral import NEUTRAL_GROUPS
from kvtop.domain.engines.sglang.flags_unmodelled import UNMODELLED
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.errors import InputError


def _v(text: str, approximate: bool = False) -> ResolvedVersion:
    return ResolvedVersion(text=text, approximate=approximate)


def test_a_flag_kvtop_reads_has_one_row_and_no_other_table_holds_it() -> None:
    neutral = {flag for _, group in NEUTRAL_GROUPS.values() for flag in group}
    assert not set(READ) & (set(UNMODELLED) | neutral)
    assert set(FLAG_RELEASES) == set(READ) | set(UNMODELLED) | neutral
    assert "--cuda-graph-max-bs" in SPELLINGS  # read by kvtop (settings.cuda_graph_max_bs)


@pytest.mark.parametrize(("flag", "version", "missing"), [
    ("--cuda-graph-max-bs", "0.3.6", False),  # before the first wheel read: not known, not refused
    ("--cuda-graph-max-bs", "0.5.19", False),
    ("--cuda-graph-max-bs", "0.5.20", True),
    ("--enable-piecewise-cuda-graph", "0.5.3.post1", True),
    ("--enable-piecewise-cuda-graph", "0.5.13.post1", False),  # not read: taken as 0.5.13
    ("--enable-piecewise-cuda-graph", "0.5.14", True),
    ("--cuda-graph-backend-prefill", "0.5.13", True),
    ("--cuda-graph-backend-prefill", "0.5.23", False),
    ("--enable-deepep-waterfill", "0.5.11", True),
    ("--enable-deepep-waterfill", "0.5.15.post1", False),
    ("--enable-deepep-waterfill", "0.5.16", True),
    ("--decode-attention-backend", "0.4.9.post4", True),  # server_args.py:1229-1255 from v0.4.9.post5
    ("--decode-attention-backend", "0.4.9.post5", False),
])  # fmt: skip
def test_each_row_says_which_releases_have_the_flag(flag: str, version: str, missing: bool) -> None:
    assert (missing_reason(flag, _v(version)) is not None) == missing


def test_the_reader_names_the_first_release_or_the_last_and_the_next() -> None:
    with pytest.raises(InputError, match=r"SGLang 0\.5\.13 has no --disable-prefill-cuda-graph \(first in v0\.5\.14"):
        check_flag_release("--disable-prefill-cuda-graph", _v("0.5.13"))
    with pytest.raises(InputError, match=r"last in v0\.5\.19, none in v0\.5\.20.*; type --cuda-graph-max-bs-decode$"):
        check_flag_release("--cuda-graph-max-bs", _v("0.5.23"), instead="; type --cuda-graph-max-bs-decode")


def test_an_estimated_release_and_an_unknown_flag_are_not_checked() -> None:
    check_flag_release("--cuda-graph-max-bs", _v("0.5.23", approximate=True))
    check_flag_release("--no-such-flag", _v("0.5.23"))
