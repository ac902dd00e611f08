"""Whether vLLM's CUDA-graph estimate is the V2 model runner's placeholder 0 (docs/engines/vllm.md §2).

`Worker.determine_available_memory` (v1/worker/gpu_worker.py) takes `model_runner.profile_cudagraph_memory()` off
the KV budget from v0.20.0 (PR #38284). The V1 runner (gpu_model_runner.py) captures graphs to measure it; the V2
runner (v1/worker/gpu/model_runner.py) had a placeholder from vllm#36520, `profile_cudagraph_memory` returning 0
("It is TBD whether we keep this API or not"), so under V2 nothing was charged and the graphs were captured after
the KV cache, outside the budget (vllm#49224: a dense Llama-3.1-70B FP8 at TP 8 that V1 gave ≈ 9.5 GiB OOMs in
`capture_model`). vllm#53306 (merged 2026-08-24; "CUDA graph memory profiling ... used for KV cache
auto-sizing" in v0.29.0's release notes, after v0.28.0's 2026-08-26 tag) made V2 capture into a throwaway pool and
measure: `profile_cudagraph_memory` in v1/worker/gpu/cudagraph_utils.py, read at v0.33.0. Which runner runs is the
release's and the model's (`runner_eras.runs_v2`: from v0.25.0 V2 for models without experts or of a listed class, but
hybrids and attention-free models stay on V1 until v0.29.0; vllm#49224 names v0.25.1).

From v0.29.0 the estimate is measured after the profile and taken off beside it: `available = requested −
non_kv_cache_memory − cudagraph_memory_estimate_applied` (v1/worker/gpu_worker.py:606-610 at v0.29.0, :621-625 at
v0.30.0, :753-757 at v0.33.0), and V2's `profile_run` is the one of v0.28.0 (the diff of v1/worker/gpu/model_runner.py
between the two releases drops an encoder-only early return only). What V2's profile held beside weights, activation
and non-torch memory before v0.29.0 is therefore still in `non_kv_cache_memory`, and the measured graphs come on top
(`v2_beside_kept`).

What V2 measures is not what the V1 runner extrapolates (`v2_graph_extras`). The V1 runner (gpu_model_runner.py
`profile_cudagraph_memory`, v0.30.0:6661-6826) captures each mode's two largest sizes and takes the larger first
capture + Σ second capture × (sizes − 1) over both modes; V2's (v1/worker/gpu/cudagraph_utils.py
`profile_cudagraph_memory`, v0.29.0:718-801, v0.30.0:847-928, v0.33.0:922-1009) captures every PIECEWISE graph into
the throwaway pool and measures them, and extrapolates FULL alone from its two largest (`_extrapolate_full_graph_memory`:
first + (FULL graphs − 1) × max(second, 1 MiB), `_FULL_GRAPH_PROFILING_SAMPLES` = 2; the same at v0.29.0:823-831,
v0.30.0:947-954, v0.32.0:979-987, v0.33.0:1031-1039). PIECEWISE graphs share one pool and reuse its blocks, so their
measured cost is about the pool a start holds after its real capture (0.15 and 0.20 GiB for Qwen2.5-1.5B), far below
the V1 extrapolation over 50 more sizes. Both V2 estimates in the corpus are Qwen2.5-1.5B's (28 layers, 51 PIECEWISE +
35 FULL): 0.34 GiB on a T4 at v0.30.0 and 0.35 GiB on an A100 40GB at v0.31.0, where the V1 form read 0.73.

What the figure beside the profile stands for, the corpus's V2 starts of v0.29.0+ tie to torch.compile's cold compile in
the profile's first forward, which `v2_profile.py` does not count: 0.32 GiB on the A100 40GB start (compiled cold),
≈ 0.75 on an A100 80GB start (cold), none left room for on the T4 start, whose cache was warm ('Directly load AOT
compilation'; `compile_cache.py`). Whether a start's cache is warm is not known before it: the cold start's figure is
charged (docs/engines/vllm.md §9, "The V2 runner's graph placeholder"). It does not make the plan a cold start's: with
it the corpus's v0.29+ cold starts plan +0.5 to +14.9 % and its warm ones −19.7 to +0.8 % (session 60, §2.6: the cold
excess is 0-1.7 GiB there and not modelled).

On the forward's side (session 59, read in the v0.22.0, v0.23.0, v0.24.0, v0.25.0, v0.26.0, v0.27.1 and v0.28.0
wheels). Before v0.29.0 nothing of V2's sits beside its profile in the budget: `profile_cudagraph_memory` returns 0
(v1/worker/gpu/model_runner.py v0.22.0:620-622, v0.23.0:660-662, v0.24.0:684-686, v0.25.0:680-682, v0.26.0:705-707,
v0.27.1:749-751, v0.28.0:843-845) and the budget takes off weights, the torch peak's increase and non-torch memory
(gpu_worker.py v0.22.0:416-421, v0.23.0:431-435; from v0.27.x all memory consumed and the transient peak above it,
utils/mem_utils.py:317-326 at v0.27.1). What the figure stands for is inside the profile's peak, which is a maximum over
the profile (`allocated_bytes.all.peak`, mem_utils.py:240-268 at v0.23.0). The corpus ties it to torch.compile: the
eager V2 starts leave nothing beside the count (T4 TP 2 at v0.22.0, A100 40GB at v0.24.0, RTX 5060 Ti at v0.27.1), the
compiled ones 0.2–0.9 GiB. The model compiles and first runs in its first call (compilation/decorators.py:656-670 at
v0.23.0: `aot_compile`, then the compiled function under `monitor_profiling_run`, which asserts no compilation after),
which is `_dummy_run`'s forward; `_dummy_sampler_run` follows, with only the forward's output and sampled rows held
across (model_runner.py:628-646 at v0.23.0). So the figure joins the forward's side of V2's peak: where V2's dummy
sampler peaks above the forward (at 8,192 tokens × 1,024 seqs with the float32 copy of v0.22–v0.25), that lead hides
as much of it (session 59). So does the forward's count (session 66, `compile_above_peak`): the compile ends before the
compiled forward allocates (`PiecewiseBackend.__init__` compiles every range up front, piecewise_backend.py:189-190 at
v0.29.0, inside `aot_compile`, decorators.py:674, run after, :680-681), so only the figure above V2's counted peak is
charged (RhizoNymph's RTX 3090 v0.29.0 starts: 2.21 / 4.28 GiB printed at 16,384 / 32,768 tokens, the forward's count
2.06 / 4.13 plus the 0.15 estimate). The two v0.23.0 H100 starts (hosseinbv) held 1.51 and 1.17 GiB
beside weights and KV; the Qwen3-4B one's is the sampler's count (0.92) and non-torch memory alone.

Not scaled with max_num_seqs before v0.29.0 (session 61, read in the v0.25.0, v0.26.0, v0.27.1 and v0.28.0 wheels;
`stand_in`). Nothing V2 keeps in that budget grows with max_num_seqs beyond what kvtop counts apart: the graphs
are captured after the KV cache, beyond the budget (engine/core.py:296 `determine_available_memory`, :329 the KV
allocation, :331 `compile_or_warm_up_model` → gpu_worker.py:732 `capture_model` at v0.28.0; :762, :784, :717 at v0.25.0,
v0.26.0, v0.27.1), the per-slot token table is host memory (`all_token_ids`, UVA: gpu/states.py:34-39 at v0.28.0), the
vocabulary-wide sampler state is `v2_sampler_state.py`'s and the dummy sampler `v2_profile.py`'s. What the figure stands
for follows the torch.compile cache instead (docs/engines/vllm.md §9, "Not with max_num_seqs"): cold starts leave
0.56-1.28 GiB beside kvtop's other terms at 8, 64, 256 and 1,024 seqs, warm ones -0.28 to 0.0. So the V1 runner's figure
stands in at one grid, vLLM's 256-seq default (PIECEWISE=51, FULL=35 in its own profile line), whatever the launch's
max_num_seqs; the launch's other graph settings (mode, stated sizes, the token cap) are kept.

From v0.29.0 (session 62, read at v0.29.0): V2 measures its own graphs after the profile, at the launch's grid
(`profile_cudagraph_memory` after `memory_profiling`, v1/worker/gpu_worker.py:552-570; the estimate taken off beside
`non_kv_cache_memory`, :606-610), so those are read at the launch's max_num_seqs (`v2_graph_extras`). What stands
beside them is the same memory as before v0.29.0 (the profile is v0.28.0's), so its figure is read at `stand_in`'s
grid too (`with_v2_beside`), no longer at the launch's. On the corpus's v0.29+ V2 starts away from 256 seqs (committed
fits): the cold yuanjuju starts at 8 seqs +4.1 / +2.9 % → +0.6 / +0.6 %, the DGX Spark at 4 seqs +1.4 → +0.7 %, the
L40S at 512 −0.5 → +0.1 %; the HAMi-sliced A100 at 32 +2.0 → −3.2 %, the H200 starts at 1,024 +0.8 / +0.1 → +1.1 /
+0.2 %, gpt-oss-20b FP8 KV at 512 (an MXFP4 miss) +21.6 → +25.6 %.

Session 68 (read at v0.29.0, v0.30.0 and v0.31.0): what V2's estimate is, against the starts that print it. `capture`
captures PIECEWISE first, then FULL ("PIECEWISE has larger activations so FULL activations should fit in already
allocated buffers", cudagraph_utils.py:416-417 at v0.30.0, :332 at v0.29.0, :419 at v0.31.0), FULL limited to its two
largest while profiling (:424-431) and sampled by `mem_get_info` around each (:466-484); `profile_cudagraph_memory`
returns `measured − Σ samples + first + (FULL − 1) × max(second, 1 MiB)` (:929-930, :952-960). So the estimate is every
PIECEWISE graph as captured (their pool and each graph's own memory) plus the FULL graphs extrapolated, and kvtop's form
(`v2_graph_extras`: FULL graphs × layers at the shared fit's rate) counts the PIECEWISE ones as its one first capture.
The worker takes the estimate off (`cudagraph_memory_estimate_applied`, gpu_worker.py:588-625 at v0.30.0) and prints it
only as a utilization ("equivalent to --gpu-memory-utilization=X without CUDA graph memory profiling", :645-662), so
the estimate is (utilization − X) × CUDA's total; the "… GiB for CUDAGraph memory" of the "Actual usage" line is the
real capture after the KV cache (:813-816, :876), not what was charged. Seven starts print it: Qwen2.5-1.5B on a Colab
T4 at v0.29.0 and 32 / 64 / 96 / 128 / 256 seqs (0.103 / 0.138 / 0.189 / 0.269 / 0.342 GiB at 14.56 GiB; kvtop 0.047 /
0.073 / 0.100 / 0.127 / 0.233), Qwen2.5-Coder-1.5B on an A100 40GB at v0.31.0 (0.35; kvtop 0.233) and Qwen3-8B on an L4
at v0.30.0 (0.428 at kvtop's 22.06 GiB; kvtop 0.300): 0.06-0.14 GiB above kvtop's form each time, neither growing with
the PIECEWISE count (11 → 51 graphs: +0.057, +0.065, +0.089, +0.143, +0.109) nor one constant. Not modelled
(`V2_PIECEWISE_UNCOUNTED` says it in the term's basis): sizing it would take a V2 row set in the graph fit, and only the
A100 record carries the printed estimate as a figure (`cuda_graph_estimate`). It is not what the v0.29-v0.30 misses are
made of: those starts' excess is the cold compile (docs/engines/vllm.md §9, "Session 68").

Session 69 (read at v0.29.0 and v0.30.0, and in torch 2.13.0, which both pin): what the cold compile holds at the
profile's peak is Inductor's combo-kernel benchmark of the embedding lookup, one random copy of the rank's embedding
table (`compile_benchmark.embedding_copy_bytes`), so from v0.29.0 that copy, not the V1 runner's figure, is what
`with_v2_beside` charges above V2's counted peak, where it is read (a text model, compiled; under PP on the first
stage only, session 71: `_first_stage`); the figure's
error stays (the modules a cold compile leaves loaded outside torch are not modelled). The starts that print their
peak match it: Qwen2.5-7B on an RTX 3090 at 2,048 tokens 1.03 GiB beside the estimate against the 1.015 GiB table,
Qwen3-8B on an A10G 1.19 against 1.159.

Session 70 (read in the v0.11.0, v0.11.1, v0.12.0, v0.13.0, v0.14.0, v0.17.0, v0.19.0, v0.23.0 and v0.28.0 wheels):
vLLM turns the combo kernels and their benchmark on from v0.11.1 (config/compilation.py:659-667 at v0.11.1, :979-987 at
v0.28.0; `compile_benchmark.COMBO_DEFAULT`), and V2's profile before v0.29.0 is the one v0.29.0 keeps, so the same copy
replaces the V1 runner's figure before v0.29.0 too, above V2's counted peak (`with_v2_beside`, the placeholder branch);
the figure's error stays. With the committed fits, the v0.22-v0.28 V2 starts it moves: 25 of 33 plans with the logs'
weights nearer the log (median miss 2.14 -> 0.77 %), 43 of 68 fully blind (2.60 -> 1.86 %); the runpod RTX 4090 cold
start +7.9 -> -0.8 %, vfarcic's L4 Qwen3-8B +10.0 -> -3.6 %, the L40S Qwen3-14B +4.9 -> -0.6 %.
"""

from __future__ import annotations

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.terms import TermEstimate
from kvtop.domain.deployment_flags import flag_json
from kvtop.domain.engines.versions import Era, Eras
from kvtop.domain.engines.vllm.attention_pick import flashinfer_workspace
from kvtop.domain.engines.vllm.compile_benchmark import (
    EMBEDDING_COPY,
    EMBEDDING_COPY_BEFORE_V0_29,
    NO_LOOKUP,
    V2_COPY_STAGED,
    embedding_copy_bytes,
)
from kvtop.domain.engines.vllm.compile_cache import warm_unread
from kvtop.domain.engines.vllm.encoder_compile import multimodal_profile_peak
from kvtop.domain.engines.vllm.graph_keys import V2_DECODE_KEYS, decode_query_len, spec_tokens
from kvtop.domain.engines.vllm.pinned_copy import PINNED_AT_CENTRE, pinned_at_centre, pinned_copy
from kvtop.domain.engines.vllm.profile_run import graph_counts, lora
from kvtop.domain.engines.vllm.runner_eras import runs_v2
from kvtop.domain.engines.vllm.spec_methods import NO_DRAFT_METHODS, stated_method
from kvtop.domain.engines.vllm.v2_profile import launch_stage_peaks, v2_counted
from kvtop.domain.wording import gib

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


# What V2's measured estimate holds that kvtop's V2 form does not count (module docstring, "Session 68"): every PIECEWISE
# graph is captured into the throwaway pool and measured, before the FULL samples (cudagraph_utils.py:416-431 at v0.30.0,
# :332 at v0.29.0, :419 at v0.31.0), and only the FULL samples are swapped for the extrapolation (:929-930 at v0.30.0),
# so the PIECEWISE graphs' own memory stays in the estimate; kvtop counts them as its one first capture.
V2_PIECEWISE_UNCOUNTED = (
    "it measures every PIECEWISE graph in full (captured first: cudagraph_utils.py:416-431, :929-930 at v0.30.0), which "
    "kvtop counts as one graph, so V2's printed estimates lie above this form (0.06-0.14 GiB on the seven starts that "
    "print it; not modelled)"
)


# The seqs at which the V1 runner's graph figure stands for the memory beside V2's profile before v0.29.0 (module
# docstring, "Not scaled with max_num_seqs"): vLLM's default max_num_seqs below the large GPUs' row, where the corpus's
# V2 starts showed the figure's size (`v2_placeholder`); its growth with the launch's seqs has no counterpart in V2.
STAND_IN_SEQS = 256


def stand_in(inputs: CalibrationInputs) -> tuple[CalibrationInputs, str]:
    """(inputs, why) the graph fit reads where the V1 runner's figure stands in for what V2's profile holds beside (before
    v0.29.0 the whole graph term, from v0.29.0 the part beside V2's measured graphs: `with_v2_beside`): the launch at
    `STAND_IN_SEQS` seqs, its other fields kept, so the term's bytes, error and feature values are one launch's; why
    is '' where the launch's seqs count the same graphs (the fit's only feature is the graphs counted, so comparing
    the two counts is comparing what the fit reads)."""
    fixed = inputs.model_copy(update={
        "settings": inputs.settings.model_copy(update={"max_running_requests": STAND_IN_SEQS})})  # fmt: skip
    launch, grid = graph_counts(inputs), graph_counts(fixed)
    if launch == grid:
        return fixed, ""
    after = ("; V2's own graphs are measured apart, at the launch's grid (v2_graph_extras)" if V2_GRAPHS_MEASURED.at(
        inputs.version) else ", and V2 captures its graphs after the KV cache (engine/core.py:329-331 at v0.28.0)")
    return fixed, (f"read at vLLM's {STAND_IN_SEQS}-seq default grid ({1 + v1_graph_extras(*grid)} graphs counted, not "
                   f"the launch's {1 + v1_graph_extras(*launch)}): what it stands for (torch.compile's first compile) "
                   f"does not grow with max_num_seqs{after}")  # fmt: skip


# A start whose torch.compile cache is warm (the operator's `plan --compile-cache warm`, `CalibrationInputs.compile_cache_warm`)
# compiles nothing in the profile's first forward: the model loads its saved artifact and runs it (v0.30.0
# compilation/decorators.py:566-576, `_try_load_aot_compiled_fn`, 'Directly load AOT compilation from path' :314), where a
# cold one runs `aot_compile` (Dynamo, Inductor and its autotuning, compiler_interface.py:757-758) and saves it (:667-678)
# inside `memory_profiling` (gpu_worker.py:568). The figure kept beside V2's profile stands for that compile (module
# docstring), so a warm start is charged none of it; the figure joins its error, so the interval still holds a cold start
# (or one whose cache key the launch changed: the AOT path is a hash of the config, decorators.py:539-548). Measured
# on the corpus's V2 starts whose lines say warm (`compile_cache: warm`): 0.30.0 L4 −19.6 % → −0.3 %, 0.27.1 RTX 4090
# −13.5 % → −1.3 % (tests/engines/vllm/test_warm_compile_cache.py).
WARM_CACHE_UNCHARGED = (
    "torch.compile's cache said warm (--compile-cache warm): the profile loads the compiled graphs and compiles nothing "
    "(compilation/decorators.py:566-576 at v0.30.0), so nothing of that figure is charged; it joins the term's error "
    "instead (a cold start, or a cache the launch's config no longer matches: the path is its hash, :539-548)"
)


def v2_placeholder(inputs: CalibrationInputs) -> str | None:
    """Why the release charges no CUDA-graph estimate (the V2 runner runs and its estimate is the placeholder 0), and
    what kvtop charges instead; None where the estimate is measured (the V1 runner, or V2 from v0.29.0) or the model,
    so the runner, is not known.

    The V2 starts in the corpus (Qwen3-32B PP 2 at v0.27.1, `model_runner.py` in its lines and no "Estimated CUDA
    graph memory"; Qwen3-14B and its AWQ on an L40S and 2 × L4 at v0.28.0) leave beside weights and KV about what the
    V1 runner's activation and graph estimate give (the L40S BF16 start 1.80 GiB at 0.92 of 44.45 GiB, kvtop's V1
    form 0.80 + 0.96): charging 0 plans them +2.5 % to +8.8 % over. What V2's profile holds there is not
    attributed, so kvtop keeps the V1 runner's graph figure as that memory, its part above V2's counted peak
    (`compile_above_peak`), and says so."""
    model = inputs.model
    if model is None or not runs_v2(inputs.version, model, inputs.settings):
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
    if not v2_measures_graphs(inputs):
        return None
    return (
        f"vLLM {inputs.version.label} runs this model on the V2 model runner, which measures its CUDA graphs after the "
        "profile and takes them off beside the profile's non-KV memory (gpu_worker.py:606-610 at v0.29.0): what V2's "
        "profile held beside weights, activation and non-torch memory before v0.29.0 (the V1 runner's graph figure "
        "stands for it, not attributed) is kept, and the measured graphs (V2's form) come on top"
    )


def v2_measures_graphs(inputs: CalibrationInputs) -> bool:
    """Whether the V2 runner runs and measures its CUDA graphs (v0.29.0 on), so its estimate is V2's form."""
    model = inputs.model
    return model is not None and runs_v2(inputs.version, model, inputs.settings) and V2_GRAPHS_MEASURED.at(inputs.version)


def v2_graph_extras(inputs: CalibrationInputs, piecewise: int, full: int) -> int:
    """The graphs the release's estimate extrapolates beyond its first captures: under the V2 runner from v0.29.0 the
    FULL graphs beyond the first (every PIECEWISE graph is captured and measured: the first capture the fit counts,
    `calibration._graph_features`, stands for them), else both modes' beyond their first (the V1 runner's
    extrapolation)."""
    if v2_measures_graphs(inputs):
        return max(full - 1, 0)
    return v1_graph_extras(piecewise, full)


def v1_graph_extras(piecewise: int, full: int) -> int:
    """The graphs the V1 runner's estimate extrapolates beyond its first captures: each mode's beyond its first."""
    return max(piecewise - 1, 0) + max(full - 1, 0)


def profile_peak(inputs: CalibrationInputs) -> int:
    """V2's profiled peak as `v2_profile.py` counts it on the last stage (the larger of the forward and the dummy
    sampler, which the activation term charges); for a multimodal model, the text run or the encoder's counted forward
    beside what its encoder profile keeps (`encoder_compile.multimodal_profile_peak`, session 69); 0 where V2's profile
    is not counted there (`v2_counted`; LoRA's buffers join the profile)."""
    model = inputs.model
    if model is None or lora(inputs):
        return 0
    if not v2_counted(inputs):
        found = multimodal_profile_peak(inputs)
        return found[0] if found is not None else 0
    peaks, _ = launch_stage_peaks(inputs, model)
    return peaks.last


def compile_above_peak(figure_bytes: int, inputs: CalibrationInputs) -> tuple[int, str]:
    """(bytes charged, why) of the V1 runner's graph figure as the memory beside V2's profile (torch.compile's cold
    compile). The compile ends before the compiled forward allocates anything: `PiecewiseBackend.__init__` compiles
    every range up front (piecewise_backend.py:189-190 at v0.29.0, :190 at v0.23.0, v0.27.1, v0.28.0 and v0.30.0, :189
    at v0.31.0-v0.34.0; its `__call__` asserts so, :374-378 at v0.29.0), inside `aot_compile` (compilation/decorators.py
    :674 at v0.29.0), and only then is the compiled function run (:680-681). The budget holds one peak over the
    profile (`allocated_bytes.all.peak` less what stays, utils/mem_utils.py:319-326 at v0.29.0), so the compile's
    transient and the forward's and sampler's are the larger of them, not their sum: only the figure's part above
    V2's counted peak (`profile_peak`) is charged; why is '' where the whole figure is (no peak counted)."""
    peak = profile_peak(inputs)
    if not peak:
        return figure_bytes, ""
    charged = max(figure_bytes - peak, 0)
    found = None if v2_counted(inputs) else multimodal_profile_peak(inputs)
    under = f"V2's counted peak ({gib(peak)})" if found is None else found[1]
    return charged, (
        f"the compile it stands for ends before the compiled forward runs (piecewise_backend.py:189-190, "
        f"decorators.py:674-681 at v0.29.0) and the budget holds the profile's one peak (mem_utils.py:319-326), so it "
        f"is hidden under {under}: {gib(charged)} of its {gib(figure_bytes)} charged"
    )


def said_warm(charged: int, side: str, inputs: CalibrationInputs) -> tuple[int, str, int]:
    """(bytes charged, why, error added) of the figure beside V2's profile: where the operator says the compile cache
    is warm and the launch reads it, none of it charged and all of it added to the term's error (`WARM_CACHE_UNCHARGED`: a cold start, or a
    cache whose key the launch changed, stays inside the interval); else as `compile_above_peak` gave it, nothing added."""
    # a said warm the launch cannot read (compile_cache.py `warm_unread`: VLLM_DISABLE_COMPILE_CACHE=1, or no compile)
    if not inputs.compile_cache_warm or warm_unread(inputs.version, inputs.gpu_name, inputs.settings) is not None:
        return charged, side, 0
    return 0, WARM_CACHE_UNCHARGED, charged


WARM_CACHE_UNSAID = (
    "torch.compile's cache not said (--compile-cache): charged cold, as a first start on a host compiles; a start "
    "whose cache holds the launch's graphs loads them and compiles nothing (compilation/decorators.py:566-576 at "
    "v0.30.0), so it holds that much more KV: in the term's error below its figure only"
)


def unsaid_warm(charged: int, side: str, inputs: CalibrationInputs) -> tuple[int, str]:
    """(error below the figure only, why) of the compile's charge beside V2's profile where the operator says neither
    cold nor warm: a warm start charges none of it (`said_warm`'s case), a cold one all of it, so the charge stays at
    the centre and only the interval's high end takes it (`lower_only_bytes`); (0, `side`) where the state is said,
    or a warm cache could not be read (`warm_unread`: nothing compiles, or the launch turns the cache off)."""
    said = inputs.compile_cache_warm or inputs.compile_cache_cold
    if not charged or said or warm_unread(inputs.version, inputs.gpu_name, inputs.settings) is not None:
        return 0, side
    return charged, f"{side}; {WARM_CACHE_UNSAID}" if side else WARM_CACHE_UNSAID


def with_v2_beside(
    graphs: TermEstimate, inputs: CalibrationInputs, figure: TermEstimate | None, grid: str = ""
) -> TermEstimate:
    """The graph term where V2 runs: before v0.29.0 (`v2_placeholder`) `graphs` is the V1 runner's figure for the
    memory beside V2's profile (the caller reads it at `stand_in`'s grid), charged above V2's counted peak
    (`compile_above_peak`); where the release measures V2's graphs (`v2_beside_kept`), V2's estimate (`graphs`, its own
    form: `v2_graph_extras`, at the launch's grid) and that figure (`figure`, read at `stand_in`'s grid as before v0.29.0:
    `grid` says so where the launch's differs), above V2's counted peak as before; from session 69 the figure's bytes
    are the cold compile's copy of the embedding table where it is read, and from session 70 before v0.29.0 too
    (`compile_benchmark.embedding_copy_bytes`; 0 where the compiled graph holds no lookup, a multimodal model's:
    `lookup_compiled`), its error still the figure's. Both are the one fit, so where it
    errs, both err alike: the errors add, not the root of their squares, which holds for independent errors only."""
    if v2_placeholder(inputs) is not None:
        # the same copy where read (session 70: the profile is the one v0.29.0 keeps, combo kernels on from v0.11.1)
        copy = embedding_copy_bytes(inputs)
        charged, side, widened = said_warm(*compile_above_peak(graphs.bytes if copy is None else copy, inputs), inputs)
        side = NO_LOOKUP if copy == 0 else f"{EMBEDDING_COPY_BEFORE_V0_29}; {side}" if copy is not None else side
        unsaid, side = unsaid_warm(charged, side, inputs)
        # v0.27.0 - v0.28.x pin the freed copy's segment as v0.29.0 does (session 71: the same budget and profile,
        # pinned_copy.py): its error above the figure (`raise_only_bytes`), or on sm_120 from v0.28.0 its centre and
        # its error below the figure (`lower_only_bytes`, `_pin`)
        pinned, pinned_why = said_warm(*pinned_copy(copy or 0, inputs), inputs)[:2]
        charged, widened, lower = _pin(pinned, charged, widened, inputs)
        side = f"{side}; {_pin_words(pinned_why, inputs)}" if pinned else side
        # said warm, what a cold start (or a changed cache key) would charge only raises the term, as the pin does;
        # unsaid, what a warm start would not charge only lowers it (`unsaid_warm`)
        return graphs.widened_by(raise_only_bytes=widened, lower_only_bytes=lower + unsaid, bytes=charged, first_stage_only_bytes=_first_stage(
            charged, copy, inputs), basis=f"{graphs.basis}{'; ' + side if side else ''}{_staged(charged, copy, inputs)}")  # fmt: skip
    why = v2_beside_kept(inputs)
    if why is None or figure is None:
        return graphs
    copy = embedding_copy_bytes(inputs)  # what the cold compile holds at its peak, where read (compile_benchmark.py)
    charged, side, widened = said_warm(*compile_above_peak(figure.bytes if copy is None else copy, inputs), inputs)
    side = NO_LOOKUP if copy == 0 else f"{EMBEDDING_COPY}; {side}" if copy is not None else side
    unsaid, side = unsaid_warm(charged, side, inputs)
    # the freed copy's segment, pinned past the profile in some cold starts and counted again as consumed (vLLM
    # v0.27.0 - v0.30.x; read here where the copy is, v0.29.0 - v0.30.x): whether it is follows the start's allocation
    # order, so it widens the term's error only, above its figure (`raise_only_bytes`: it only takes from KV, so the
    # interval's low end takes it and its high end does not; pinned_copy.py), but on sm_120 cards, where 12 of the
    # corpus's 14 V2 starts lost it, it is charged, and a start that keeps it holds more KV (`lower_only_bytes`)
    pinned, pinned_why = said_warm(*pinned_copy(copy or 0, inputs), inputs)[:2]
    charged, widened, lower = _pin(pinned, charged, widened, inputs)
    side = f"{side}; {_pin_words(pinned_why, inputs)}" if pinned else side
    workspace = flashinfer_workspace(inputs)
    inside = (f"; V2's estimate holds {workspace[1]}: its capture into the throwaway pool builds fresh metadata "
              "builders on a minimal KV cache (cudagraph_utils.py `_init_minimal_kv_cache_for_profiling`, v0.29.0:756, "
              "v0.31.0:892, v0.34.0:1030)") if workspace else ""  # fmt: skip
    # the figure's own one-sided part kept; said warm, its uncharged part (`said_warm`) and the pin only raise the term
    return graphs.widened_by(
        figure.error_bytes - figure.raise_only_bytes, figure.raise_only_bytes + widened,
        figure.lower_only_bytes + lower + unsaid,
        label="vLLM V2's CUDA-graph estimate and the memory beside its profile",
        bytes=graphs.bytes + charged + (workspace[0] if workspace else 0),
        first_stage_only_bytes=_first_stage(charged, copy, inputs),
        basis=f"{graphs.basis}; V2's estimate extrapolates its FULL graphs only (cudagraph_utils.py:823-831 at "
              f"v0.29.0); {V2_PIECEWISE_UNCOUNTED}{inside}; {why}{'; ' + grid if grid else ''}{'; ' + side if side else ''}"
              f"{_staged(charged, copy, inputs)}",
    )  # fmt: skip


def _first_stage(charged: int, copy: int | None, inputs: CalibrationInputs) -> int:
    """What of the charged figure only the first pipeline stage holds: the cold compile's table copy above V2's peak
    where the launch has stages (only the first stage's forward gets the ids, `compile_benchmark.embedding_copy_bytes`),
    so the ledger solves a later stage without it (`CalibratedFigures.later_stage`); 0 elsewhere."""
    return charged if copy and inputs.layout.pp > 1 else 0


def _staged(charged: int, copy: int | None, inputs: CalibrationInputs) -> str:
    """The term's words for `_first_stage`'s part ('' where none)."""
    return f"; {V2_COPY_STAGED} ({gib(charged)} on the first stage only)" if _first_stage(charged, copy, inputs) else ""


def _pin(pinned: int, charged: int, widened: int, inputs: CalibrationInputs) -> tuple[int, int, int]:
    """(charged, widened above only, widened below only) with the pinned segment: in the centre where the GPU pinned
    it in most starts of the corpus (`pinned_copy.pinned_at_centre`, sm_120 from v0.28.0: 12 of 14), and in the
    term's error below its figure only (`lower_only_bytes`), since a start that does not pin it holds that much more
    KV and none holds less for it (the interval's high end takes it, its low end does not: the pre-pin interval with
    only its centre moved, session 71 review R7 H3-1); else in the term's error above its figure only
    (`raise_only_bytes`)."""
    if pinned_at_centre(inputs):
        return charged + pinned, widened, pinned
    return charged, widened + pinned, 0


def _pin_words(why: str, inputs: CalibrationInputs) -> str:
    """The pinned segment's words: where it is charged at the centre, that and why (`PINNED_AT_CENTRE`)."""
    return f"{why}; {PINNED_AT_CENTRE}" if pinned_at_centre(inputs) else why


def v2_graphs_not_modelled(inputs: CalibrationInputs) -> str | None:
    """What V2's measured graph estimate (v0.29.0 on) holds that kvtop's count of the target's graphs leaves out, in
    words; None where V2 does not measure or nothing is left out. Read at v0.29.0 and v0.34.0
    (v1/worker/gpu/cudagraph_utils.py): the drafter's own graphs ("PIECEWISE, encoder and speculator graphs are
    measured in full", v0.29.0:728, :766-785; v0.34.0:999, :1040-1069), the LoRA capture cases (each size captured
    per case: v0.29.0:118-134, v0.34.0:198, :319-357), adaptive verification's varlen decode graphs
    (`enable_adaptive_verification`, config/speculative.py:633; cudagraph_utils.py:313-330 at v0.34.0) and, at
    v0.34.0, the uniform-decode shapes at q > 1 (`decode_cudagraph_capture_shapes`, config/compilation.py:54-68;
    cudagraph_utils.py:331-352), which kvtop counts as one decode graph a size up to max_num_seqs."""
    if not v2_measures_graphs(inputs):
        return None
    parts = []
    if spec_tokens(inputs.settings):
        if stated_method(inputs.settings) not in NO_DRAFT_METHODS:
            parts.append("the drafter's own graphs (measured in full: cudagraph_utils.py:766-785 at v0.29.0, "
                         ":1040-1069 at v0.34.0)")  # fmt: skip
        if decode_query_len(inputs.settings, inputs.version) > 1 and V2_DECODE_KEYS.at(inputs.version) is None:
            parts.append("the v0.34.0 uniform-decode shapes at q > 1 (decode_cudagraph_capture_shapes, "
                         "config/compilation.py:54-68: counted as one decode graph a size up to max_num_seqs)")  # fmt: skip
        if _adaptive(inputs):
            parts.append("adaptive verification's varlen decode graphs (cudagraph_utils.py:313-330 at v0.34.0)")
    if lora(inputs):
        parts.append("the LoRA capture cases (each size once per case: cudagraph_utils.py:118-134 at v0.29.0, "
                     ":319-357 at v0.34.0)")  # fmt: skip
    if not parts:
        return None
    return f"not modelled in V2's estimate: {'; '.join(parts)}"


def _adaptive(inputs: CalibrationInputs) -> bool:
    """Whether `--speculative-config` asks for adaptive verification (config/speculative.py:633 at v0.34.0), its JSON
    read as the other speculative fields are (`flag_json`), whatever its spacing."""
    return flag_json(inputs.settings, "speculative-config").get("enable_adaptive_verification") is True
