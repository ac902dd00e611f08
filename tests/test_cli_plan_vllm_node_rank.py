"""vLLM's node flags at plan time: a node rank outside the engine's nodes and a node count at a release without
the flag are refused, one line naming the flag, as vLLM itself would stop.

Expected behaviour read from vLLM's code, not kvtop's: `EngineArgs.create_engine_config` checks
`node_rank < nnodes` when `nnodes > 1` (an assert at v0.11.1, engine/arg_utils.py:1479, to v0.26.0; a ValueError
"`--node-rank` must be between 0 and {nnodes - 1}" from v0.27.0, :2414 at v0.33.0); `--nnodes`/`--node-rank`
are first added to the parser in v0.11.1 (engine/arg_utils.py:759-760, PR #23691), absent from every file of the
v0.11.0 wheel, so v0.11.0's argparse stops at "unrecognized arguments"."""

from __future__ import annotations

import pytest

from kvtop.cli import main
from tests.conftest import DATA

CONFIG = str(DATA / "calibration" / "configs" / "deepseek-ai--DeepSeek-R1-Distill-Qwen-1.5B.RECONSTRUCTED.json")
BASE = ["plan", "--model", CONFIG, "--no-calibration-store", "--engine", "vllm", "--gpu", "H100",
        "--tensor-parallel-size", "2", "--pipeline-parallel-size", "2"]  # fmt: skip
HEAD = ("--master-addr", "10.0.0.1")  # node rank 0's address: a span over nodes is told apart by it


def refused(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main([*BASE, *args]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("version", ["0.11.1", "0.26.0", "0.33.0"])
@pytest.mark.parametrize("rank", ["2", "5"])
def test_a_node_rank_at_or_past_the_node_count_is_refused_naming_the_flag(
    version: str, rank: str, capsys: pytest.CaptureFixture[str]
) -> None:
    err = refused(capsys, "--engine-version", version, "--nnodes", "2", "--node-rank", rank, *HEAD)
    assert err.startswith("kvtop: error: --node-rank: ") and "0 … 1" in err and f"got {rank}" in err, err


@pytest.mark.parametrize("rank", ["0", "1"])
def test_each_node_of_two_plans(rank: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*BASE, "--engine-version", "0.33.0", "--nnodes", "2", "--node-rank", rank, *HEAD]) == 0


def test_one_node_leaves_the_rank_unchecked_as_vllm_does(capsys: pytest.CaptureFixture[str]) -> None:
    # the check sits under `if self.nnodes > 1` at every release read: --nnodes 1 --node-rank 5 starts
    assert main([*BASE, "--engine-version", "0.33.0", "--nnodes", "1", "--node-rank", "5", *HEAD]) == 0


@pytest.mark.parametrize("flag", ["--nnodes", "-n"])
def test_the_node_count_before_v0_11_1_is_refused_naming_the_release(
    flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    err = refused(capsys, "--engine-version", "0.11.0", flag, "2", "--node-rank", "1")
    assert err.startswith("kvtop: error: --nnodes: vLLM 0.11.0 has no --nnodes (first in v0.11.1"), err


def test_the_head_address_before_v0_11_1_is_refused_too(capsys: pytest.CaptureFixture[str]) -> None:
    # --master-addr came in the same PR (#23691): v0.11.0's parser has none, with or without --nnodes
    err = refused(capsys, "--engine-version", "0.10.2", *HEAD)
    assert err.startswith("kvtop: error: --master-addr: vLLM 0.10.2 has no --master-addr (first in v0.11.1"), err


def test_the_node_count_from_v0_11_1_plans(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*BASE, "--engine-version", "0.11.1", "--nnodes", "2", "--node-rank", "1", *HEAD]) == 0
