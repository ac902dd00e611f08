"""`--engine-log` in the TUI: the engine the log is of is predicted at the release the log states, as `kvtop explain`
reads the same log, not at the latest release's rules.

The log is a real vLLM 0.4.1 start (tests/data/cases/vllm/file29429054722-v041-llama3-8b-3090: "vLLM API server
version 0.4.1" on line 1, Meta-Llama-3-8B-Instruct on one RTX 3090, `# GPU blocks: 2358`); the node is a demo node
running that launch with its endpoint unreachable, so the log's capacity is the one attached.
"""

from __future__ import annotations

import json
from pathlib import Path

from kvtop.commands.node_source import DemoSource
from kvtop.domain.calibration.estimate import calibrated_ledger
from kvtop.domain.engines.versions import VersionSource
from kvtop.domain.explain import explain
from kvtop.domain.explain_request import ExplainRequest
from kvtop.domain.ledger import Ledger
from kvtop.ui.widgets.node_header import engine_line
from tests.conftest import CASES
from tests.domain.test_logged_capacity_one_truth import _cli_settings

LOG = CASES / "vllm/file29429054722-v041-llama3-8b-3090/engine.log"
GPU_NAME = "NVIDIA GeForce RTX 3090"


def _node(tmp_path: Path, version: str | None = None) -> Path:
    """One RTX 3090 running the log's launch (its printed arguments: 0.9 utilisation, 16-token blocks, 256 sequences,
    an 8,192-token context: `max_seq_len=8192` in its engine line)."""
    engine: dict[str, object] = {
        "model": "llama-3.1-8b",
        "command": "vllm serve Meta-Llama-3-8B-Instruct --gpu-memory-utilization 0.9 --block-size 16 "
        "--max-num-seqs 256 --max-model-len 8192 --port 8000",
        "server_pid": 4100,
        "endpoint": "unreachable",
    }
    if version is not None:
        engine["version"] = version
    scenario = {"description": "one RTX 3090 under vLLM", "seed": 3, "engines": [engine],
                "gpu": {"model": "RTX 3090", "count": 1, "name": GPU_NAME}}  # fmt: skip
    path = tmp_path / "rtx3090-vllm.json"
    path.write_text(json.dumps(scenario))
    return path


def _ledger(tmp_path: Path) -> Ledger:
    snapshot = DemoSource.open(str(_node(tmp_path)), engine_log=LOG).collect_at(0)
    (view,) = snapshot.engines
    assert view.engine.live.token_capacity_logged  # the log is this engine's: attached
    assert isinstance(view.ledger, Ledger)
    # the header says whose rules and where the release came from
    assert "rules of vLLM 0.4.1 (from the engine log)" in engine_line(view).plain
    return view.ledger


def test_the_ledger_is_at_the_release_the_log_states_as_explain_reads_it(tmp_path: Path) -> None:
    ledger = _ledger(tmp_path)
    # `kvtop explain LOG --model llama-3.1-8b --max-model-len 8192 --gpu "RTX 3090"`: its settings and release as
    # the command reads them off the log, on the node's GPU
    log, settings, version = _cli_settings(LOG, "--max-model-len", "8192")
    request = ExplainRequest(log=log, model=ledger.model, settings=settings, version=version,
                             gpu_total_bytes=ledger.gpu_total_bytes, gpu_name=GPU_NAME)  # fmt: skip
    explained = explain(request)
    assert explained.engine_version.text == "0.4.1"  # line 1: "vLLM API server version 0.4.1"
    assert ledger.version == explained.engine_version
    assert ledger.version.source is VersionSource.LOG
    assert explained.ledger is not None
    # the non-KV reserve is the release's (vLLM's activation profile by era, calibrated): explain's figure
    assert ledger.ranks[0].reserve_bytes == explained.ledger.ranks[0].reserve_bytes
    # and not the latest release's, which the node predicted before (a figure the release changes)
    latest = calibrated_ledger(ledger.model, ledger.settings.model_copy(update={"engine_version": None}),
                               gpu_total_bytes=ledger.gpu_total_bytes, gpu_name=GPU_NAME,
                               measured=ledger.measured.model_copy(update={"calibrated": None}))  # fmt: skip
    assert latest.ranks[0].reserve_bytes != ledger.ranks[0].reserve_bytes
    assert latest.token_capacity != ledger.token_capacity


def test_the_endpoints_version_stands_before_the_logs(tmp_path: Path) -> None:
    """A running server that says its release (and its capacity) is read first: a log may be of an earlier start."""
    scenario = json.loads(_node(tmp_path, version="0.8.4").read_text())
    scenario["engines"][0]["endpoint"] = "ok"
    path = tmp_path / "answering.json"
    path.write_text(json.dumps(scenario))
    (view,) = DemoSource.open(str(path), engine_log=LOG).collect_at(0).engines
    assert isinstance(view.ledger, Ledger)
    assert view.ledger.version.text == "0.8.4"
    # said as the endpoint's (it read '--engine-version 0.8.4' in snapshot --json's version_detail, a flag nobody
    # typed)
    assert view.ledger.version.source is VersionSource.ENDPOINT
    assert view.ledger.version.detail == "the engine's endpoint reports 0.8.4"


def test_a_log_not_attached_gives_no_release(tmp_path: Path) -> None:
    """An engine that reports its own capacity (and no release) does not take the log: the log is not shown to be
    of this start, so neither is its release (the latest rules, said so)."""
    scenario = json.loads(_node(tmp_path).read_text())
    scenario["engines"][0]["endpoint"] = "ok"
    path = tmp_path / "answering.json"
    path.write_text(json.dumps(scenario))
    snapshot = DemoSource.open(str(path), engine_log=LOG).collect_at(0)
    (view,) = snapshot.engines
    assert not view.engine.live.token_capacity_logged
    assert "is not used" in (snapshot.notice or "")
    assert isinstance(view.ledger, Ledger)
    assert view.ledger.version.text is None


def test_an_engine_the_log_is_not_offered_to_is_predicted_once(tmp_path: Path) -> None:
    """An engine that reports its own capacity never takes the log, whatever its ledger says: it is predicted once, at
    its own release, not first at the log's 0.4.1 and again at the latest (the assembler predicted it twice)."""
    scenario = json.loads(_node(tmp_path).read_text())
    scenario["engines"][0]["endpoint"] = "ok"
    path = tmp_path / "answering.json"
    path.write_text(json.dumps(scenario))
    source = DemoSource.open(str(path), engine_log=LOG)
    solve = source._predictor._predict
    releases: list[str | None] = []

    def counted(ref, settings, *args, **kwargs):  # type: ignore[no-untyped-def]
        releases.append(settings.engine_version)
        return solve(ref, settings, *args, **kwargs)

    source._predictor._predict = counted  # type: ignore[method-assign]
    (view,) = source.collect_at(0).engines
    assert not view.engine.live.token_capacity_logged
    assert releases == [None]  # one prediction, at the latest release's rules (the engine states none)


def test_an_endpoint_whose_version_names_no_release_leaves_the_log_s(tmp_path: Path) -> None:
    """An endpoint that reports 'dev' states no release: its words are the named state, said as its own, and a log of
    the engine's start that states one (line 1: 'vLLM API server version 0.4.1') is the evidence taken."""
    scenario = json.loads(_node(tmp_path, version="dev").read_text())
    scenario["engines"][0]["endpoint"] = "ok"
    path = tmp_path / "answering.json"
    path.write_text(json.dumps(scenario))
    source = DemoSource.open(str(path), engine_log=LOG)
    snapshot = source.collect_at(0)
    (view,) = snapshot.engines
    assert isinstance(view.ledger, Ledger)  # the prediction is kept: the latest rules, said as the endpoint's words
    assert view.ledger.version.source is VersionSource.ENDPOINT_UNREAD
    assert view.ledger.version.detail == "the engine's endpoint reports 'dev', not a release kvtop reads: the latest release's rules"
    _, _, logged = _cli_settings(LOG, "--max-model-len", "8192")  # the log's release, as `kvtop explain` reads it
    assert (logged.text, logged.source) == ("0.4.1", VersionSource.LOG)
    ledger = source._predictor.ledger(view.engine, list(snapshot.observation.gpus), release=logged)
    assert isinstance(ledger, Ledger)
    assert (ledger.version.text, ledger.version.source, ledger.settings.engine_version) == ("0.4.1", VersionSource.LOG,
                                                                                          "0.4.1")  # fmt: skip
    # both said: the log's release taken, and what the endpoint reported beside it
    assert ledger.version.detail == f"{logged.detail} (the engine's endpoint reports 'dev', no release kvtop reads)"


def test_the_header_says_an_endpoint_s_words_named_no_release(tmp_path: Path) -> None:
    """Without a log, an endpoint that reports 'dev' leaves the latest rules: the header says so, not only the JSON."""
    scenario = json.loads(_node(tmp_path, version="dev").read_text())
    scenario["engines"][0]["endpoint"] = "ok"
    path = tmp_path / "answering.json"
    path.write_text(json.dumps(scenario))
    (view,) = DemoSource.open(str(path)).collect_at(0).engines
    assert "rules of vLLM latest (the endpoint's version names no release kvtop reads)" in engine_line(view).plain
