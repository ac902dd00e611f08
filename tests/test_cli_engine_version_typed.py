"""`kvtop plan --engine-version "0.10.2 "`: a release typed in quotes with a stray space is that release (PEP 440:
"Leading and trailing whitespace must be silently ignored"; packaging's `Version(' 0.10.2 ')` is 0.10.2), and no space
reaches the plan's heading or its Budget line. Session 70 let a word after a space through the typed check (for an
endpoint's '0.5.9 …', now read by the endpoint's reader), and a typed '0.10.2 ' printed 'Budget (vLLM 0.10.2 , …'.
A word after the release is still more written onto it: refused in one line naming the flag."""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from tests.conftest import CONFIGS

QWEN3_8B = str(CONFIGS / "Qwen--Qwen3-8B.json")
PLAN = ["plan", "--model", QWEN3_8B, "--engine", "vllm", "--gpu", "H100"]


def test_a_stray_space_is_dropped_before_any_heading(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*PLAN, "--engine-version", "0.10.2 "]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "  ·  vLLM 0.10.2  ·  TP1 on 1× H100" in lines[0]
    budget = next(line for line in lines if line.startswith("Budget ("))
    assert budget == "Budget (vLLM 0.10.2, tightest rank; --engine-version 0.10.2)"
    assert main([*PLAN, "--engine-version", " 0.10.2 ", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert (plan["engine_version"], plan["version_detail"]) == ("0.10.2", "--engine-version 0.10.2")


def test_a_word_after_the_release_is_refused_naming_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*PLAN, "--engine-version", "0.10.2 build7"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [
        "kvtop: error: --engine-version: not a release: '0.10.2 build7' (write e.g. 0.5.9, v0.10.2, 0.4.3.post2 or latest)"
    ]
