"""`--engine-log` gives a log's token capacity to the engine it belongs to, and only to it: the KV
pools the log printed must be what that engine's model and layout give (a review found an
InternVL-8B log attached to a Llama-3-70B engine, and the waterfall calling the difference
"unexplained").

The node: the LMDeploy demo with its Llama-3-70B TurboMind engine alone (TP 4, int8 KV, 64-token
blocks). Its block is 64 tokens × 42,240 B = 2,703,360 B = 2.578 MiB: 80 layers × 2 KV heads per
rank × 128 dims × (K + V) × (1 B + the per-head fp16 scale and zero point, 4 B ÷ 128 dims).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from kvtop.commands.node_source import DemoSource
from kvtop.domain.capacity import CapacitySource
from kvtop.sources.scenario import scenario_dir
from tests.calibrated_figures import llama_70b_tokens
from tests.corpus_records import logged_bytes
from tests.data_paths import CASES

BLOCK_BYTES = 64 * 80 * 2 * 128 * 2 * (1 * 128 + 4) // 128
assert BLOCK_BYTES == 2_703_360


def one_engine_node(tmp_path: Path) -> Path:
    scenario = json.loads((scenario_dir() / "llama70b-tp4-lmdeploy.json").read_text())
    scenario["engines"] = scenario["engines"][:1]  # the Llama-3-70B server alone
    path = tmp_path / "lmdeploy-one.json"
    path.write_text(json.dumps(scenario))
    return path


def turbomind_log(tmp_path: Path, block_mib: str, blocks: int) -> Path:
    """The three BlockManager lines TurboMind prints (tests/data/cases/lmdeploy/…-3411…/engine.log)."""
    log = tmp_path / "engine.log"
    log.write_text(
        f"[TM][INFO] [BlockManager] block_size = {block_mib} MB\n"
        f"[TM][INFO] [BlockManager] max_block_count = {blocks}\n"
        f"[TM][INFO] [BlockManager] chunk_size = {blocks}\n"
    )
    return log


def test_a_log_of_the_engines_own_geometry_gives_its_capacity(tmp_path: Path) -> None:
    log = turbomind_log(tmp_path, f"{BLOCK_BYTES / (1 << 20):.3f}", 6_214)
    snapshot = DemoSource.open(str(one_engine_node(tmp_path)), engine_log=log).collect_at(0)
    (view,) = snapshot.engines
    assert snapshot.notice is None or "not attached" not in snapshot.notice
    assert {(r.capacity.actual_tokens, r.capacity.actual_source) for r in view.ranks if r.capacity} == {
        (6_214 * 64, CapacitySource.LOGGED)
    }


def test_a_log_of_another_model_is_not_attached_and_says_so(tmp_path: Path) -> None:
    log = CASES / "lmdeploy/lmdeploy-3411-internvl25-8b-a100-80g/engine.log"  # InternVL2.5-8B: 8 MB blocks
    snapshot = DemoSource.open(str(one_engine_node(tmp_path)), engine_log=log).collect_at(0)
    (view,) = snapshot.engines
    assert snapshot.notice is not None and "printed a KV block size that llama-3-70b does not give" in snapshot.notice
    assert {r.capacity.actual_source for r in view.ranks if r.capacity} == {CapacitySource.PREDICTED}


def test_a_log_beside_an_engine_that_reports_its_capacity_is_said_not_used() -> None:
    """An operator trial passed C09's log (two DeepSeek-V3.2 runs) to the SGLang demo, whose Llama-3-70B engine
    reports its own capacity on its endpoint: the log was dropped without a word. It is still not used (the
    engine's own figure is the live one), and the snapshot now says so."""
    log = CASES / "sglang/C09/engine.log"
    snapshot = DemoSource.open(str(scenario_dir() / "llama70b-tp8-sglang.json"), engine_log=log).collect_at(0)
    (view,) = snapshot.engines
    # what the engine reports is what SGLang sized from the free memory the demo's start measured (tests/sources/
    # test_demo.py: the 77.43 GiB before its weights a real TP 8 start printed), by SGLang's rule written out in
    # tests/calibrated_figures.py, the weights with the caching allocator's segment tails: 1,229,052 tokens a rank
    # (1,229,576 before the tails counted); never one of the pools the fed log printed
    live = llama_70b_tokens(8, pre_load=logged_bytes("file45518106035-grok-2-fp8-h100-tp8:free_before_load"))
    logged = {int(n) for n in re.findall(r"KV Cache is allocated\. #tokens: (\d+)", log.read_text())}
    assert logged == {975_424, 1_462_784} and live == 1_229_052
    assert {(r.capacity.actual_tokens, r.capacity.actual_source) for r in view.ranks if r.capacity} == {
        (live, CapacitySource.SIMULATED)  # the demo endpoint's: its scenario's figure
    }
    # named by the release its dates imply (its lines of 2025-10-07: SGLang 0.5.3 or older, '~0.5.3')
    # a demo node's figure is its scenario's: never "sglang:41000 reports its own token capacity" (session 67's walk)
    assert snapshot.notice == (
        f"the engine log {log} (SGLang ~0.5.3's) is not used: the demo simulates {view.engine.engine_id}'s token "
        "capacity (1,229,052)"
    )


def _unreachable(tmp_path: Path, name: str) -> Path:
    """A demo scenario whose engines' endpoints do not answer: the log's figure would be the one the engine states."""
    scenario = json.loads((scenario_dir() / name).read_text())
    for engine in scenario["engines"]:
        engine["endpoint"] = "unreachable"
    path = tmp_path / name
    path.write_text(json.dumps(scenario))
    return path


def test_the_notice_names_the_pool_part_the_log_printed(tmp_path: Path) -> None:
    """Which KV part differs is the check's typed `PoolPart`, not its name's spelling: SGLang's C01 printed
    `K size: 8.23 GB, V size: 8.23 GB` for 367,404 tokens (not what Llama-3-70B gives at TP 8): 'a KV K/V size';
    TensorRT-LLM's #4275 printed its whole pool (`Allocated 16.05 GiB for max tokens in paged KV cache`: Llama-3.1-8B, fp8 KV):
    'a KV size', never 'a KV KV size'."""
    sglang = DemoSource.open(str(_unreachable(tmp_path, "llama70b-tp8-sglang.json")),
                             engine_log=CASES / "sglang/C01/engine.log").collect_at(0)  # fmt: skip
    assert sglang.notice is not None and "printed a KV K/V size that llama-3-70b does not give" in sglang.notice
    trtllm = DemoSource.open(str(_unreachable(tmp_path, "llama70b-tp8-trtllm.json")),
                             engine_log=CASES / "trtllm/trtllm-4275-llama31-8b-fp8kv-rtx5090-v019/engine.log",
                             ).collect_at(0)  # fmt: skip
    assert trtllm.notice is not None and "printed a KV size that llama-3-70b does not give" in trtllm.notice
