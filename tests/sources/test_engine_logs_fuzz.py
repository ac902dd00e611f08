"""Mangled real log lines never make the engine-log parser raise."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from kvtop.domain.engine_log import EngineLog
from kvtop.sources.engine_logs import parse_call_args, parse_dict_args, parse_engine_log
from tests.data_paths import CASES
from tests.fuzz.text import JUNK  # the junk the fuzz suite puts into lines

REAL_LINES = sorted(
    {
        line
        for path in CASES.glob("*/*/engine.log")
        for line in path.read_text().splitlines()
        if line
    }
)


@st.composite
def mangled_line(draw: st.DrawFn) -> str:
    """A real line sliced, with characters shuffled, junk inserted and spans deleted."""
    line = draw(st.sampled_from(REAL_LINES))
    for _ in range(draw(st.integers(0, 4))):
        operation = draw(st.sampled_from(["slice", "shuffle", "insert", "delete"]))
        start = draw(st.integers(0, len(line)))
        end = draw(st.integers(start, len(line)))
        if operation == "slice":
            line = line[start:end]
        elif operation == "shuffle":
            span = list(line[start:end])
            line = line[:start] + "".join(draw(st.permutations(span))) + line[end:]
        elif operation == "insert":
            line = line[:start] + draw(JUNK) + line[start:]
        else:
            line = line[:start] + line[end:]
    return line


@example(["00[2025-12-62 23:02:03 DP0 TP0 EP0] KV Cache is allocated. #tokens: 2786325, K size: 31.89 GB, V size: 31.89 GB"])
@settings(max_examples=200, deadline=None)
@given(st.lists(mangled_line(), max_size=12))
def test_mangled_logs_never_raise(lines: list[str]) -> None:
    """(The explicit example is the mangled SGLang stamp CI's run drew in session 52: a day 62 made `_stamp` raise.)"""
    text = "\n".join(lines)
    log = parse_engine_log(text)
    assert isinstance(log, EngineLog)
    assert 0 <= log.lines_parsed <= log.lines_total == len(text.splitlines())


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab=,:'\"()[]{}\\ 0123.-NoneTrue"), max_size=200))
def test_argument_lists_never_raise(text: str) -> None:
    assert isinstance(parse_call_args(text), dict)
    assert isinstance(parse_dict_args(text), dict)
