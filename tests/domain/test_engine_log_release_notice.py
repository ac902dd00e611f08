"""`--engine-log` where the log is not used names the release the log states, and a file that is no engine log is
said in `kvtop explain`'s words.

The log is a real vLLM 0.4.1 start (tests/data/cases/vllm/file29429054722-v041-llama3-8b-3090: "vLLM API server
version 0.4.1" on line 1). Before, the notices read "… is vLLM's, and no vLLM engine runs on this node" and "… is not
used" without the release, and a binary file read "states no token capacity" where explain says "no … startup lines".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.commands.node_source import DemoSource
from kvtop.domain.errors import InputError
from kvtop.sources.engine_logs import read_engine_log
from tests.conftest import CASES

LOG = CASES / "vllm/file29429054722-v041-llama3-8b-3090/engine.log"
#: the engines explain names when a file has none of their lines (tests/test_cli_explain_not_a_log.py's wording)
NAMES = "SGLang, vLLM, LMDeploy, TensorRT-LLM or llama.cpp"


def test_the_log_names_its_release() -> None:
    first = LOG.read_text().splitlines()[0]
    assert first.endswith("vLLM API server version 0.4.1")  # the release, as the log states it


def test_a_log_of_an_engine_the_node_does_not_run_names_its_release() -> None:
    snapshot = DemoSource.open("default", engine_log=LOG).collect_at(0)  # the default demo node runs SGLang alone
    assert {view.engine.kind for view in snapshot.engines} == {"sglang"}
    assert snapshot.notice is not None
    assert (
        f"the engine log {LOG} is vLLM 0.4.1's, and no vLLM engine runs on this node: not attached" in snapshot.notice
    )


def test_a_log_beside_an_engine_that_reports_its_capacity_names_its_release(tmp_path: Path) -> None:
    engine = {
        "model": "llama-3.1-8b",
        "command": "vllm serve Meta-Llama-3-8B-Instruct --gpu-memory-utilization 0.9 --max-model-len 8192 --port 8000",
        "server_pid": 4100,
        "endpoint": "ok",  # the engine reports its own capacity: the log is not used
    }
    scenario = {"description": "one RTX 3090 under vLLM", "seed": 3, "engines": [engine],
                "gpu": {"model": "RTX 3090", "count": 1}}  # fmt: skip
    path = tmp_path / "answering.json"
    path.write_text(json.dumps(scenario))
    snapshot = DemoSource.open(str(path), engine_log=LOG).collect_at(0)
    (view,) = snapshot.engines
    live = view.engine.live.token_capacity
    assert live is not None and not view.engine.live.token_capacity_logged
    assert snapshot.notice == (  # a demo scenario's engine: its figure is simulated, no engine reports it
        f"the engine log {LOG} (vLLM 0.4.1's) is not used: the demo simulates {view.engine.engine_id}'s token "
        f"capacity ({live:,})"
    )


def test_a_binary_file_is_said_in_explains_words(tmp_path: Path) -> None:
    path = tmp_path / "core.bin"
    path.write_bytes(bytes(range(256)) * 16)
    snapshot = DemoSource.open("default", engine_log=path).collect_at(0)
    assert snapshot.notice is not None
    assert f"the engine log {path} has no {NAMES} startup lines: not attached" in snapshot.notice
    assert "states no token capacity" not in snapshot.notice
    # the words `kvtop explain` refuses the same file with
    with pytest.raises(InputError, match=f"^log: no {NAMES} startup lines: {path}$"):
        read_engine_log(path).engine_for()
