"""Every ```$ kvtop …``` example in README.md is run and its output compared with what the README shows.

Text output is compared exactly, line by line (trailing spaces aside): a person reads those tables
for their numbers *and* their units and labels, and a number-only comparison would let "GB" for
"GiB" or a wrong row label through. A README block may leave lines out with a line holding only
"…": each run of lines between elisions must appear contiguously, in order, in the output; a block
that does not start (end) with "…" must match the output's first (last) lines.

JSON output is compared by key: the README shows a valid JSON object holding some of the output's
keys (the arrays of steps and ranks are long); each key it shows must exist in the output with an
equal value, and every key the paragraph above the example names in backticks must exist in the
output. `# exit N` after a command is its expected exit status (else 0).

The demo node's observed figures move a little each tick by design; the examples are run at one
fixed tick (DEMO_TICK), so the README shows one reproducible moment.
"""

from __future__ import annotations

import difflib
import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kvtop.cli import main
from kvtop.commands.node_source import DemoSource

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
DEMO_TICK = 1_750_000_000
#: The width the README's prose is shown at: what a pipe gets (`kvtop.commands.output.DEFAULT_COLUMNS`), set here
#: since tests/conftest.py makes every other test's COLUMNS wide.
README_COLUMNS = 100
ELISION = "…"
_FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
_EXIT = re.compile(r"#\s*exit (\d+)")
_KEY = re.compile(r"`([a-z][a-z0-9_]*)`")


@dataclass(frozen=True)
class Example:
    """One README example: the command after `$ kvtop`, its expected exit status and output lines."""

    line: int  # where the command is in README.md (1-based)
    argv: tuple[str, ...]
    exit_code: int
    shown: tuple[str, ...]
    prose: str  # the paragraph just above the block

    @property
    def name(self) -> str:
        return f"README.md:{self.line} kvtop {' '.join(self.argv)}"


def readme_examples(text: str) -> list[Example]:
    examples = []
    for fence in _FENCE.finditer(text):
        lines = fence.group(1).splitlines()
        if not lines or not lines[0].startswith("$ kvtop"):
            continue
        command, index = lines[0][2:], 1
        while command.endswith("\\"):
            command, index = command[:-1] + " " + lines[index].strip(), index + 1
        exit_match = _EXIT.search(command)
        argv = shlex.split(command, comments=True)
        assert argv[0] == "kvtop"
        paragraphs = text[: fence.start()].rstrip().split("\n\n")
        examples.append(
            Example(
                line=text.count("\n", 0, fence.start()) + 2,
                argv=tuple(argv[1:]),
                exit_code=int(exit_match.group(1)) if exit_match else 0,
                shown=tuple(line.rstrip() for line in lines[index:]),
                prose=paragraphs[-1] if paragraphs else "",
            )
        )
    return examples


EXAMPLES = readme_examples(README.read_text(encoding="utf-8"))


def test_the_readme_has_an_example_of_each_headless_command_it_documents() -> None:
    commands = {example.argv[0] for example in EXAMPLES}
    assert {"plan", "snapshot", "diagnose", "explain"} <= commands, commands
    assert any("--json" in example.argv for example in EXAMPLES)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda example: example.name)
def test_each_readme_example_prints_what_the_readme_shows(
    example: Example, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)  # the README's relative paths are from the repository's root
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("COLUMNS", str(README_COLUMNS))
    monkeypatch.setattr(DemoSource, "tick", lambda self: DEMO_TICK)
    try:
        code = main(list(example.argv))
    except SystemExit as done:  # --version and --help end through argparse
        code = int(done.code or 0)
    out, err = capsys.readouterr()
    assert code == example.exit_code, f"{example.name}: exit {code}, the README says {example.exit_code}\n{err}"
    if "--json" in example.argv:
        compare_json(example, json.loads(out))
    else:
        compare_text(example, [line.rstrip() for line in out.splitlines()])


def compare_text(example: Example, actual: list[str]) -> None:
    shown = list(example.shown)
    segments: list[list[str]] = [[]]
    for line in shown:
        if line.strip() == ELISION:
            segments.append([])
        else:
            segments[-1].append(line)
    anchored_start, anchored_end = shown[0].strip() != ELISION, shown[-1].strip() != ELISION
    position = 0
    for index, segment in enumerate(segments):
        if not segment:
            continue
        if index == 0 and anchored_start:
            found = 0 if actual[: len(segment)] == segment else -1
        else:
            found = _find(actual, segment, position)
        if index == len(segments) - 1 and anchored_end and found >= 0 and found + len(segment) != len(actual):
            found = -1  # the last lines shown must be the output's last lines
        if found < 0:
            near = actual[position : position + len(segment) + 5]
            diff = "\n".join(difflib.unified_diff(segment, near, "README.md", "kvtop", lineterm=""))
            pytest.fail(f"{example.name}: these README lines are not in the output, in order:\n{diff}")
        position = found + len(segment)


def _find(lines: list[str], segment: list[str], start: int) -> int:
    for index in range(start, len(lines) - len(segment) + 1):
        if lines[index : index + len(segment)] == segment:
            return index
    return -1


def compare_json(example: Example, actual: dict[str, Any]) -> None:
    shown = json.loads("\n".join(example.shown))  # the README's JSON is JSON, not a Python dict
    assert isinstance(shown, dict) and shown, example.name
    _subset(shown, actual, example.name)
    keys = _all_keys(actual)
    named = set(_KEY.findall(example.prose)) - {"null", "true", "false"}
    missing = sorted(key for key in named if key not in keys)
    assert not missing, f"{example.name}: the README names keys the output lacks: {missing}"


def _subset(shown: Any, actual: Any, where: str) -> None:
    if isinstance(shown, dict):
        assert isinstance(actual, dict), f"{where}: the output has {actual!r}, not an object"
        for key, value in shown.items():
            assert key in actual, f"{where}: the output has no key {key!r}"
            _subset(value, actual[key], f"{where}.{key}")
    else:
        assert shown == actual, f"{where}: the README shows {shown!r}, the output has {actual!r}"


def _all_keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {key for item in value.values() for key in _all_keys(item)}
    if isinstance(value, list):
        return {key for item in value for key in _all_keys(item)}
    return set()
