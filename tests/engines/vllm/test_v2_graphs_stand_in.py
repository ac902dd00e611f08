"""Before v0.29.0 the memory kvtop keeps beside vLLM V2's profile is the V1 runner's graph figure read at vLLM's 256-seq
default grid, whatever the launch's max_num_seqs (`v2_graphs.stand_in`, docs/engines/vllm.md §9 "Not with
max_num_seqs").

V2 captures its graphs after the KV cache (engine/core.py:296, :329, :331 at v0.28.0), so nothing graph-sized is in its
budget; what the figure stands for follows the torch.compile cache, not max_num_seqs. Expected values: the graph count
of vLLM's own profile line at 256 seqs ("Profiling CUDA graph memory: PIECEWISE=51 (largest=512), FULL=35
(largest=256)") × Qwen3-8B's 36 layers through the committed graph fit; the kuotunyu/vllm-single-gpu-slo-lab starts
at v0.28.0 on a WSL2 RTX 4090 (planned as `plan --wsl2`: the record's host) (docs/decisions/0004-w1-matrix-results.md at 2c7a3f72: Qwen3-8B-FP8 at 64 seqs,
0.90, 'Model loading took 8.8 GiB', 83,024 tokens).
"""

from __future__ import annotations

from benchmarks.calibration.corpus import load
from kvtop.domain.calibration.estimate import CapacityPlan, planned_capacity
from kvtop.domain.calibration.terms import Term, TermEstimate
from kvtop.domain.engines.vllm import calibration as vllm
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.wording import GIB

RECORDS = {record.id: record for record in load("vllm")}
FP8_64_SEQS = "kuotunyu-slolab-qwen3-8b-fp8-rtx4090-wsl2-w1-u090-v0280"
FIGURE_256 = max(vllm.FITS["vllm.cuda_graphs"].predict(((1 + 50 + 34) * 36 / 1000,)), 0)


def _plan(seqs: int, version: str = "0.28.0") -> CapacityPlan:
    record = RECORDS[FP8_64_SEQS]
    assert record.model is not None
    settings = parse_flags("vllm", ["--engine-version", version, "--max-model-len", "4096", "--gpu-memory-utilization",
                                    "0.90", "--max-num-seqs", str(seqs)])  # fmt: skip
    return planned_capacity(record.model, settings, gpu_total_bytes=gpu_total_bytes("RTX4090"), gpu_name="RTX4090",
                            measured=record.host_measured(weights_bytes=round(8.8 * GIB)))  # fmt: skip


def _graph_term(seqs: int, version: str = "0.28.0") -> TermEstimate:
    return {t.term: t for t in _plan(seqs, version).estimate.terms}[Term.CUDA_GRAPHS]


def _beside(seqs: int, version: str = "0.28.0") -> int:
    return _graph_term(seqs, version).bytes


# V2's counted peak at the launch's 2,048 tokens: the forward (Qwen3-8B, hidden 4,096, intermediate 12,288, bf16
# activations: gate-up and activation outputs, residual and normed input), which leads the sampler at every seqs here;
# the figure hides under it (session 66: v2_graphs.compile_above_peak)
FORWARD_2048 = 2_048 * (3 * 12_288 + 4_096) * 2 + 2 * 2_048 * 4_096 * 2


# Session 70: where it is read, the charge is the cold compile's copy of the embedding table (compile_benchmark.py),
# Qwen3-8B's 151,936 × 4,096 × 2 B, which no seqs size either; the figure's error stays (the next test)
TABLE_COPY = 151_936 * 4_096 * 2


def test_the_charge_is_the_table_copy_whatever_the_seqs() -> None:
    for seqs in (8, 40, 64, 128, 256):
        assert abs(_beside(seqs) - (TABLE_COPY - FORWARD_2048)) < 2**20


def test_the_term_is_the_one_of_the_launch_planned_at_256_seqs() -> None:
    """Bytes, error and the fit's feature values are those a second plan of the same launch at --max-num-seqs 256
    gives: the fit is read at one launch, not its figure rescaled."""
    at_256 = _graph_term(256)
    for seqs in (8, 40, 64, 128):
        term = _graph_term(seqs)
        assert (term.bytes, term.error_bytes, term.values) == (at_256.bytes, at_256.error_bytes, at_256.values)
        assert "256-seq default grid" in term.basis
    assert "256-seq default grid" not in at_256.basis


def test_from_v0_29_the_measured_graphs_still_follow_the_launch() -> None:
    """V2's own estimate from v0.29.0 is of the graphs it captures, which the launch's seqs size: not read at 256."""
    assert _beside(64, "0.29.0") < _beside(256, "0.29.0")


def test_the_64_seq_start_plans_near_its_log() -> None:
    """83,024 tokens logged; the figure at the launch's 64-seq grid (1 + 18 + 10 graphs) planned +5.8 % fully blind."""
    plan = _plan(64)
    assert plan.token_capacity_min <= 83_024 <= plan.token_capacity_max
    assert abs(plan.ledger.token_capacity / 83_024 - 1) < 0.04
