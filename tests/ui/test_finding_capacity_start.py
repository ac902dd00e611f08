"""A finding's capacity change says what it starts from (session 57: with `--engine-log`, the FP8 advice read
"capacity 415,744 → 806,336" from kvtop's prediction while the log printed 397,696, and did not say so).

The case: the vLLM 0.4.1 RTX 3090 start of tests/ui/test_logged_capacity_words.py, its endpoint unreachable, so
the figure the engine states is its log's '# GPU blocks: 2358' × 16-token blocks = 37,728 tokens. The advice is
priced on kvtop's plan (the rank waterfall's explained figure), so its line names that start 'predicted' and puts
the log's 37,728 beside it: in the findings pane, in `diagnose`'s text and in its JSON alike (one `Finding`), and in
`explain --json`'s findings, beside the capacity the explained log printed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.cli import main
from kvtop.commands.render_findings import finding_json, finding_text
from kvtop.domain.capacity import CapacitySource
from kvtop.domain.diagnose import diagnose, diagnose_ledger
from kvtop.ui.widgets.findings import finding_text as pane_text
from tests.data_paths import CASES, CONFIGS
from tests.ui.test_logged_capacity_words import LOGGED_TOKENS, snapshot


def test_the_fp8_advice_starts_from_the_prediction_and_puts_the_logs_figure_beside_it(tmp_path: Path) -> None:
    state = snapshot(tmp_path, "unreachable")
    (rank,) = state.engines[0].ranks
    assert rank.capacity is not None and rank.capacity.actual_source is CapacitySource.LOGGED
    predicted = rank.capacity.explained_tokens  # the plan the advice is priced on
    assert predicted != LOGGED_TOKENS  # the miss this line must not hide (38,560 against 37,728)
    (fp8,) = [f for f in diagnose(state) if f.rule == "bf16_kv_where_fp8_supported"]
    after = predicted + fp8.gain_tokens
    line = (f"capacity {predicted:,} predicted → {after:,} tokens per rank "
            f"(the engine logged {LOGGED_TOKENS:,}; the change is priced on kvtop's plan)")  # fmt: skip
    assert line in fp8.evidence
    assert f"    · {line}" in finding_text(fp8)  # `kvtop diagnose`
    assert f"  {line}" in pane_text(fp8).plain.splitlines()  # the findings pane
    start = finding_json(fp8)["start"]  # `kvtop diagnose --json`
    assert (start["tokens"], start["source"]) == (predicted, "predicted")
    assert (start["engine_tokens"], start["engine_source"]) == (LOGGED_TOKENS, "logged")


def test_a_plan_alone_names_its_start_predicted_with_nothing_beside_it(tmp_path: Path) -> None:
    state = snapshot(tmp_path, "unreachable")
    ledger = state.engines[0].ledger
    assert ledger is not None
    (fp8,) = [f for f in diagnose_ledger(ledger) if f.rule == "bf16_kv_where_fp8_supported"]
    assert fp8.start is not None and fp8.start.engine_tokens is None
    assert f"capacity {ledger.token_capacity:,} predicted → {ledger.token_capacity + fp8.gain_tokens:,} tokens per rank" in fp8.evidence


def test_a_live_figure_equal_to_the_plan_adds_nothing_to_the_line_but_the_json_names_it(tmp_path: Path) -> None:
    state = snapshot(tmp_path, "ok")  # the endpoint states its own capacity: the log is not used
    (rank,) = state.engines[0].ranks
    # a demo node: the endpoint's figure is the scenario's (`CapacitySource.of_reading`)
    assert rank.capacity is not None and rank.capacity.actual_source is CapacitySource.SIMULATED
    (fp8,) = [f for f in diagnose(state) if f.rule == "bf16_kv_where_fp8_supported"]
    assert fp8.start is not None and fp8.start.engine_source is CapacitySource.SIMULATED
    assert fp8.start.engine_tokens == rank.capacity.actual_tokens
    said = fp8.start.said()
    assert ("the demo simulates" in said) is (rank.capacity.actual_tokens != fp8.start.tokens)
    assert "log printed" not in said


def test_explain_puts_the_logs_capacity_beside_the_advices_start(capsys: pytest.CaptureFixture[str]) -> None:
    # vllm#10517: Llama-3.1-8B on an RTX 3090 under vLLM V0, '# GPU blocks: 1952' at 16-token blocks
    log = CASES / "vllm/vllm-10517-llama31-8b-3090-v0/engine.log"
    main(["explain", str(log), "--model", str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"),
          "--no-calibration-store", "--json"])  # fmt: skip
    out = json.loads(capsys.readouterr().out)
    (fp8,) = out["findings"]
    predicted = out["predicted"]["token_capacity"]
    assert (fp8["start"]["tokens"], fp8["start"]["source"]) == (predicted, "predicted")
    assert (fp8["start"]["engine_tokens"], fp8["start"]["engine_source"]) == (1_952 * 16, "logged")
    assert f"predicted → {predicted + fp8['gain_tokens']:,} tokens per rank (the engine logged 31,232;" in fp8["evidence"][1]
