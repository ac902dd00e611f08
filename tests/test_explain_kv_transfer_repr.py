"""vLLM prints `--kv-transfer-config` in its args as the dataclass repr, not the JSON the flag takes.

The recorded P2pNcclConnector prefill launch (tests/data/cases/vllm/srcbuild-dev15312-qwen3-vl-8b-init-failed,
SOURCES.md there) logs `'kv_transfer_config': KVTransferConfig(kv_connector='P2pNcclConnector', …,
kv_role='kv_producer', …, kv_connector_extra_config={'send_type': 'PUT_ASYNC', 'nccl_num_channels': '8'}, …)`.
`kvtop explain` read that text as the flag's value, refused it ("--kv-transfer-config: expected a JSON object"),
rebuilt nothing, and so wrote nothing to the calibration store: no deliberate rule, a value read wrongly. The
repr is now read into the JSON object; the start is rebuilt (163,568 tokens logged: 10,223 blocks × 16, inside
the 2-decimal interval of its 22.46 GiB) and its measured weights (16.78 GiB logged) reach the store.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kvtop.cli import main
from kvtop.domain.engines.vllm.log_facts import non_default_args
from kvtop.domain.log_dialect import LogFacts
from tests.data_paths import CASES

CASE = CASES / "vllm" / "srcbuild-dev15312-qwen3-vl-8b-init-failed"


def test_the_args_dump_reads_the_transfer_config_repr_as_its_json() -> None:
    line = next(x for x in (CASE / "engine.log").read_text().splitlines() if "non-default args:" in x)
    facts = LogFacts()
    assert non_default_args(line, facts)
    config = json.loads(str(facts.server_args["kv_transfer_config"]))
    assert config["kv_connector"] == "P2pNcclConnector" and config["kv_role"] == "kv_producer"
    assert config["kv_buffer_size"] == 1e9 and config["kv_port"] == 25555
    assert config["kv_connector_extra_config"] == {"send_type": "PUT_ASYNC", "nccl_num_channels": "8"}


def test_explain_rebuilds_the_p2p_start_and_the_store_keeps_it(capsys: pytest.CaptureFixture[str]) -> None:
    args = [
        "explain",
        str(CASE / "engine.log"),
        "--model",
        str(CASE / "config.json"),
        "--gpu",
        "A100",
        "--json",
    ]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] == "failed_start" and out["logged"]["token_capacity"] == 163_568
    assert "expected a JSON object" not in json.dumps(out)
    store = Path(os.environ["XDG_STATE_HOME"]) / "kvtop" / "calibration.jsonl"
    (line,) = [json.loads(x) for x in store.read_text().splitlines()]
    assert line["engine"] == "vllm" and line["model_type"] == "qwen3_vl_text"
    assert abs(line["terms"]["weights"] - 16.78 * 2**30) <= 0.005 * 2**30  # 'Model loading took 16.78 GiB'
