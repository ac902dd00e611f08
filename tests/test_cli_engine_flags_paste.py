"""The 'engine flags:' line is pasted into a shell (an operator trial: `kvtop plan --engine vllm --speculative-config
'{"method": "ngram", …}'`). It printed the JSON unquoted, which a shell splits into four words, and printed the flag
twice (vLLM's own list writes --speculative-config, read by its rules, and the deployment flags kept it again)."""

from __future__ import annotations

import json
import shlex

import pytest

from kvtop.cli import main

SPEC = '{"method": "ngram", "num_speculative_tokens": 1}'  # vLLM's SpeculativeConfig as JSON (docs/engines/vllm.md §14)


def test_the_flags_line_pastes_back_as_the_flags_given(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["plan", "--engine", "vllm", "--model", "llama-3.1-8b", "--gpu", "H100", "--no-calibration-store"]
    assert main([*args, "--speculative-config", SPEC]) == 0
    line = next(row for row in capsys.readouterr().out.splitlines() if row.startswith("engine flags: "))
    assert shlex.split(line.removeprefix("engine flags: ")) == ["--speculative-config", SPEC]
    assert main([*args, "--speculative-config", SPEC, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["engine_flags"] == ["--speculative-config", SPEC]
