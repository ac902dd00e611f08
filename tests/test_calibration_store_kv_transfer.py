"""A disaggregated vLLM start (`--kv-transfer-config`) is stored under the plain start's key (#27).

The rule (docs/engines/vllm.md §12, "A disaggregated start"): from v0.13.0 the worker's connector is made in
`Worker.initialize_from_config`, after `determine_available_memory` sized the KV cache (gpu_worker.py, read in the
v0.13.0 and v0.33.0 wheels), so none of its GPU bytes is in a term the store keeps. The recorded P2pNcclConnector
prefill start (tests/data/cases/vllm/srcbuild-dev15312-qwen3-vl-8b-init-failed, SOURCES.md there) shows the order
in the engine's own log: `Creating v1 connector with name: P2pNcclConnector` comes after `GPU KV cache size`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kvtop.cli import main
from kvtop.domain.wording import GIB
from tests.data_paths import CASES

CASE = CASES / "vllm" / "srcbuild-dev15312-qwen3-vl-8b-init-failed"


def _line_no(lines: list[str], text: str) -> int:
    return next(i for i, line in enumerate(lines) if text in line)


def test_the_engine_makes_its_connector_after_the_kv_sizing() -> None:
    lines = (CASE / "engine.log").read_text().splitlines()
    loaded = _line_no(lines, "Model loading took 16.78 GiB")
    profiled = _line_no(lines, "Available KV cache memory: 22.46 GiB")
    sized = _line_no(lines, "GPU KV cache size: 163,568 tokens")
    connector = _line_no(lines, "Creating v1 connector with name: P2pNcclConnector")
    assert loaded < profiled < sized < connector


def _explain_into_store(log: Path) -> dict[str, object]:
    store = Path(os.environ["XDG_STATE_HOME"]) / "kvtop" / "calibration.jsonl"
    store.unlink(missing_ok=True)
    # a source build before v0.34.0 (blocks of 16; its P2P args leave the log undated at 0.34.0, where the plain
    # copy reads as 0.33.0): pinned to 0.33.0 on both sides so the two starts and the plan name one release
    assert main(["explain", str(log), "--model", str(CASE / "config.json"), "--gpu", "A100", "--json",
                 "--engine-version", "0.33.0"]) == 0  # fmt: skip
    (line,) = [json.loads(x) for x in store.read_text().splitlines()]
    return dict(line)


def test_the_p2p_start_is_stored_as_the_plain_start_of_its_launch(tmp_path: Path) -> None:
    text = (CASE / "engine.log").read_text()
    disaggregated = _explain_into_store(CASE / "engine.log")
    # the same start without its connector: the recorded log with `kv_transfer_config` taken out of the args
    # and the connector's own lines dropped (every figure the engine printed is kept)
    head, rest = text.split("'kv_transfer_config': KVTransferConfig(", 1)
    plain_text = head + rest.split("), ", 1)[1]
    plain_lines = [
        x for x in plain_text.splitlines() if "connector" not in x.lower() and "kv-transfer" not in x
    ]
    plain_log = tmp_path / "engine.log"
    plain_log.write_text("\n".join(plain_lines) + "\n")
    plain = _explain_into_store(plain_log)
    assert "kv_transfer_config" not in plain_log.read_text()
    # one key, the same terms: a later plain plan of this launch on this node reads the P2P start's figures
    assert {k: v for k, v in disaggregated.items() if k != "date"} == {
        k: v for k, v in plain.items() if k != "date"
    }
    terms = disaggregated["terms"]
    assert isinstance(terms, dict)
    assert abs(terms["weights"] - 16.78 * GIB) <= 0.005 * GIB  # 'Model loading took 16.78 GiB'


def test_a_plain_plan_of_the_launch_reads_the_p2p_starts_runtime_terms(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The log prints the dtype vLLM resolved (`dtype=torch.bfloat16`) where a plan of the same launch names none
    (the checkpoint's bf16): the store's runtime terms are compared by the dtype's width. Before, they never applied
    (the plan kept its assumed 0.41 GiB activation and planned 368,656 tokens); now the plan lands on the logged
    163,568 (10,223 blocks × 16) inside its interval."""
    flags = ["plan", "--engine", "vllm", "--model", str(CASE / "config.json"), "--gpu", "A100",
             "--gpu-memory-utilization", "0.85", "--max-model-len", "4096", "--max-num-seqs", "5", "--enforce-eager",
             "--json", "--engine-version", "0.33.0"]  # fmt: skip  # the stored starts' release (pinned above)
    _explain_into_store(CASE / "engine.log")
    capsys.readouterr()
    assert main(flags) == 0
    out = json.loads(capsys.readouterr().out)
    activation = next(term for term in out["terms"] if term["term"] == "activation")
    assert activation["source"] == "measured"
    assert out["token_capacity_min"] <= 163_568 <= out["token_capacity_max"]
