"""An engine kvtop has no plan for is named as unchecked, never read as an all-clear (s37 user review).

The scenario is the shipped healthy Llama-3-70B TP8 node with the launch's --model-path swapped for a
URL with credentials that no demo model answers to: the source then has `ledger is None` and a
`ledger_error`. Before this rule `diagnose` printed "nothing lost to a fault: every rank holds what its
plan predicts" and exited 0, and the findings pane said "No findings: every byte is accounted for."
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kvtop.cli import main
from kvtop.commands.node_source import DemoSource
from kvtop.domain.diagnose import diagnose
from kvtop.domain.diagnose_findings import Rule, Severity
from kvtop.domain.incident import ALL_CLEAR, incident
from kvtop.domain.node import NodeSnapshot
from kvtop.sources.scenario import parse_scenario

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "scenarios"
UNREADABLE = "https://alice:Pw9Xq2LmNz@models.example/meta-llama/Meta-Llama-3-70B-Instruct"


def unreadable_scenario() -> dict[str, Any]:
    data = json.loads((EXAMPLES / "llama70b-tp8-sglang.json").read_text())
    engine = data["engines"][0]
    engine["command"] = engine["command"].replace("meta-llama/Meta-Llama-3-70B-Instruct", UNREADABLE)
    data["name"] = "unreadable-model"
    return data


def unreadable_snapshot() -> NodeSnapshot:
    return DemoSource(parse_scenario(unreadable_scenario())).collect_at(0)


def test_the_scenario_really_has_no_prediction() -> None:
    (view,) = unreadable_snapshot().engines
    assert view.ledger is None and view.ledger_error and "not a model of this demo scenario" in view.ledger_error


def test_diagnose_names_the_engine_as_unchecked_with_its_ledger_error() -> None:
    snapshot = unreadable_snapshot()
    findings = diagnose(snapshot)
    (finding,) = [f for f in findings if f.rule is Rule.NO_PREDICTION]
    assert finding.severity is Severity.WARNING and finding.engine_id == "sglang:41000"
    assert finding.gpus == tuple(range(8))
    view = snapshot.engines[0]
    assert finding.summary == f"sglang:41000 is not checked: {view.ledger_error}"
    assert "Pw9Xq2LmNz" not in finding.summary  # the ledger error is redacted at the source
    answer = incident(snapshot, findings)
    assert answer.severity is Severity.WARNING and answer.sentence != ALL_CLEAR
    assert answer.sentence.startswith("sglang:41000 is not checked: no prediction for https://***@models.example/")


def test_a_predicted_engine_gets_no_such_finding() -> None:
    data = unreadable_scenario()
    data["engines"][0]["command"] = data["engines"][0]["command"].replace(UNREADABLE, "meta-llama/Meta-Llama-3-70B-Instruct")
    findings = diagnose(DemoSource(parse_scenario(data)).collect_at(0))
    assert not [f for f in findings if f.rule is Rule.NO_PREDICTION]


def test_the_cli_says_so_exits_1_and_json_lists_it(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "unreadable.json"
    path.write_text(json.dumps(unreadable_scenario()))
    assert main(["diagnose", "--demo", str(path)]) == 1
    text = capsys.readouterr().out
    assert "every rank holds what its plan predicts" not in text
    assert "Engine not checked: no prediction · GPUs 0,1,2,3,4,5,6,7 · tokens not known (no prediction)" in text
    said = " ".join(text.split())  # the answer wraps at the terminal's width
    assert "answer: sglang:41000 is not checked: no prediction for https://***@models.example/" in said
    assert main(["diagnose", "--demo", str(path), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert [f["rule"] for f in out["findings"]] == ["no_prediction"]
    assert out["answer"] != ALL_CLEAR and "Pw9Xq2LmNz" not in json.dumps(out)
