"""The CUDA-graph capture sizes and keys under speculative decoding and LoRA: the V1 model runner's at v0.13.0-v0.28.x,
the V2 runner's decode keys and both runners' sizes from v0.29.0; how many graphs `profile_cudagraph_memory` counts
(docs/engines/vllm.md §2; `profile_run.graph_counts` takes the sizes).

What the code does (read in the v0.13.0, v0.18.0, v0.19.0, v0.20.0, v0.22.0 and v0.27.1 wheels):
- The default largest size grows with the decode query length q = 1 + num_speculative_tokens:
  min(max_num_seqs × q × 2, 512; 1024 on capability family 100 from v0.28.0: profile_run.FAMILY_100_CAP)
  (config/vllm.py `_set_cudagraph_sizes`, :1067-1074 at v0.13.0, :1650-1660 at
  v0.22.0, :1941 at v0.28.0; before v0.13.0 min(max_num_seqs × 2, 512)).
- Where the decode graphs are FULL, the sizes are rounded up to multiples of q, de-duplicated and kept up to the
  largest (or [q] where none is left): `CompilationConfig.adjust_cudagraph_sizes_for_spec_decode` (config/
  compilation.py:1067 at v0.13.0, :1464-1510 at v0.22.0), called by the V1 runner with FULL_AND_PIECEWISE or
  FULL_DECODE_ONLY only (gpu_model_runner.py:4896-4912 at v0.13.0, :6085-6090 at v0.18.0, :6387-6390 at v0.19.0), and
  from v0.20.0 by `resolve_cudagraph_mode_and_sizes` wherever the decode mode is FULL, FULL included
  (compilation.py:1411-1418 at v0.20.0, :1428-1435 at v0.22.0, :1481-1488 at v0.27.1 for the V1 runner only).
- The dispatcher's FULL decode keys are the sizes x with q ≤ x ≤ q × max_num_seqs (v1/cudagraph_dispatcher.py:133
  at v0.13.0, :225 at v0.22.0, :221 at v0.27.1), and every key is made once per LoRA case: with --enable-lora and
  `cudagraph_specialize_lora` (True by default: compilation.py:518 at v0.13.0, :643 v0.22.0, :660 v0.27.1) graphs with
  and without LoRA ([True, False], dispatcher :99-104 at v0.13.0; from v0.18.0 [0] + `get_captured_lora_counts`,
  lora/utils.py:48-62: max_loras + 1; under --specialize-active-lora, which kvtop refuses as not modelled
  (flags_unmodelled.py), every power of two up to max_loras and max_loras + 1 besides), else with LoRA only. `profile_cudagraph_memory` counts every key (`get_capture_descs`,
  dispatcher :330-354 and gpu_model_runner.py:6265-6280 at v0.22.0).
The sizes are VllmConfig's, so every runner's (V1 and V2) largest default size grows with q (`QUERY_SIZED_LARGEST`).
From v0.29.0 (`SPEC_DECODE_SIZES`) `_set_cudagraph_sizes` adds the uniform decode sizes n × q for n in a request-count
grid up to min(max_num_seqs, the cap) (1, 2, 4, every 8 below 256, every 16, and the count itself), those at or below
the default largest size and max_num_batched_tokens, where no largest size is stated (config/vllm.py:2030-2091 and
:2142-2144 at v0.29.0, :2241-2302 and :2353-2355 at v0.30.0, :2381-2442 and :2495-2497 at v0.32.0, :2487-2548 and
:2601-2603 at v0.33.0, :2425-2447 and :2500-2502 at v0.34.0); v0.28.0's block has none (its max_num_batched_tokens
append sits 45 lines after the cap, :1985-1990 against :1937-1943).
The V2 runner (`V2_DECODE_KEYS`): at v0.22.0-v0.24.x its `CudaGraphManager` rounds the sizes to multiples of q in
every mode (`adjust_cudagraph_sizes_for_spec_decode`, v1/worker/gpu/cudagraph_utils.py:113-116 at v0.22.0) and keys
FULL decode graphs at q ≤ size ≤ q × max_num_seqs, as the V1 dispatcher; from v0.25.0 `_init_candidates` keys a FULL
decode graph (with a separate decode routine) at each size rounded up to a multiple of q, kept where at most
q × max_num_seqs and the largest size, once each, the sizes unrounded (cudagraph_utils.py:232-255 at v0.25.0, :239-262
at v0.28.0, :252-274 at v0.29.0, :321-343 at v0.33.0); the mixed mode's graphs stay one a size.
Not modelled: the drafter's own graphs (EAGLE's `drafter.initialize_cudagraph_keys`, gpu_model_runner.py:6723 at
v0.22.0; V2 measures its speculator's in full from v0.29.0); the V2 runner's decode keys at v0.34.0
(`decode_cudagraph_capture_shapes`, cudagraph_utils.py:289-360 at v0.34.0), its LoRA cases and adaptive
verification's varlen decode graphs: named on the graph term where V2 measures (`v2_graphs.v2_graphs_not_modelled`); dynamic
speculative decoding's tiers (`num_speculative_tokens_per_batch_size`, one q per tier); the V1 runner's keys from
v0.29.0 (`KEYS_READ`): kvtop keeps a plain count there (a decode graph a size up to max_num_seqs).
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.engines.vllm.graph_grids import counts_by_mode
from kvtop.domain.engines.vllm.spec_methods import draft_tokens
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.rounding import round_up
from kvtop.domain.span import flag_set

# Where the V1 runner's keys were read as this module counts them
KEYS_READ: Eras[bool] = Eras((
    Era("", False, "not read before v0.13.0 (its counts charge nothing before v0.20.0: profile_run.GRAPHS_CHARGED)"),
    Era("0.13.0", True, "module docstring: v0.13.0, v0.18.0-v0.22.0 and v0.27.1 read"),
    Era("0.29.0", False, "every model on the V2 runner (runner_eras.runs_v2): its keys not read"),
))  # fmt: skip
# Which decode modes round the sizes to multiples of the decode query length (module docstring)
ROUNDING_MODES: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), "no rounding before v0.13.0"),
    Era("0.13.0", frozenset({"FULL_AND_PIECEWISE", "FULL_DECODE_ONLY"}),
        "gpu_model_runner.py:4896-4912 at v0.13.0 (FULL decode and separate_routine), :6387-6390 at v0.19.0"),
    Era("0.20.0", frozenset({"FULL_AND_PIECEWISE", "FULL_DECODE_ONLY", "FULL"}),
        "config/compilation.py:1411-1418 at v0.20.0: decode_mode() FULL, FULL included"),
))  # fmt: skip
SPECIALIZE_FIELD = "cudagraph_specialize_lora"  # the compilation config's field (read here)
# Whether the default largest size is min(max_num_seqs × q × 2, cap): VllmConfig's, so on either runner
QUERY_SIZED_LARGEST: Eras[bool] = Eras((
    Era("", False, "before v0.13.0 min(max_num_seqs × 2, 512)"),
    Era("0.13.0", True, "config/vllm.py:1067-1074 at v0.13.0, :1650-1660 at v0.22.0, :2009-2013 at v0.29.0 "
                        "(uniform_decode_query_len = 1 + num_speculative_tokens, :624-642)"),
))  # fmt: skip
SPEC_DECODE_SIZES: Eras[bool] = Eras((
    Era("", False, "v0.28.0 config/vllm.py: the strided sizes only (no uniform_decode_sizes)"),
    Era("0.29.0", True, "v0.29.0 config/vllm.py:2030-2091 uniform_decode_sizes, :2142-2144 appended (module "
                        "docstring: v0.30.0, v0.32.0-v0.34.0 the same)"),
))  # fmt: skip
# How the V2 runner keys its decode graphs under speculative decoding (module docstring)
V2_DECODE_KEYS: Eras[str | None] = Eras((
    Era("", None, "no V2 runner by default before v0.22.0 (runner_eras.MODEL_RUNNER_ERAS)"),
    Era("0.22.0", "sizes_rounded", "v1/worker/gpu/cudagraph_utils.py:113-116 at v0.22.0 (:135 at v0.23.0) calls "
        "adjust_cudagraph_sizes_for_spec_decode whatever the mode (config/compilation.py:1464-1510), :137-148 keys "
        "q <= size <= q x max_num_seqs (v0.24.0 :206-216)"),
    Era("0.25.0", "keys_rounded", "cudagraph_utils.py:232-255 at v0.25.0 (v0.26.0 :227-250, v0.27.1 :228-251, "
        "v0.28.0 :239-262, v0.29.0 :252-274, v0.30.0 :312-334, v0.32.0 :316-338, v0.33.0 :321-343)"),
    Era("0.34.0", None, "decode_cudagraph_capture_shapes (cudagraph_utils.py:289-360 at v0.34.0) not read"),
))  # fmt: skip


class GraphKeys(BaseModel):
    """What multiplies or reshapes the V1 runner's capture keys: the decode query length (1 + speculative tokens) and
    the LoRA cases each size is captured for."""

    model_config = ConfigDict(frozen=True)
    query_len: int = 1
    lora_cases: int = 1


def spec_tokens(settings: LaunchSettings) -> int:
    """num_speculative_tokens the launch states (spec_methods.draft_tokens, as deployment.setup reads it); 0 where none."""
    return draft_tokens(settings) or 0


def decode_query_len(settings: LaunchSettings, version: ResolvedVersion) -> int:
    """The decode query length the default largest capture size grows with: 1 + num_speculative_tokens from v0.13.0
    (`QUERY_SIZED_LARGEST`), 1 before."""
    return 1 + spec_tokens(settings) if QUERY_SIZED_LARGEST.at(version) else 1


def spec_decode_sizes(query_len: int, seqs: int, largest: int, cap: int, version: ResolvedVersion) -> tuple[int, ...]:
    """v0.29.0's uniform decode sizes (`SPEC_DECODE_SIZES`): n × q for the request counts n up to min(max_num_seqs,
    cap), those at or below the default `largest` (the caller keeps those at or below max_num_batched_tokens and
    passes none where the largest size is stated); none under plain decoding."""
    if query_len <= 1 or not SPEC_DECODE_SIZES.at(version):
        return ()
    requests = min(seqs, cap)
    counts = {1, 2, 4, requests, *range(8, 256, 8), *range(256, requests + 1, 16)}
    return tuple(sorted(n * query_len for n in counts if n <= requests and n * query_len <= largest))


def v2_decode_graphs(sizes: list[int], query_len: int, seqs: int) -> int:
    """The V2 runner's FULL decode keys from v0.25.0 (`V2_DECODE_KEYS` "keys_rounded"): the sizes rounded up to
    multiples of q, kept at or below q × max_num_seqs and the largest size, once each (a size ≤ max_num_seqs each at
    q = 1)."""
    return len(rounded_up(sizes, query_len, min(query_len * seqs, sizes[-1]) if sizes else 0))


def rounded_up(sizes: list[int], query_len: int, bound: int) -> list[int]:
    """The sizes rounded up to multiples of the decode query length, kept at or below `bound`, once each, in order:
    the one rounding both runners' keys take (the V1 runner's `adjust_cudagraph_sizes_for_spec_decode` up to the
    largest size, `rounded_sizes`; V2's FULL decode keys up to q × max_num_seqs too, `v2_decode_graphs`)."""
    return sorted({round_up(size, query_len) for size in sizes if round_up(size, query_len) <= bound})


def lora_cases(settings: LaunchSettings, fields: Mapping[str, object]) -> int:
    """The LoRA cases each capture size is captured for (module docstring); 1 without --enable-lora."""
    if not flag_set(settings, "enable-lora"):
        return 1
    return 1 if fields.get(SPECIALIZE_FIELD) is False else 2  # with LoRA only, else with and without


def graph_keys(settings: LaunchSettings, fields: Mapping[str, object], version: ResolvedVersion) -> GraphKeys | None:
    """The launch's decode query length and LoRA cases where the V1 runner's keys were read (`KEYS_READ`) and either
    differs from plain decoding; None otherwise (the caller checks the runner)."""
    if not KEYS_READ.at(version):
        return None
    query, cases = decode_query_len(settings, version), lora_cases(settings, fields)  # QUERY_SIZED_LARGEST from v0.13.0 too
    if query == 1 and cases == 1:
        return None
    return GraphKeys(query_len=query, lora_cases=cases)


def rounded_sizes(sizes: list[int], query_len: int, mode: str | None, version: ResolvedVersion) -> list[int]:
    """`adjust_cudagraph_sizes_for_spec_decode`: the sizes rounded up to multiples of the decode query length, kept up
    to the largest, where the V1 runner rounds for this mode (`ROUNDING_MODES`); in every mode where `mode` is None
    (the V2 runner at v0.22.0-v0.24.x)."""
    rounds = mode is None or mode in ROUNDING_MODES.era(version).value
    if query_len <= 1 or not sizes or not rounds:
        return sizes
    largest = sizes[-1]
    return rounded_up(sizes, query_len, largest) or ([query_len] if query_len <= largest else [])


def keyed_counts(sizes: list[int], seqs: int, mode: str, keys: GraphKeys) -> tuple[int, int]:
    """(PIECEWISE graphs, FULL graphs) the V1 dispatcher keys: mixed graphs at every size, FULL decode graphs at the
    sizes from q to q × max_num_seqs (FULL_AND_PIECEWISE, FULL_DECODE_ONLY), each once per LoRA case."""
    q = keys.query_len
    piecewise, full = counts_by_mode(mode, len(sizes), len([size for size in sizes if q <= size <= q * seqs]))
    return piecewise * keys.lora_cases, full * keys.lora_cases
