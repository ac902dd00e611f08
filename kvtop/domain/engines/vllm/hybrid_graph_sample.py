"""vLLM's first FULL CUDA-graph capture, sampled at long context, and what it leaves in a hybrid's graph estimate
(docs/engines/vllm.md §4.4.1).

`profile_cudagraph_memory` (v1/worker/gpu_model_runner.py) captures each mode's two largest sizes and reads the free
memory before and after each; the first FULL capture runs its warmups and its capture with every request at
profile_seq_lens = min(max_model_len, max_num_batched_tokens // its token count) tokens of context ("used to profile
attention workspace that scales with context length"), and what that step leaves in the caching allocator is charged
as graph memory. kvtop's graph fit counts graphs × layers (`calibration.py`), not that step: on a Mamba / GDN hybrid
with prefix caching (mamba_cache_mode 'align') the step's transient is the largest part of the estimate kvtop
leaves out (vllm#50780). The op that holds it is not found (session 69 and 70), so it is not modelled in the centre;
where it was seen (a hybrid with prefix caching at v0.24.0 – v0.27.x) the plan's interval carries the size it was seen
at (`hybrid_sample_widening`): not the transient measured alone but what vLLM's estimate took off the KV budget beyond
kvtop's graph term on the start that prints both (`HYBRID_SAMPLE_BYTES`, part of it the estimate's excess over the
pool it measured), scaled by the capture's tokens: vllm#50780 calls it "mnbt-linear" (max_num_batched_tokens), and the
capture's tokens are max_num_batched_tokens on every start seen. It only ever takes from KV, so from session 71 only the
interval's low end carries it (the term's error above its figure, `TermEstimate.raise_only_bytes`): the high end is
the plan's without it.
"""

from __future__ import annotations

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.versions import Era, Eras, era_for
from kvtop.domain.engines.vllm.hybrid import mamba_prefix_caching
from kvtop.domain.engines.vllm.profile_run import (
    GRAPHS_CHARGED,
    batch_limits,
    graph_counts,
    largest_full_size,
)
from kvtop.domain.engines.vllm.runner_eras import runs_v2
from kvtop.domain.wording import GIB, gib

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

# The transient's size as measured: fentz26's v0.27.1 start (2 × RTX 5090, TP 2, fp8 KV, prefix caching, Qwen3.8-27B-FP8,
# `fentz26-qwen3.8-27b-uncensored-fp8-2xrtx5090-v0271-tp2-fp8kv-pc-len131072`) prints 'Estimated CUDA graph memory:
# 3.51 GiB' where kvtop's graph term, which counts the graphs and not the sample, charges 1.30 GiB: 2.21 GiB, the
# largest of the starts seen (the club-3090 v0.24.0 starts leave 1.75 / 1.78 GiB less KV than planned). It is what the
# estimate charged beyond kvtop's graph term, not the transient alone: the same log prints 'CUDA graph pool memory:
# 2.99 GiB (actual), 3.51 GiB (estimated)', so about 0.52 GiB of the 2.21 is the estimate's excess over the actual pool
# (its two-sample extrapolation), which vLLM took off the budget all the same. Each start sampled 8,192 tokens (N requests × min(max_model_len,
# max_num_batched_tokens // N): 1 × 8,192, 8 × 1,024, 256 × 32, each its max_num_batched_tokens); vllm#50780's title
# calls the transient "mnbt-linear", so the widening scales with the launch's sample tokens, which are
# max_num_batched_tokens unless max_model_len caps the context (a case no start or the issue measures)
HYBRID_SAMPLE_BYTES = round(2.21 * GIB)
HYBRID_SAMPLE_TOKENS = 8_192
# The releases whose starts show it (kvtop's corpus): v0.24.0 (club-3090 #612 / #652 on an RTX 5090, the L40S
# Qwen3.6-27B-FP8 start) and v0.27.1 (fentz26), all with an fp8 KV cache; vllm#50780 places the regression between
# 0.23.1 (a dev714 build reports 0.5 GiB) and 0.26.x. v0.28.x (the last release that runs a hybrid on the V1 runner,
# runner_eras.py) is not seen: the corpus's only starts there are dibaotian's three PP 4 ones at 0.28.1rc1 (fp8 KV), one
# --enforce-eager (no capture), the two with graphs at 4,096 and 2,048 sample tokens lacking 0.27 / 0.28 GiB a rank
# more than the eager sibling (+5.7 against +3.3 %): less than the 1.1 / 0.55 GiB the widening would carry, at a
# quarter of the layers a rank, so they neither show the transient nor rule it out. Not carried there (not seen)
HYBRID_SAMPLE_ERAS: Eras[bool] = Eras((
    Era("", False, "no start of kvtop's corpus shows the transient before v0.24.0 (vllm#50780: 0.5 GiB at 0.23.1)"),
    Era("0.24.0", True, "seen at v0.24.0 and v0.27.1 (kvtop's corpus, docs/engines/vllm.md §4.4.1)"),
    Era("0.28.0", False, "not seen from v0.28.0: the corpus's only V1 hybrid prefix-caching starts there, dibaotian's "
        "PP 4 ones at 0.28.1rc1, neither show it nor rule it out; the V2 runner takes no such sample from v0.29.0"),
))  # fmt: skip


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


def hybrid_sample_widening(inputs: CalibrationInputs) -> tuple[int, str] | None:
    """(bytes the CUDA-graph term's error above its figure widens by, why: it only takes from KV, so only the
    interval's low end takes it) for a hybrid with prefix caching whose release showed the
    first FULL capture's transient (HYBRID_SAMPLE_ERAS): the size it was seen at, HYBRID_SAMPLE_BYTES at 8,192
    sample tokens (what fentz26's estimate took off beyond kvtop's graph term, about 0.52 GiB of it the estimate's
    excess over the pool it measured), scaled to the launch's (`full_capture_sample`: N × context); None elsewhere.
    The centre stays the graphs' fit: the op is not found, so the size is an error the plan admits, not a term."""
    if not hybrid_sampled(inputs) or not HYBRID_SAMPLE_ERAS.at(inputs.version):
        return None
    sample = full_capture_sample(inputs)
    tokens = sample[0] * sample[1] if sample is not None else batch_limits(inputs)[0]
    widening = round(HYBRID_SAMPLE_BYTES * tokens / HYBRID_SAMPLE_TOKENS)
    return widening, (f"the first FULL capture's transient on a hybrid with prefix caching (vllm#50780; op not found, "
                      f"not modelled) adds {gib(widening)} to the term's other error above its figure only (it only "
                      f"takes from KV: the interval's low end takes it, its high end does not), as independent errors "
                      f"add (the term's error above is the root of their squares): 2.21 GiB at 8,192 sample tokens, what vLLM's "
                      f"estimate took off the KV budget beyond kvtop's graph term on fentz26's v0.27.1 start (3.51 GiB "
                      f"estimated against 1.30; its log's pool measured 2.99 GiB, so about 0.52 of the 2.21 is the "
                      f"estimate's excess over the actual pool; club-3090's v0.24.0 starts lacked 1.75 – 1.78 GiB of "
                      f"KV against the plan, all fp8 KV), scaled to this launch's {tokens:,}")  # fmt: skip


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
                  f"as graph memory (vllm#50780) and the plan's KV may be high by it ({HYBRID_SAMPLE_SEEN}); "
                  "where it was seen the interval's low end carries what the estimate then took off beyond kvtop's "
                  "graph term")  # fmt: skip
    return words
