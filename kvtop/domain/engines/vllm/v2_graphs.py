"""Whether vLLM's CUDA-graph estimate is the V2 model runner's placeholder 0 (docs/engines/vllm.md §2).

`Worker.determine_available_memory` (v1/worker/gpu_worker.py) takes `model_runner.profile_cudagraph_memory()` off
the KV budget from v0.20.0 (PR #38284). The V1 runner (gpu_model_runner.py) captures graphs to measure it; the V2
runner (v1/worker/gpu/model_runner.py) had a placeholder from vllm#36520, `profile_cudagraph_memory` returning 0
("It is TBD whether we keep this API or not"), so under V2 nothing was charged and the graphs were captured after
the KV cache, outside the budget (vllm#49224: a dense Llama-3.1-70B FP8 at TP 8 that V1 gave ≈ 9.5 GiB OOMs in
`capture_model`). vllm#53306 (merged 2026-08-24; "CUDA graph memory profiling ... used for KV cache
auto-sizing" in v0.29.0's release notes, after v0.28.0's 2026-08-26 tag) made V2 capture into a throwaway pool and
measure: `profile_cudagraph_memory` in v1/worker/gpu/cudagraph_utils.py, read at v0.33.0. Which runner runs is the
release's and the model's (`eras.runs_v2`: from v0.25.0 V2 for models without experts or of a listed class, but
hybrids and attention-free models stay on V1 until v0.29.0; vllm#49224 names v0.25.1).

From v0.29.0 the estimate is measured after the profile and taken off beside it: `available = requested −
non_kv_cache_memory − cudagraph_memory_estimate_applied` (v1/worker/gpu_worker.py:606-610 at v0.29.0, :621-625 at
v0.30.0, :753-757 at v0.33.0), and V2's `profile_run` is the one of v0.28.0 (the diff of v1/worker/gpu/model_runner.py
between the two releases drops an encoder-only early return only). What V2's profile held beside weights, activation
and non-torch memory before v0.29.0 is therefore still in `non_kv_cache_memory`, and the measured graphs come on top
(`v2_beside_kept`).
"""

from __future__ import annotations

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.terms import TermEstimate
from kvtop.domain.engines.versions import Era, Eras
from kvtop.domain.engines.vllm.eras import runs_v2

V2_GRAPHS_MEASURED: Eras[bool] = Eras(
    (
        Era("", False, "vllm#36520: the V2 runner's profile_cudagraph_memory returns 0"),
        Era(
            "0.29.0",
            True,
            "vllm#53306 (merged 2026-08-24, first in v0.29.0): the V2 runner captures and measures",
        ),
    )
)


def v2_placeholder(inputs: CalibrationInputs) -> str | None:
    """Why the release charges no CUDA-graph estimate (the V2 runner runs and its estimate is the placeholder 0), and
    what kvtop charges instead; None where the estimate is measured (the V1 runner, or V2 from v0.29.0) or the model,
    so the runner, is not known.

    The V2 starts in the corpus (Qwen3-32B PP 2 at v0.27.1, `model_runner.py` in its lines and no "Estimated CUDA
    graph memory"; Qwen3-14B and its AWQ on an L40S and 2 × L4 at v0.28.0) leave beside weights and KV about what the
    V1 runner's activation and graph estimate give (the L40S BF16 start 1.80 GiB at 0.92 of 44.45 GiB, kvtop's V1
    form 0.80 + 0.96): charging 0 plans them +2.5 % to +8.8 % over. What V2's profile holds there is not
    attributed, so kvtop keeps the V1 runner's graph figure as that memory and says so."""
    model = inputs.model
    if model is None or not runs_v2(inputs.version, model):
        return None
    if V2_GRAPHS_MEASURED.at(inputs.version):
        return None
    return (
        f"vLLM {inputs.version.label} runs this model on the V2 model runner, whose profile_cudagraph_memory returns "
        "0 before v0.29.0 (vllm#49224, measured from #53306): no graph estimate is charged, yet its starts leave "
        "beside weights and KV about what the V1 runner's activation and graph estimate give; that figure is kept "
        "here (not attributed: V2's activation peak is counted apart, v2_profile.py)"
    )


def v2_beside_kept(inputs: CalibrationInputs) -> str | None:
    """Why the V2 runner's memory beside its profile is charged beside its measured graph estimate (v0.29.0 on);
    None where V2 does not run or its estimate is still the placeholder (`v2_placeholder` says that case)."""
    model = inputs.model
    if model is None or not runs_v2(inputs.version, model) or not V2_GRAPHS_MEASURED.at(inputs.version):
        return None
    return (
        f"vLLM {inputs.version.label} runs this model on the V2 model runner, which measures its CUDA graphs after the "
        "profile and takes them off beside the profile's non-KV memory (gpu_worker.py:606-610 at v0.29.0): what V2's "
        "profile held beside weights, activation and non-torch memory before v0.29.0 (the V1 runner's graph figure "
        "stands for it, not attributed) is kept, and the measured graphs (the V1 runner's form) come on top"
    )


def with_v2_beside(graphs: TermEstimate, inputs: CalibrationInputs) -> TermEstimate:
    """The graph term with V2's memory beside its profile added where the release measures V2's graphs
    (`v2_beside_kept`): twice the V1 runner's graph figure, for the measured graphs and for the memory beside the
    profile that the same figure stands in for. Both are the one fit read at the one launch, so where it errs, both
    err alike: the error of 2 × the figure is 2 × its error (the errors add), not the root of their squares, which
    holds for independent errors only."""
    why = v2_beside_kept(inputs)
    if why is None:
        return graphs
    return graphs.model_copy(update={
        "label": "vLLM V2's CUDA-graph estimate and the memory beside its profile",
        "bytes": 2 * graphs.bytes, "error_bytes": 2 * graphs.error_bytes,
        "basis": f"{graphs.basis}; {why}",
    })  # fmt: skip
