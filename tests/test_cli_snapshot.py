"""`kvtop snapshot` as a user runs it: the JSON contract, every demo scenario, the tables, and
where `--demo` may be written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kvtop.cli import main
from kvtop.sources.scenario import scenario_names
from tests.calibrated_figures import GIB, demo_llama_70b_tokens, demo_sglang_h100_pre_load_bytes
from tests.corpus_records import logged_bytes

REPO = Path(__file__).resolve().parents[1]
GPU_KEYS = {
    "index",
    "uuid",
    "name",
    "total_bytes",
    "used_bytes",
    "reserved_bytes",
    "free_bytes",
    "state",
    "processes",
}
RANK_KEYS = {"gpu_index", "pid", "rank", "observed", "predicted", "unexplained_bytes", "capacity"}


def snapshot_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(list(args)) == 0
    return json.loads(capsys.readouterr().out)


def test_demo_json_contract_in_a_fresh_process() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "kvtop", "snapshot", "--demo", "--json"],
        capture_output=True, text=True, timeout=60, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert {"source", "notice", "gpus", "engines"} <= set(out)
    assert out["source"] == "demo:llama70b-tp8-sglang" and out["notice"] is None
    assert len(out["gpus"]) == 8 and all(set(gpu) >= GPU_KEYS for gpu in out["gpus"])
    gpu = out["gpus"][0]
    # the demo's driver reserve is nvidia-smi's total less CUDA's H100 total as a real start printed it (79.19 GiB,
    # vLLM 0.19.0: llmd-v019-llama-3.3-70b-fp8dyn-tp4; examples/measured/starts.json), not kvtop's fit
    assert gpu["total_bytes"] == 81_559 * (1 << 20)
    h100_total = logged_bytes("llmd-v019-llama-3.3-70b-fp8dyn-tp4:cuda_total")
    assert gpu["reserved_bytes"] == 81_559 * (1 << 20) - h100_total == 491_194_941
    assert gpu["used_bytes"] + gpu["reserved_bytes"] + gpu["free_bytes"] == gpu["total_bytes"]
    assert (
        gpu["processes"][0]["title"] == "sglang::scheduler_TP0"
        and gpu["processes"][0]["role"] == "engine_worker"
    )
    [engine] = out["engines"]
    assert {"kind", "model", "layout", "ranks"} <= set(engine)
    assert (engine["kind"], engine["model"], engine["layout"]["tp"]) == (
        "sglang",
        "meta-llama/Meta-Llama-3-70B-Instruct",
        8,
    )
    # SGLang 0.5.9's budget by hand (docs/engines/sglang.md §4-§5; tests/calibrated_figures.py, from the committed
    # fits): pre-load = CUDA's H100 total less its calibrated context c + d × log2 8 GiB; less the weights
    # 17,644,929,024 B (the checkpoint's 17,640,734,720 and SGLang's float32 rope cos/sin cache, 8,192 positions × 128
    # dims × 4 B = 4,194,304) and the reserve pre-load × (1 − 0.818). At the fits of da524f1c (79.18806 GiB, c =
    # 0.570448, d = 0.521322): 82,735,722,401 − 17,644,929,024 − 15,057,901,476.98 = 50,032,891,900 B // 40,960 B =
    # 1,221,506 tokens
    clean = demo_llama_70b_tokens(8)
    assert engine["predicted"]["token_capacity"] == clean
    assert len(engine["ranks"]) == 8 and all(set(rank) >= RANK_KEYS for rank in engine["ranks"])
    rank = engine["ranks"][0]
    # what SGLang measured and sized (test_demo: 77.43 GiB free before its weights, as a real TP 8 start on an H100
    # printed it): 1,229,052 tokens (1,229,576 before the allocator's segment tails counted), 8,070 above kvtop's prediction at the fits of da524f1c, the gap the waterfall
    # leaves unexplained
    assert (
        rank["observed"]["token_capacity"] == 1_229_052 and rank["predicted"]["kv_bytes_per_token"] == 40_960
    )
    assert [(t["cause"], t["tokens"]) for t in rank["capacity"]["terms"]] == [("engine_vs_prediction", 1_229_052 - clean)]
    # the demo worker sits a few hundred MiB below its predicted resident bytes (a larger pool, 8,070 × 40,960 B,
    # but 0.37 GiB less context than kvtop's fit), less than the graphs + activations reserve it has not claimed
    # (free memory, not a mystery): no byte is unexplained
    gap = rank["observed"]["process_bytes"] - rank["predicted_resident_bytes"]
    assert -rank["predicted"]["reserve_bytes"] < gap < 0 and rank["unexplained_bytes"] == 0


@pytest.mark.parametrize("name", scenario_names())
def test_every_scenario_prints_json(capsys: pytest.CaptureFixture[str], name: str) -> None:
    out = snapshot_json(capsys, "snapshot", "--demo", name, "--json")
    assert out["source"] == f"demo:{name}"
    assert out["engines"] and all(engine["ranks"] for engine in out["engines"])
    json.dumps(out)  # plain JSON all the way down


def test_lost_gpu_is_a_state_with_nulls_not_zeros(capsys: pytest.CaptureFixture[str]) -> None:
    out = snapshot_json(capsys, "snapshot", "--demo", "gpu5-lost", "--json")
    lost = out["gpus"][5]
    assert lost["state"] == "lost" and lost["used_bytes"] is None and "Xid 79" in lost["state_message"]
    assert [engine["kind"] for engine in out["engines"]] == ["sglang", "vllm"]


def test_demo_may_be_given_before_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        snapshot_json(capsys, "--demo", "orphan-vllm-worker", "snapshot", "--json")["source"]
        == "demo:orphan-vllm-worker"
    )
    assert (
        snapshot_json(capsys, "--demo", "default", "snapshot", "--json")["source"]
        == "demo:llama70b-tp8-sglang"
    )


def test_human_tables_show_gpus_processes_and_ranks(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["snapshot", "--demo", "llama70b-tp8-foreign-gpu3"]) == 0
    text = capsys.readouterr().out
    assert "NVIDIA H100 80GB HBM3" in text and "co-tenant" in text and "python (ada)" in text
    clean = demo_llama_70b_tokens(8)
    cost = clean - demo_llama_70b_tokens(8, demo_sglang_h100_pre_load_bytes(8) - 6 * GIB)
    assert "unexplained GiB" in text and f"{clean:,}" in text and "1,100,391" in text
    row = next(line for line in text.splitlines() if line.lstrip().startswith("TP3 "))
    # tokens clean (kvtop's prediction), tokens now (what SGLang sized, test_demo), vs clean (the co-tenant's
    # −128,661 and the unnamed +8,071 gap at the fits of da524f1c), and the cause that costs the most, on every rank
    assert row.split()[6:9] == [f"{clean:,}", "1,100,391", f"−{clean - 1_100_391:,}"]
    assert row.endswith(f"other processes −{cost:,} (GPU 3, pid 4242)")
    assert row.split()[1:3] == ["3", "41013"]
    # observed and predicted as NVML counts the worker (the TUI's "= worker" row): they differ by
    # the unexplained bytes, here none (the resident figure, 79.65 GiB, holds the context too)
    observed, predicted, unexplained = (float(cell) for cell in row.split()[3:6])
    assert predicted == 73.19 and unexplained == 0.0
    assert abs(observed - predicted) < 0.1  # the demo's allocator drift, within the reserve


def test_capacity_waterfall_sums_to_what_the_engine_holds(capsys: pytest.CaptureFixture[str]) -> None:
    out = snapshot_json(capsys, "snapshot", "--demo", "llama70b-tp8-foreign-gpu3", "--json")
    [engine] = out["engines"]
    clean = demo_llama_70b_tokens(8)
    squeezed = demo_llama_70b_tokens(8, demo_sglang_h100_pre_load_bytes(8) - 6 * GIB)
    assert 128_660 <= clean - squeezed <= 128_661  # 128,660.3 by two floors
    for rank in engine["ranks"]:
        capacity = rank["capacity"]
        assert capacity["clean_tokens"] == engine["plan"]["token_capacity"] == clean
        # the engine's predicted is the explained state, as its ranks' (the co-tenant applied)
        assert engine["predicted"]["token_capacity"] == rank["predicted"]["token_capacity"] == squeezed
        # what SGLang sized from what it measured (test_demo: 77.43 GiB free less GPU 3's 6 GiB)
        assert capacity["actual_tokens"] == rank["observed"]["token_capacity"] == 1_100_391
        assert capacity["actual_source"] == "simulated"  # a demo's figure is its scenario's, never live
        # SGLang sizes every rank by the least free GPU: GPU 3's 6 GiB co-tenant costs each rank
        # 6 GiB × 0.818 ÷ 40,960 B = 128,660.3 tokens of budget: at the fits of da524f1c the floors of the clean
        # 1,221,506.15 and the squeezed 1,092,845.87 tokens (50,032,891,900 and 44,762,967,027 B ÷ 40,960 B) differ by
        # 128,661. What is left is the gap between kvtop's explained pool and what SGLang sized from what it measured,
        # 1,100,916 − 1,092,845 = 8,071 tokens there (8,071 × 40,960 B more pool than explained), named by no cause
        assert [(t["cause"], t["tokens"], t["bytes"], t["gpu_index"], t["pid"]) for t in capacity["terms"]] == [
            ("other_processes", squeezed - clean, 6 * (1 << 30), 3, 4242),
            ("engine_vs_prediction", 1_100_391 - squeezed, -(1_100_391 - squeezed) * 40_960, None, None),
        ]
        assert capacity["clean_tokens"] + sum(t["tokens"] for t in capacity["terms"]) == capacity["actual_tokens"]


def test_unknown_scenario_is_one_clear_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["snapshot", "--demo", "no-such-node"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kvtop: error: --demo: no demo scenario 'no-such-node'") and err.count("\n") == 1


def test_json_carries_nvmls_vitals(capsys) -> None:
    """The demo's simulated vitals (a demo node: its own figures) under NVML's names and units."""
    import json

    from kvtop.cli import main

    assert main(["snapshot", "--demo", "llama70b-tp8-sglang", "--json"]) == 0
    gpu = json.loads(capsys.readouterr().out)["gpus"][0]
    assert {"temperature_c", "power_mw", "power_limit_mw", "sm_clock_mhz"} <= set(gpu)
    assert gpu["power_limit_mw"] == 700_000 and 0 < gpu["power_mw"] <= gpu["power_limit_mw"]  # an H100's 700 W


def test_a_worker_below_its_prediction_reads_with_the_one_minus() -> None:
    """The llama.cpp demo's worker holds less than kvtop predicts (its assumed context is larger than the start
    measured: tests/engines/llamacpp/test_demo.py): the table's 'unexplained GiB' is negative, written as every size
    formatter writes one (kvtop/domain/wording.py `figure`: '−0.25', U+2212), never an ASCII '-0.25' beside the
    'vs clean' column's '−'. Expected: the rank's bytes ÷ 2**30 to two decimals, the hyphen swapped by hand."""
    from kvtop.commands.node_source import DemoSource
    from kvtop.commands.render_snapshot import snapshot_text
    from kvtop.sources.scenario import load_scenario

    snapshot = DemoSource(load_scenario("llamacpp-llama31-8b")).collect_at(0)
    ((rank,),) = [view.ranks for view in snapshot.engines]
    gap = rank.unexplained_bytes
    assert gap is not None and gap < -(GIB // 100)
    (row,) = [line for line in snapshot_text(snapshot).splitlines() if line.lstrip().startswith("TP0 ")]
    assert f"{gap / 2**30:.2f}".replace("-", "−") in row.split() and "-" not in row
