"""vLLM's first FULL CUDA-graph capture, sampled at long context, and what it leaves in a hybrid's graph estimate
(docs/engines/vllm.md §4.4.1).

`profile_cudagraph_memory` (v1/worker/gpu_model_runner.py) captures each mode's two largest sizes and reads the free
memory before and after each; the first FULL capture runs its warmups and its capture with every request at
profile_seq_lens = min(max_model_len, max_num_batched_tokens // its token count) tokens of context ("used to profile
attention workspace that scales with context length"), and what that step leaves in the caching allocator is charged
as graph memory. kvtop's graph fit counts graphs × layers (`calibration.py`), not that step: on a Mamba / GDN hybrid
with prefix caching (mamba_cache_mode 'align') the step's transient is the largest part of the estimate kvtop
leaves out (vllm#50780), a named state here, not a figure.
"""

from __future__ import annotations

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.versions import era_for
from kvtop.domain.engines.vllm.hybrid import mamba_prefix_caching
from kvtop.domain.engines.vllm.profile_run import (
    GRAPHS_CHARGED,
    batch_limits,
    graph_counts,
    largest_full_size,
)
from kvtop.domain.engines.vllm.runner_eras import runs_v2

# The first FULL capture's context (`profile_seq_lens=min(self.max_model_len, self.max_num_tokens //
# desc.num_tokens) if mode == CUDAGraphMode.FULL and i == 0`), read in every wheel from the first release that
# charges the estimate: gpu_model_runner.py:5995-6001 at v0.20.0 and v0.20.1, :6095 at v0.21.0, :6314 at v0.22.0,
# :6446 at v0.23.0, :6517-6523 at v0.24.0, :6666 at v0.26.0, :6735 at v0.27.1, :6870 at v0.28.0, :6823 at v0.29.0;
# so the sample stands wherever the estimate is charged (`profile_run.GRAPHS_CHARGED`, from v0.20.0)
# What the corpus shows of the hybrid's step (docs/engines/vllm.md §4.4.1): vLLM's code does not say its size
HYBRID_SAMPLE_SEEN = (
    "kvtop's corpus: 1.75–2.2 GiB less KV than planned on four such starts at v0.24.0–v0.27.1, each with an fp8 KV "
    "cache, one printing a 3.51 GiB estimate (docs/engines/vllm.md §4.4.1); the same 27B hybrid without prefix caching "
    "(bf16 KV) printed 1.06 GiB"
)


def _v1_sampled(inputs: CalibrationInputs) -> bool:
    """Whether the release charges the estimate and the V1 runner makes it: V2's `profile_cudagraph_memory`
    (v1/worker/gpu/cudagraph_utils.py:718 at v0.29.0) runs `capture_model` on `InputBatch.make_dummy`'s seq_lens
    (num_tokens // num_reqs, input_batch.py:136-146), no profile_seq_lens (0 before v0.29.0: model_runner.py:684-686
    at v0.24.0)."""
    model = inputs.model
    return era_for(GRAPHS_CHARGED, inputs.version).value and not (model is not None and runs_v2(inputs.version, model,
                                                                                       inputs.settings))  # fmt: skip


def full_capture_sample(inputs: CalibrationInputs) -> tuple[int, int] | None:
    """(requests or tokens of the first FULL graph, context tokens each) of the first FULL capture: its token count
    N (`profile_run.largest_full_size`) and min(max_model_len, max_num_batched_tokens // N); None where the release
    does not charge it, the V2 runner makes it, or no FULL graph is captured (or kvtop keys the sizes otherwise)."""
    if not _v1_sampled(inputs):
        return None
    largest = largest_full_size(inputs)
    if largest is None:
        return None
    return largest, min(inputs.context_length, batch_limits(inputs)[0] // largest)


def hybrid_sampled(inputs: CalibrationInputs) -> bool:
    """Whether a Mamba / GDN hybrid runs with prefix caching ('align') and a charged first FULL capture."""
    model = inputs.model
    if model is None or model.state is None or model.attention_free or not _v1_sampled(inputs):
        return False
    if graph_counts(inputs)[1] == 0:
        return False
    return mamba_prefix_caching(model, inputs.settings, inputs.version)


def full_sample_words(inputs: CalibrationInputs) -> str:
    """The CUDA-graph term's words for the first FULL capture: its context by the code, and for a hybrid with prefix
    caching the transient kvtop does not model; '' where the release charges none or the V2 runner makes it."""
    if not _v1_sampled(inputs) or graph_counts(inputs)[1] == 0:
        return ""
    sample = full_capture_sample(inputs)
    shape = (f"its {sample[0]:,}-token graph at {sample[1]:,} tokens of context a request" if sample is not None
             else "its largest graph at max_num_batched_tokens ÷ its tokens of context a request")  # keyed sizes
    words = f"the first FULL capture runs {shape} (profile_seq_lens, gpu_model_runner.py), whose transient is not modelled"
    if hybrid_sampled(inputs):
        words += ("; on a Mamba / GDN hybrid with prefix caching (mamba_cache_mode 'align') that transient is charged "
                  f"as graph memory (vllm#50780) and the plan's KV may be high by it ({HYBRID_SAMPLE_SEEN})")  # fmt: skip
    return words
