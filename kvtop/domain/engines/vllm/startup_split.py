"""What the V1 startup line's figures hold, by release: the split vLLM prints of the memory it charges before the KV
cache (docs/engines/vllm.md §2, "the startup line's split"), read back into kvtop's terms.

The line: 'Free memory on device (F/T GiB) on startup. Desired GPU memory utilization is (u, R GiB). Actual usage is
… and G GiB for CUDAGraph memory. … Current kv cache memory in use is K GiB.'

Up to v0.26.x ("apart"): 'W GiB for weight, A GiB for peak activation, N GiB for non-torch memory': A is torch's peak
increase over the profile (gpu_worker.py:526 at v0.26.0), N the growth of non-torch memory from the init snapshot;
the CUDA-graph estimate E is printed on its own ('Estimated CUDA graph memory' at v0.18-v0.19, 'CUDA graph
pool memory: G (actual), E (estimated)' later) and K = R − W − A − N − E, E 0 where not charged (the default
from v0.20.0: VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS, envs.py:1724-1726 at v0.20.0; "0" at v0.19.0).

From v0.27.0 ("consumed"): 'C GiB for consumed memory (weights + non-torch), A GiB for peak activation': C is the
drop of free memory from the init snapshot to after the profile (utils/mem_utils.py:317-320 at v0.27.1), so it holds
the torch buffers the profile leaves allocated (the fused MoE's workspace, `moe_workspace.py`); A is the transient
above them (`transient_peak_headroom`, :323-325) plus the charged graph estimate
(`peak_activation_memory = transient_peak_headroom + cudagraph_memory_estimate_applied`, gpu_worker.py:527-529), and
K = R − C − A (:544-548). In both eras G is the pool the capture took after the KV cache was sized
(`cuda_graph_memory_bytes = capture_model()`, :715-717, printed at :778): not the estimate, and not charged.

The estimate is printed where the release charges it: 'CUDA graph pool memory: … E GiB (estimated)' (:720-733) and
'The current --gpu-memory-utilization=u is equivalent to --gpu-memory-utilization=e without CUDA graph memory
profiling', e = round(u − E ÷ T, 4) (:568-592), so E = (u − e) × T to ±0.00005 × T.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.engines.vllm.moe_workspace import kept_workspace

EQUIVALENT_HALF_STEP = 0.00005  # the equivalent utilization is printed rounded to 4 decimals
SPLIT_ERAS: Eras[str] = Eras((
    Era("", "apart", "gpu_worker.py:526 at v0.26.0: peak activation = torch_peak_increase; non-torch memory printed "
                     "apart; the graph estimate printed on its own line"),
    Era("0.27.0", "consumed", "gpu_worker.py:527-529, 775 at v0.27.0 and v0.27.1: consumed memory (weights + "
                              "non-torch) = free-memory drop; peak activation = transient headroom + graph estimate"),
))  # fmt: skip


class ChargedTerms(BaseModel):
    """The pre-KV charge of one start in kvtop's terms (bytes): non-torch growth, torch's profile peak increase
    (persistent profile buffers included), and the CUDA-graph estimate charged to the budget."""

    model_config = ConfigDict(frozen=True)

    non_torch: int
    activation: int
    graph_estimate: int


def graph_estimate_from_equivalence(
    utilization: float, equivalent: float, total_bytes: int
) -> tuple[int, int]:
    """(low, high) bytes of the CUDA-graph estimate a start charged, from its 'is equivalent to
    --gpu-memory-utilization=e' line: E = (u − e) × T, e printed to 4 decimals."""
    low = (utilization - equivalent - EQUIVALENT_HALF_STEP) * total_bytes
    high = (utilization - equivalent + EQUIVALENT_HALF_STEP) * total_bytes
    return max(0, round(low)), max(0, round(high))


def charged_terms(version: ResolvedVersion, *, weights: int, printed_non_torch_or_consumed: int,
                  printed_activation: int, graph_estimate: int, kept_buffers: int) -> ChargedTerms:  # fmt: skip
    """kvtop's terms from the startup line's figures. `printed_non_torch_or_consumed` is the non-torch figure up to
    v0.26 and the consumed figure (weights inside) from v0.27; `graph_estimate` the charged estimate (0 where not
    charged); `kept_buffers` the torch bytes the profile leaves allocated (`moe_workspace.py`), which v0.27+ prints
    inside the consumed figure and earlier inside the peak activation."""
    if SPLIT_ERAS.at(version) == "apart":
        return ChargedTerms(non_torch=printed_non_torch_or_consumed, activation=printed_activation,
                            graph_estimate=graph_estimate)  # fmt: skip
    return ChargedTerms(non_torch=printed_non_torch_or_consumed - weights - kept_buffers,
                        activation=printed_activation - graph_estimate + kept_buffers, graph_estimate=graph_estimate)  # fmt: skip


def logged_terms(inputs: CalibrationInputs, figures: Mapping[str, int]) -> dict[str, int | None]:
    """A corpus record's activation, non-torch and CUDA-graph figures (bytes) in kvtop's terms, for the fits
    (benchmarks/calibration/evaluate.py `observed`): unchanged up to v0.26; from v0.27 the fused MoE's workspace moves
    from the consumed figure (the record's `non_torch` = consumed − weights) back to the activation, the charged
    estimate (`cuda_graph_estimate`, where the log printed it) comes out of the activation and is the graph term, and
    without it neither the activation nor the graph term is measured (None): the printed CUDAGraph figure is the pool
    captured after the KV cache. An MoE whose kept workspace kvtop does not size (`moe_workspace.kept_workspace`, not
    modelled) leaves the activation and non-torch figures not measured apart (None), never moved by 0."""
    found: dict[str, int | None] = {name: figures[name] for name in ("activation", "non_torch", "cuda_graphs")
                                    if name in figures}  # fmt: skip
    if SPLIT_ERAS.at(inputs.version) == "apart":
        return found
    workspace = kept_workspace(inputs)
    sized = workspace.modelled or inputs.model is None or inputs.model.moe is None  # a dense model keeps none
    kept = workspace.bytes if sized else None
    estimate = figures.get("cuda_graph_estimate")
    if "non_torch" in figures:
        found["non_torch"] = None if kept is None else figures["non_torch"] - kept
    if "activation" in figures:
        found["activation"] = None if estimate is None or kept is None else figures["activation"] - estimate + kept
    found["cuda_graphs"] = estimate
    return found
