"""What vLLM's profiling run executes, which its pre-load terms are sized by (docs/engines/vllm.md §2).

The batch `profile_run` runs (`batch_limits`: max_num_batched_tokens and max_num_seqs, the flags else the
engine era's defaults: V0's 256 seqs and max(context, 2048) tokens, V1's per GPU from `batching.py`), and the
CUDA graphs `profile_cudagraph_memory` captures (`graph_counts`: vLLM's default capture sizes per mode) in the
releases that estimate (v0.18.0+) and charge (v0.20.0+) them. The calibration's fits read these as features
(`calibration.py`); the fusion workspace (`fusion_workspace.py`) reads the batch.
"""

from __future__ import annotations

from typing import NamedTuple

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.terms import TermEstimate
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion, era_for
from kvtop.domain.engines.vllm import batching
from kvtop.domain.engines.vllm.batching import (
    chunked_prefill,
    default_batch_limits,
    default_max_num_seqs,
)
from kvtop.domain.engines.vllm.compilation import config_fields, graph_config
from kvtop.domain.engines.vllm.graph_grids import (
    WIDE_GRID_ERAS,
    counts_by_mode,
    wide_graph_counts,
)
from kvtop.domain.engines.vllm.graph_keys import (
    V2_DECODE_KEYS,
    GraphKeys,
    decode_query_len,
    graph_keys,
    keyed_counts,
    rounded_sizes,
    spec_decode_sizes,
    v2_decode_graphs,
)
from kvtop.domain.engines.vllm.performance_mode import performance_mode, smallest_sizes
from kvtop.domain.engines.vllm.runner_eras import runs_v2
from kvtop.domain.engines.vllm.spec_graph_mode import spec_graph_mode
from kvtop.domain.engines.vllm.v0_batch_eras import V0_DEFAULT_BATCHED_TOKENS
from kvtop.domain.gpus import SM100
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.span import flag_switch

V0_MIN_TOKENS, V0_CHUNKED_ABOVE = 2048, 32768
# V0's max_num_batched_tokens with chunked prefill on (above 32K of context) and no flag: SchedulerConfig's 512 ("a
# balance between ITL and TTFT"; a v0.6.4.dev26 start prints "Chunked prefill is enabled with max_num_batched_tokens=
# 512", search-index id 49009726947) until vllm#10544 (2024-11-21, first released in v0.6.5) made it 2048.
V0_CHUNKED_TOKENS: Eras[int] = Eras((
    Era("", 512, "V0 SchedulerConfig.__post_init__: 512 tokens with chunked prefill"),
    Era("0.6.5", 2048, "vllm#10544: 2048 tokens with chunked prefill"),
))
# `profile_cudagraph_memory` (gpu_model_runner.py) runs from v0.18.0 (PR #30515), behind
# VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS (default "0": envs.py:1654-1656 at v0.19.0) until v0.20.0: its "Estimated
# CUDA graph memory" line measures the term on releases that did not charge it yet (llm-d-planner's v0.18.0 and
# v0.19.0 logs print it). PR #38284 made the default "1" and is first released in v0.20.0, whatever its advisory's
# "(default since v0.21.0)" says.
GRAPHS_PROFILED: tuple[Era[bool], ...] = (
    Era("", False, "no CUDA-graph estimate before the KV cache"),
    Era("0.18.0", True, "PR #30515: profile_cudagraph_memory estimates (and prints) the graphs' memory"),
)
GRAPHS_CHARGED: tuple[Era[bool], ...] = (
    Era("", False, "graphs captured after the KV cache, from the share above --gpu-memory-utilization"),
    Era("0.20.0", True, "PR #38284, first in v0.20.0: envs.py:1724-1726 defaults VLLM_MEMORY_PROFILER_ESTIMATE_"
                        "CUDAGRAPHS to 1 (1736-1738 at v0.20.1); gpu_worker.py:421-425 takes the estimate off the budget"),
)
# Whether `determine_available_memory` profiles without vLLM's allocator split limit while the budget counts the
# free memory the process took (`total_consumed`, utils/mem_utils.py:317-326 at v0.27.1, :312-314 at v0.30.0): then a
# freed segment that a later small allocation is carved out of stays reserved past the profile's empty_cache and is
# taken from the KV cache (v0.31.0's own account of it, gpu_worker.py:617-623). The worker runs either runner's
# profile_run so, V1's and V2's alike. How much depends on the allocation order of the start, not on the launch:
# named, not modelled (docs/engines/vllm.md §9, "Segments pinned in the profile").
PROFILE_SPLIT_UNLIMITED: Eras[bool] = Eras((
    Era("", False, "before v0.27.0 the budget charges the torch peak's increase, not the reserved segments "
                   "(utils/mem_utils.py:311 at v0.26.0)"),
    Era("0.27.0", True, "total_consumed, the drop in free memory (utils/mem_utils.py:317-319 at v0.29.0); "
                        "profile_run outside `_scoped_allocator_max_split` (gpu_worker.py:553-557 at v0.29.0, "
                        ":568-572 at v0.30.0, which applies it to load_model only, :499-507)"),
    Era("0.31.0", False, "gpu_worker.py:612-626 at v0.31.0: profile_run under `_scoped_allocator_max_split("
                         "max_split_size_mb=20)`, so a freed block above 20 MiB is never split and stays releasable"),
))  # fmt: skip
PINNED_SEGMENTS = ("before v0.31.0 the profile runs without vLLM's allocator split limit, so a freed segment a later "
                   "small allocation is carved out of stays reserved and is taken from the KV cache (v0.31.0 "
                   "gpu_worker.py:612-626): its size follows the start's allocation order, not modelled")  # fmt: skip
# vLLM's default capture sizes (config/vllm.py `_set_cudagraph_sizes`): 1, 2, 4, then every 8 below 256, then
# every 16, up to min(2 × max_num_seqs × q, the cap, max_num_batched_tokens), q = 1 + num_speculative_tokens from
# v0.13.0 (graph_keys.QUERY_SIZED_LARGEST); FULL decode graphs (FULL_AND_PIECEWISE,
# the default from v0.11.0) stop at max_num_seqs. The cap is 512, and from v0.28.0 1024 on a GPU of capability
# family 100 (`default_max_graph_size = 1024 if current_platform.is_device_capability_family(100) else 512`).
GRAPH_SIZE_CAP = 512
FAMILY_100_CAP: Eras[int] = Eras((
    Era("", GRAPH_SIZE_CAP, "v0.27.1 config/vllm.py:1833-1835: min(max_num_seqs * decode_query_len * 2, 512) on "
                            "every GPU"),
    Era("0.28.0", 1024, "v0.28.0 config/vllm.py:1937-1943 (v0.29.0 :2006, v0.30.0 :2217, v0.31.0 :2453, v0.32.0 "
                        ":2357, v0.33.0 :2463, v0.34.0 :2401): 1024 where is_device_capability_family(100)"),
))  # fmt: skip
# Sizes `_set_cudagraph_sizes` adds to its default ones, off the stride, where they are at or below the largest
# (min of the default or stated largest and max_num_batched_tokens; never beside stated sizes):
# max_num_batched_tokens from v0.20.1, and max_num_seqs under plain decoding (the decode query length 1) without a
# stated largest size from v0.31.0; under speculative decoding from v0.29.0 the uniform decode sizes
# (`graph_keys.spec_decode_sizes`: request counts × query length, :2030-2091 at v0.29.0).
TOKENS_ADDED: Eras[bool] = Eras((
    Era("", False, "v0.20.0 config/vllm.py:1423-1530: the strided sizes only"),
    Era("0.20.1", True, "v0.20.1 config/vllm.py:1527-1532 'ensure max_num_tokens is captured if within max capture "
                        "size' (v0.21.0 :1580-1585, v0.28.0 :1985-1990, v0.31.0 :2582-2587, v0.34.0 :2491-2496)"),
))  # fmt: skip
SEQS_ADDED: Eras[bool] = Eras((
    Era("", False, "v0.30.0 config/vllm.py: uniform_decode_sizes only under speculative decoding"),
    Era("0.31.0", True, "v0.31.0 config/vllm.py:2539-2540 `elif max_num_seqs <= max_cudagraph_capture_size: "
                        "uniform_decode_sizes = [max_num_seqs]`, :2591-2593 kept at or below max_num_batched_tokens "
                        "(v0.32.0 :2443, v0.33.0 :2549, v0.34.0 :2448, :2500-2502)"),
))  # fmt: skip
INTERMEDIATE_KEYS = 2  # a stage's intermediate tensors: hidden_states and residual (make_empty_intermediate_tensors)


def engine_era(inputs: CalibrationInputs) -> str:
    """V0 or V1: the release's engine, V0 where a V1-era release falls back to it on the GPU (`batching.engine_era`)."""
    return batching.engine_era(inputs.version, inputs.gpu_name, inputs.settings.flags)


def runs_opt_in_v1(inputs: CalibrationInputs) -> bool:
    """A V0-era release whose start runs its opt-in V1 (VLLM_USE_V1=1 at v0.6.5–v0.7.3: `batching.runs_opt_in_v1`)."""
    return batching.runs_opt_in_v1(inputs.version, inputs.gpu_name, inputs.settings.flags)


def v0_chunked_prefill(inputs: CalibrationInputs) -> bool:
    """Whether a V0 start chunks its prefill: `--enable-chunked-prefill` / `--no-enable-chunked-prefill` where the
    launch states either, else on above 32K of context (V0 EngineArgs.create_engine_config decides only while
    `enable_chunked_prefill is None`, vllm#6666; read at v0.6.x). Its other conditions for that default (no sliding
    window, speculative model, LoRA or prompt adapter; no prefix caching before vllm#8342) are not read."""
    stated = flag_switch(inputs.settings, "enable-chunked-prefill")
    if stated is not None:
        return stated
    return inputs.context_length > V0_CHUNKED_ABOVE


def batch_limits(inputs: CalibrationInputs) -> tuple[int, int, str]:
    """(max_num_batched_tokens, max_num_seqs, why) of the profiling run: the flags, else the era's defaults."""
    s = inputs.settings
    if engine_era(inputs) == "v0":
        seqs, _ = default_max_num_seqs(inputs.gpu_total_bytes, inputs.gpu_name, inputs.version, s.flags)  # the budget's
        chunk, fixed = V0_CHUNKED_TOKENS.at(inputs.version), V0_DEFAULT_BATCHED_TOKENS.at(inputs.version)
        tokens = chunk if v0_chunked_prefill(inputs) else max(inputs.context_length, V0_MIN_TOKENS)
        why = f"V0 defaults: {seqs} seqs, max(context, 2048) tokens ({chunk} with chunked prefill, on above 32K)"
        if fixed is not None:  # vLLM 0.1.x: a fixed batch, no chunked prefill (v0_batch_eras.py)
            # seqs no more than the batch's tokens, taken after the flags (`EngineArgs.__post_init__`, arg_utils.py:30 at
            # 0.1.0, :34 at 0.1.7: max_num_seqs = min(max_num_seqs, max_num_batched_tokens); review R7 E4-2)
            tokens = s.max_num_batched_tokens or fixed
            seqs = min(s.max_running_requests or seqs, tokens)
            return tokens, seqs, f"vLLM 0.1.x defaults: {seqs} seqs, {tokens} tokens (seqs at most the tokens)"
        return s.max_num_batched_tokens or tokens, s.max_running_requests or seqs, why
    batched, seqs, why = default_batch_limits(
        inputs.gpu_total_bytes, inputs.gpu_name, inputs.version, s.llm_class, s.engine_context, s.flags
    )
    # the whole context in one batch with chunked prefill off (batching.py); the opt-in V1 chunks its prefill whatever
    # the flags (_override_v1_engine_args)
    if not s.max_num_batched_tokens and not chunked_prefill(s) and not runs_opt_in_v1(inputs):
        batched, why = max(inputs.context_length, batched), f"{why}, max(context, default): chunked prefill off"
    return s.max_num_batched_tokens or batched, s.max_running_requests or seqs, why


def intermediate_tensor_bytes(inputs: CalibrationInputs) -> int:
    """The buffer a pipeline stage after the first keeps for the hidden states and residual it receives: V1's
    `_dummy_run` makes it once at max_num_tokens and keeps it (`self.intermediate_tensors = model.make_empty_
    intermediate_tensors(batch_size=self.max_num_tokens, dtype=model_config.dtype)`, v1/worker/gpu_model_runner.py
    :6117-6127 at v0.27.1, :5437-5445 at v0.19.0, :2777-2785 at v0.10.2; models/utils.py:866-879: one (tokens, hidden)
    tensor per key, keys "hidden_states" and "residual" in llama.py, qwen2.py, qwen3_moe.py). 0 without pipeline
    stages, or on V0. The stage that binds vLLM's pool (the least of the stages' blocks) is not the first where the
    first holds no more weights than the others, as on every PP start of the corpus."""
    model = inputs.model
    if model is None or inputs.layout.pp == 1 or engine_era(inputs) == "v0":
        return 0
    tokens, _, _ = batch_limits(inputs)
    return INTERMEDIATE_KEYS * tokens * model.hidden_size * model.dtype_bytes


def lora(inputs: CalibrationInputs) -> bool:
    """`--enable-lora`: the adapters' buffers join the profile run (not modelled)."""
    return lora_on(inputs.settings)


def lora_on(settings: LaunchSettings) -> bool:
    """Whether the launch turns LoRA on (`flag_switch`: `--enable-lora`, not `--no-enable-lora` nor the word 'False'
    after it, which is no value vLLM's switch takes: switch_spelling.py)."""
    return flag_switch(settings, "enable-lora") is True


def graphs_charged(inputs: CalibrationInputs) -> bool:
    """Whether the release charges the graph estimate and the launch captures graphs (not eager, not
    cudagraph_mode NONE: gpu_worker.py skips `profile_cudagraph_memory` then, v0.29.0:566-570)."""
    if not era_for(GRAPHS_CHARGED, inputs.version).value or inputs.settings.enforce_eager:
        return False
    return graph_config(inputs.settings.flags, inputs.version).mode != "NONE"


def graph_size_cap(version: ResolvedVersion, family_100: bool) -> int:
    """vLLM's default largest capture size before max_num_seqs and max_num_batched_tokens bound it: 512, 1024 on a
    GPU of capability family 100 from v0.28.0 (`FAMILY_100_CAP`)."""
    return FAMILY_100_CAP.at(version) if family_100 else GRAPH_SIZE_CAP


def capture_sizes(largest: int, smallest: tuple[int, ...] = (1, 2, 4), added: tuple[int, ...] = ()) -> list[int]:
    """vLLM's default CUDA-graph capture sizes up to `largest` tokens; `smallest` those below the every-8 ones (1 … 32
    under `--performance-mode interactivity`: performance_mode.smallest_sizes); `added` the sizes the release adds
    off the stride where they are at or below `largest` (`added_sizes`)."""
    sizes = sorted({*smallest, *range(8, 256, 8), *range(256, largest + 1, 16), *added})
    return [size for size in sizes if size <= largest]


def added_sizes(
    inputs: CalibrationInputs, tokens: int, seqs: int, query: int, largest: int | None, cap: int
) -> tuple[int, ...]:
    """The sizes the release adds to its default ones (`TOKENS_ADDED`, `SEQS_ADDED`, `graph_keys.SPEC_DECODE_SIZES`):
    max_num_batched_tokens; where no largest size is stated (`largest` the default one, else None) max_num_seqs under
    plain decoding, the uniform decode sizes under speculative decoding; `query` the decode query length
    (`graph_keys.decode_query_len`), `cap` the release's and GPU's default largest size (`graph_size_cap`)."""
    tokens_added = (tokens,) if TOKENS_ADDED.at(inputs.version) else ()
    if largest is None:
        return tokens_added
    seqs_added = (seqs,) if SEQS_ADDED.at(inputs.version) and query == 1 else ()  # plain decoding (from v0.13.0 q = 1)
    return (*tokens_added, *seqs_added, *spec_decode_sizes(query, seqs, largest, cap, inputs.version))


def graph_counts(inputs: CalibrationInputs) -> tuple[int, int]:
    """(PIECEWISE graphs, FULL graphs) vLLM captures: the profile's "Profiling CUDA graph memory: PIECEWISE=51
    (largest=512), FULL=35 (largest=256)" at 256 seqs, FULL=51 at H100's 1024 (FULL_AND_PIECEWISE, the default from
    v0.11.0: PIECEWISE at every size, FULL at the decode sizes up to max_num_seqs). A launch's compilation config
    (`compilation.py`) sets the mode, the sizes (those above max_num_batched_tokens dropped) or the largest default
    size; PIECEWISE captures no FULL graph, FULL a FULL graph at every size, FULL_DECODE_ONLY the decode ones only
    (v1/cudagraph_dispatcher.py; CUDAGraphMode.decode_mode / mixed_mode, config/compilation.py). Under speculative
    decoding or LoRA the V1 runner's keys at v0.13.0-v0.28.x, the largest size and added decode sizes of either
    runner and the V2 runner's rounded decode keys (graph_keys.py); PIECEWISE where speculative decoding meets an
    attention backend without FULL graphs of the uniform decode batch (spec_graph_mode.py)."""
    grid = _grid(inputs)
    tokens, seqs, mode, sizes, query = grid.tokens, grid.seqs, grid.mode, grid.sizes, grid.query
    if grid.wide:  # v0.34.0 on SM 10.x without stated sizes: the wide prefill and decode grids (graph_grids.py)
        interactive = performance_mode(inputs.settings.flags, inputs.version) == "interactivity"
        return wide_graph_counts(mode, tokens, seqs, interactive)
    if grid.keys is not None:
        return keyed_counts(rounded_sizes(sizes, grid.keys.query_len, mode, inputs.version), seqs, mode, grid.keys)
    v2_keys = V2_DECODE_KEYS.at(inputs.version) if grid.v2 and query > 1 else None
    if v2_keys == "sizes_rounded":  # V2 at v0.22.0-v0.24.x: rounded in every mode, keyed as V1's dispatcher
        return keyed_counts(rounded_sizes(sizes, query, None, inputs.version), seqs, mode, GraphKeys(query_len=query))
    if v2_keys == "keys_rounded":
        return counts_by_mode(mode, len(sizes), v2_decode_graphs(sizes, query, seqs))
    return counts_by_mode(mode, len(sizes), len(grid.decode_sizes))


class _Grid(NamedTuple):
    """The launch's capture grid as `graph_counts` and `largest_full_size` both read it, made once (`_grid`)."""

    tokens: int  # max_num_batched_tokens
    seqs: int  # max_num_seqs
    mode: str  # the cudagraph mode, FULL_AND_PIECEWISE where not stated, PIECEWISE where lowered (spec_graph_mode.py)
    wide: bool  # v0.34.0's wide SM 10.x grids (graph_grids.py): `sizes` empty
    v2: bool  # the V2 model runner runs
    keys: GraphKeys | None  # the V1 runner's keys under speculative decoding or LoRA (graph_keys.py)
    query: int  # the decode query length (VllmConfig's, either runner)
    sizes: list[int]  # the capture sizes, largest stated or default (`_sizes`)

    @property
    def decode_sizes(self) -> list[int]:
        """The plain decode sizes FULL_AND_PIECEWISE and FULL_DECODE_ONLY capture FULL: those ≤ max_num_seqs."""
        return [size for size in self.sizes if size <= self.seqs]


def _grid(inputs: CalibrationInputs) -> _Grid:
    tokens, seqs, _ = batch_limits(inputs)
    stated = graph_config(inputs.settings.flags, inputs.version)
    # vLLM's `is_device_capability_family(100)`: capability major 10 (platforms/interface.py:481-493 at v0.28.0,
    # :587-598 at v0.34.0), kvtop's SM100 family
    family_100 = SM100.holds(inputs.gpu_name)
    wide = (WIDE_GRID_ERAS.at(inputs.version) and family_100 and stated.capture_sizes is None
            and stated.max_capture_size is None)  # fmt: skip
    v2 = inputs.model is not None and runs_v2(inputs.version, inputs.model, inputs.settings)
    keys = None if v2 or wide else graph_keys(inputs.settings, config_fields(inputs.settings.flags, inputs.version),
                                              inputs.version)  # speculative decoding, LoRA (graph_keys.py)  # fmt: skip
    query = decode_query_len(inputs.settings, inputs.version)  # VllmConfig's, either runner
    sizes = [] if wide else _sizes(inputs, tokens, seqs, query, family_100)
    mode = spec_graph_mode(inputs, stated.mode or "FULL_AND_PIECEWISE").mode  # lowered under spec decoding
    return _Grid(tokens, seqs, mode, wide, v2, keys, query, sizes)


def _sizes(inputs: CalibrationInputs, tokens: int, seqs: int, query: int, family_100: bool) -> list[int]:
    """The capture sizes of the launch's compilation config, else the release's defaults (`graph_counts`)."""
    stated = graph_config(inputs.settings.flags, inputs.version)
    if stated.capture_sizes is not None:
        return [size for size in stated.capture_sizes if size <= tokens]
    cap = graph_size_cap(inputs.version, family_100)
    default = min(2 * seqs * query, cap)
    largest = stated.max_capture_size if stated.max_capture_size is not None else default
    added = added_sizes(inputs, tokens, seqs, query, default if stated.max_capture_size is None else None, cap)
    return capture_sizes(min(largest, tokens), smallest_sizes(inputs.settings.flags, inputs.version), added)


def largest_full_size(inputs: CalibrationInputs) -> int | None:
    """The token count of the first FULL graph `profile_cudagraph_memory` captures (its descriptors run largest
    first): the largest capture size in mode FULL, the largest decode size (≤ max_num_seqs) in FULL_AND_PIECEWISE or
    FULL_DECODE_ONLY; None without FULL graphs and where kvtop keys the sizes otherwise (speculative decoding, LoRA,
    the V2 runner, v0.34's wide grids: graph_counts)."""
    grid = _grid(inputs)
    if grid.mode not in ("FULL", "FULL_AND_PIECEWISE", "FULL_DECODE_ONLY"):
        return None
    if grid.wide or grid.v2 or grid.keys is not None:
        return None
    full = grid.sizes if grid.mode == "FULL" else grid.decode_sizes
    return max(full) if full else None


def with_pinned_segments(term: TermEstimate, version: ResolvedVersion) -> TermEstimate:
    """`term` naming the segments the profile may pin where the release's worker profiles without the split limit
    (`PROFILE_SPLIT_UNLIMITED`), whichever runner runs; `term` unchanged at other releases."""
    if not PROFILE_SPLIT_UNLIMITED.at(version):
        return term
    return term.model_copy(update={"basis": f"{term.basis}; {PINNED_SEGMENTS}"})
