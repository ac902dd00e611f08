"""The cold compile's copy of the embedding table is the first pipeline stage's only, on either runner (review R3,
session 71: F2-1, F2-2; compile_benchmark.py, v2_graphs.py).

Only the first stage's forward embeds the ids: the V1 runner's models take the intermediate tensors on a later stage
(`if get_pp_group().is_first_rank`, qwen2.py:396 at v0.21.0), and the V2 runner sets `input_ids` None on every later
stage (`if not self.is_first_pp_rank: model_inputs["input_ids"] = None`, v1/worker/gpu/model_runner.py:1237-1240 at
v0.24.0). vLLM gives every worker the least stage's blocks (kv_cache_utils.py:2035-2048 at v0.21.0), so the copy
lowers the pool only where the first stage binds with it. Expected values from the config's sizes: Qwen2.5-7B's table
152,064 × 3,584 × 2 B = 1,089,994,752 B.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kvtop.cli import main
from kvtop.domain.calibration.terms import CalibratedFigures, PreloadEstimate, Term, TermEstimate

QWEN25_7B = "tests/data/configs/Qwen--Qwen2.5-7B-Instruct.json"
TABLE = 152_064 * 3_584 * 2
# issei's 2 × A40 PP 2 launch (`issei-vllm-exp-qwen2.5-7b-2xa40-pp2-v0250dev`): V2 runs a dense model from v0.25.0
ISSEI = "vllm serve x --pipeline-parallel-size 2 --disable-custom-all-reduce --no-enable-prefix-caching --no-async-scheduling"


def _plan(capsys: pytest.CaptureFixture[str], cache: str) -> dict[str, Any]:
    args = ["plan", "--json", "--no-calibration-store", "--model", QWEN25_7B, "--engine", "vllm", "--engine-version",
            "0.25.0", "--gpu", "A40", "--cmd", ISSEI, "--compile-cache", cache]  # fmt: skip
    assert main(args) == 0
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    return out


def test_v2_charges_the_first_stages_copy_under_pp(capsys: pytest.CaptureFixture[str]) -> None:
    """Cold, the graph term holds the table above V2's counted peak (the activation term: the compile ends before
    the compiled forward allocates, v2_graphs.compile_above_peak), said the first stage's; warm, none of it. The two
    stages hold the same weights (7 KiB apart), so cold the first binds, lower by that lift in whole pages (before
    session 71's F3 a PP launch read no copy: cold = warm)."""
    cold, warm = _plan(capsys, "cold"), _plan(capsys, "warm")
    graphs = next(term for term in cold["terms"] if term["term"] == "cuda_graphs")
    peak = next(term for term in cold["terms"] if term["term"] == "activation")["bytes"]
    lift = TABLE - peak
    assert graphs["bytes"] == lift and "the first stage only" in graphs["basis"]
    assert next(term for term in warm["terms"] if term["term"] == "cuda_graphs")["bytes"] == 0
    page = warm["ranks"][0]["kv_pool_bytes"] // warm["num_blocks"]
    drop = (warm["num_blocks"] - cold["num_blocks"]) * page
    assert 0 <= drop - lift < 2 * page  # the lift, floored to pages (and the 7 KiB the warm binding stage held more)


def test_a_later_stage_reads_the_runtime_memory_without_the_first_stages_part() -> None:
    figures = CalibratedFigures(non_kv_bytes=3_000, activation_bytes=2_000, first_stage_only_bytes=500,
                                first_stage_only_activation_bytes=500)  # fmt: skip
    later = figures.later_stage()
    assert (later.non_kv_bytes, later.activation_bytes, later.first_stage_only_bytes) == (2_500, 1_500, 0)
    # the part on another term (V2's copy on the graphs term) leaves the activation whole
    on_graphs = CalibratedFigures(non_kv_bytes=3_000, activation_bytes=2_000, first_stage_only_bytes=500).later_stage()
    assert (on_graphs.non_kv_bytes, on_graphs.activation_bytes) == (2_500, 2_000)
    assert CalibratedFigures(non_kv_bytes=3_000).later_stage().non_kv_bytes == 3_000


def test_v2s_copy_on_the_graphs_term_leaves_a_later_stages_activation_whole() -> None:
    """Final reader 2, MEDIUM 4: Qwen3-8B-AWQ on an L40S at v0.34.0, PP 2 — V2's cold copy (681,246,720 B, on the
    CUDA-graphs term) above an activation peak of 563,412,992 B; the later stage took the whole first-stage sum off
    the activation (−117,833,728 B, read by v0.34.0's extensible-cache margin). Now the activation stays whole and
    only non-KV loses the copy."""
    activation = TermEstimate(term=Term.ACTIVATION, label="activation", bytes=563_412_992, error_bytes=0,
                              source="calibrated", basis="by hand")  # fmt: skip
    graphs = TermEstimate(term=Term.CUDA_GRAPHS, label="graphs", bytes=681_246_720, error_bytes=0, source="calibrated",
                          basis="by hand", first_stage_only_bytes=681_246_720)  # fmt: skip
    later = PreloadEstimate(engine="vllm", terms=(activation, graphs)).figures().later_stage()
    assert later.activation_bytes == 563_412_992 and later.non_kv_bytes == 563_412_992
