"""What `--engine-log` says: a TensorRT-LLM log whose capacity is an assumption says it, as `kvtop explain` does;
a log of an engine the node does not run says so in words (it read "matches 0 running vllm engines").

#2268 (tests/data/cases/trtllm/trtllm-2268-qwen15-7b-primary-pool) prints `Number of blocks in KV cache primary
pool: 631` and neither its release nor its tokens per block: read by a release's default block, 631 × 32 = 20,192
(builds from 0.19.0) or 631 × 64 = 40,384 (before; case.json's worked check). Attached to a running engine that
reports no release, the figure is the first reading and the snapshot's notice names it as assumed.
"""

from __future__ import annotations

import json
from pathlib import Path

from kvtop.commands.node_source import DemoSource
from tests.conftest import CASES, CONFIGS

LOG = CASES / "trtllm/trtllm-2268-qwen15-7b-primary-pool/engine.log"


def _snapshot(tmp_path: Path):
    engine = {
        "model": str(CONFIGS / "meta-llama--Llama-2-7b-hf.json"),  # Qwen1.5-7B's geometry (the case's note)
        "command": "trtllm-serve /models/qwen1.5-7b --backend tensorrt --tp_size 1 --port 8000",
        "server_pid": 43000,
        "endpoint": "unreachable",  # no capacity nor release of its own: the log's capacity is attached
    }
    scenario = {"description": "one H100, trtllm-serve", "seed": 1, "gpu": {"model": "H100", "count": 1}, "engines": [engine]}
    path = tmp_path / "trtllm.json"
    path.write_text(json.dumps(scenario))
    return DemoSource.open(str(path), engine_log=LOG).collect_at(0)


def test_an_assumed_primary_pool_reading_is_said_where_the_log_is_attached(tmp_path: Path) -> None:
    blocks = json.loads((LOG.parent / "case.json").read_text())["logged"]["primary_blocks"]
    assert blocks == 631
    snapshot = _snapshot(tmp_path)
    (view,) = snapshot.engines
    assert {r.capacity.actual_tokens for r in view.ranks if r.capacity} == {blocks * 32} == {20_192}
    assert snapshot.notice is not None
    assert f"assumed: {blocks} primary-pool blocks × 32 tokens per block" in snapshot.notice
    assert f"builds before 0.19.0 took 64: {blocks} × 64 = 40,384" in snapshot.notice
    (note,) = [n for n in view.engine.live.notes if "engine log" in n]
    assert "assumed: 631 primary-pool blocks × 32" in note



def test_a_log_of_an_engine_the_node_does_not_run_says_so() -> None:
    # 1cat-237's log is vLLM's (`[gpu_worker.py:475] Available KV cache memory`); the default demo node runs SGLang alone
    log = CASES / "vllm/1cat-237-gemma-v100x4/engine.log"
    snapshot = DemoSource.open("default", engine_log=log).collect_at(0)
    assert {view.engine.kind for view in snapshot.engines} == {"sglang"}
    assert snapshot.notice is not None
    # the log prints no release and sized its cache without 0.34.0's warmup line: read as at most 0.33.0 (release_calendar)
    assert f"the engine log {log} is vLLM ~0.33.0's, and no vLLM engine runs on this node: not attached" in snapshot.notice


def test_a_log_two_running_engines_could_own_says_how_to_read_it_alone(tmp_path: Path) -> None:
    """Two trtllm-serve engines of one model: the log is attached to neither, and the notice names them and the
    command that reads it alone (the trial read '… matches 2 running trtllm engines: not attached', no way on)."""
    engines = [
        {"model": str(CONFIGS / "meta-llama--Llama-2-7b-hf.json"), "server_pid": pid, "endpoint": "unreachable",
         "command": f"trtllm-serve /models/qwen1.5-7b --backend tensorrt --tp_size 1 --port {port}"}
        for pid, port in ((43000, 8000), (44000, 8001))
    ]  # fmt: skip
    scenario = {"description": "two trtllm-serve", "seed": 1, "gpu": {"model": "H100", "count": 2}, "engines": engines}
    path = tmp_path / "two.json"
    path.write_text(json.dumps(scenario))
    snapshot = DemoSource.open(str(path), engine_log=LOG).collect_at(0)
    ids = ", ".join(view.engine.engine_id for view in snapshot.engines)
    assert snapshot.notice is not None
    assert (f"the engine log {LOG} matches 2 running TensorRT-LLM engines ({ids}) and its model path does not tell "
            f"them apart: not attached (read it alone: kvtop explain {LOG} --engine trtllm)") in snapshot.notice  # fmt: skip
