"""The CUDA-graph mode vLLM lowers to under speculative decoding where an attention backend cannot run a FULL graph of
the uniform decode batch (docs/engines/vllm.md §2.4, "The mode lowered under speculative decoding").

With a speculative draft every decode request runs q = 1 + num_speculative_tokens tokens (any method: EAGLE, MTP,
n-gram, draft model; `uniform_decode_query_len`). A FULL decode graph then needs every attention group's builder to
support a uniform batch (`AttentionCGSupport.UNIFORM_BATCH` or ALWAYS); where the least of them is
UNIFORM_SINGLE_TOKEN_DECODE, vLLM logs 'CUDAGraphMode.X is not supported with spec-decode for attention backend B
(support: …); setting cudagraph_mode=PIECEWISE' and captures no FULL graph, nor rounds the sizes to multiples of q
(the rounding follows the check). The rule: `resolve_cudagraph_mode_and_sizes`, config/compilation.py:1375-1385 at
v0.20.0, :1390-1400 v0.24.0, :1394-1404 v0.25.0, :1443-1453 v0.27.1, :1444-1454 v0.28.0, :1450-1460 v0.29.0,
:1458-1468 v0.30.0, :1444-1454 v0.32.0, :1451-1461 v0.33.0, :1614-1624 v0.34.0, called by both runners (V1
gpu_model_runner.py `_check_and_update_cudagraph_mode`, V2 gpu/model_runner.py:458 at v0.24.0, :792 at v0.34.0); the
same check sat in gpu_model_runner.py from v0.10.2 (:3266) to v0.19.0 (:6350), where the graphs are not charged
(`READ`). The lowered mode is PIECEWISE where the splitting ops hold attention (VLLM_COMPILE's default), else NONE
(a launch's own splitting ops or attention-quant fusion: not read).

The attention layers' backend is `attention_select.selected_backend`'s. Its support for a uniform batch of q > 1, by
release (causal attention, decode context parallel 1, NVIDIA's artifactory reachable for TRT-LLM's cubins):
- FLASH_ATTN: always (FA3 ALWAYS, FA2 UNIFORM_BATCH: flash_attn.py:296 at v0.20.0, :357 v0.29.0, :627 v0.34.0);
  TRITON_ATTN: ALWAYS (triton_attn.py:127 at v0.20.0, :97 v0.34.0).
- FLASHINFER (`FLASHINFER_UNIFORM`; `get_cudagraph_support`): only through TRT-LLM attention
  (`can_use_trtllm_attention`, utils/flashinfer.py) at v0.20.0-v0.27.x, which runs on capability family 100 alone
  (flashinfer.py:705-743 at v0.20.0, :745-783 v0.24.0; v0.25.0 adds sm90's explicit UNIFORM_SINGLE_TOKEN_DECODE,
  :851-891, :895-936 v0.27.1); from v0.28.0 sm12x too (XQA decode, :979-1025 at v0.28.0, :974-1015 v0.29.0); from
  v0.30.0 sm90 too, where XQA takes the head size (16-256, a multiple of 16: `_is_xqa_head_dim_supported`,
  :977-1012 at v0.30.0, :1036-1080 v0.32.0); from v0.33.0 every GPU below sm90 too (its FA2 native decode takes
  uniform multi-token queries, `_use_fa2_native_decode`, :1176-1226 at v0.33.0, :1203-1253 v0.34.0).
- The state layers' builders: Mamba-1 / Mamba-2 / short-conv (BaseMambaAttentionMetadataBuilder, mamba_attn.py:80
  at v0.20.0, :90 v0.34.0) and Gated DeltaNet (gdn_attn.py:77 at v0.20.0, :141 v0.34.0) UNIFORM_BATCH; lightning
  attention's (linear_attn.py:50 at v0.20.0) UNIFORM_SINGLE_TOKEN_DECODE through v0.28.x, conditional from v0.29.0
  (:125, not read).
Not modelled (the stated or default mode kept, said on the graph term): MLA's backends (CUTLASS_MLA, and TRITON_MLA
at v0.26.0-v0.28.x, support single-token decode only; TRITON_MLA conditional at v0.29.x-v0.30.x), a backend the
selector's reading does not give (`attention_select`), the other state mixers, decode context parallel above 1
(FlashInfer single-token there: sm12x from v0.28.0, every GPU from v0.30.0), a method stated without
num_speculative_tokens (vLLM fills it from the MTP layers' n_predict, config/speculative.py:803-810 at v0.24.0).
Not read (the pick as if unset): VLLM_BATCH_INVARIANT, a host without the artifactory and
`--attention-config.use_trtllm_attention=false` (FlashInfer's TRT-LLM path off: single-token on sm10x too), a
DFlash drafter's `use_non_causal` and the drafter's own `speculative_config.attention_backend` / `kv_cache_dtype`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.versions import Era, Eras
from kvtop.domain.engines.vllm.attention_select import selected_backend
from kvtop.domain.engines.vllm.compilation import graph_config
from kvtop.domain.engines.vllm.graph_keys import spec_tokens
from kvtop.domain.engines.vllm.spec_methods import stated_method
from kvtop.domain.gpus import compute_capability
from kvtop.domain.model_layers import StateKind

DECODE_FULL_MODES = frozenset({"FULL", "FULL_AND_PIECEWISE", "FULL_DECODE_ONLY"})  # decode_mode() FULL
# Where kvtop applies the rule: the releases that charge the graphs (profile_run.GRAPHS_CHARGED) and were read
READ: Eras[bool] = Eras((
    Era("", False, "the check runs from v0.10.2 (gpu_model_runner.py:3266) but the graphs are not charged before "
                   "v0.20.0 (profile_run.GRAPHS_CHARGED)"),
    Era("0.20.0", True, "config/compilation.py resolve_cudagraph_mode_and_sizes (module docstring: v0.20.0 to "
                        "v0.34.0)"),
))  # fmt: skip

Capability = tuple[int, int]


def _trtllm(cap: Capability, head_dim: int) -> bool:
    return cap[0] == 10


def _trtllm_xqa12(cap: Capability, head_dim: int) -> bool:
    return cap[0] in (10, 12)


def _xqa_head(head_dim: int) -> bool:
    return 16 <= head_dim <= 256 and head_dim % 16 == 0


def _trtllm_xqa(cap: Capability, head_dim: int) -> bool:
    return cap[0] == 10 or (cap[0] in (9, 12) and _xqa_head(head_dim))


def _fa2_native(cap: Capability, head_dim: int) -> bool:
    return cap < (9, 0) or _trtllm_xqa(cap, head_dim)


# Whether FlashInfer's builder supports a uniform batch of q > 1 tokens (module docstring), by capability and head size
FLASHINFER_UNIFORM: Eras[Callable[[Capability, int], bool]] = Eras((
    Era("", _trtllm, "flashinfer.py:705-743 at v0.20.0, :745-783 at v0.24.0, :851-891 at v0.25.0, :895-936 at "
                     "v0.27.1: TRT-LLM attention, capability family 100 (utils/flashinfer.py supports_trtllm_attention)"),
    Era("0.28.0", _trtllm_xqa12, "flashinfer.py:979-1025 at v0.28.0, :974-1015 at v0.29.0: sm12x's XQA decode too"),
    Era("0.30.0", _trtllm_xqa, "flashinfer.py:977-1012 at v0.30.0, :1036-1080 at v0.32.0: sm90 and sm12x where XQA "
                               "takes the head size"),
    Era("0.33.0", _fa2_native, "flashinfer.py:1176-1226 at v0.33.0, :1203-1253 at v0.34.0: below sm90 the FA2 "
                               "native decode takes uniform queries"),
))  # fmt: skip
FLASHINFER_WORDS: dict[Callable[[Capability, int], bool], str] = {
    _trtllm: "TRT-LLM attention, on sm10x",
    _trtllm_xqa12: "TRT-LLM attention or XQA, on sm10x or sm12x",
    _trtllm_xqa: "TRT-LLM attention or XQA, on sm10x, or sm90 and sm12x at head sizes 16-256",
    _fa2_native: "sm10x, XQA on sm90 and sm12x at head sizes 16-256, or FA2's native decode below sm90",
}
UNIFORM_STATES = frozenset({StateKind.MAMBA1, StateKind.MAMBA2, StateKind.SHORT_CONV, StateKind.GATED_DELTA_NET})
LIGHTNING_SINGLE: Eras[bool | None] = Eras((
    Era("", True, "linear_attn.py:50 at v0.20.0: UNIFORM_SINGLE_TOKEN_DECODE"),
    Era("0.29.0", None, "linear_attn.py:125 at v0.29.0: conditional, not read"),
))  # fmt: skip


@dataclass(frozen=True)
class SpecGraphMode:
    """The mode the launch's graphs run in under speculative decoding: `mode` (the stated or default one where kept,
    PIECEWISE where lowered) and the words for the graph term ('' where nothing is said)."""

    mode: str
    lowered: bool
    words: str


def _single_token_only(inputs: CalibrationInputs) -> tuple[bool, str] | None:
    """(whether the least attention support is single-token decode, which builder and why); None where not modelled."""
    model = inputs.model
    pick = selected_backend(inputs)
    cap = compute_capability(inputs.gpu_name)
    if model is None or pick is None or cap is None or inputs.settings.dcp > 1:
        return None  # decode context parallel: FlashInfer's DCP path is single-token (module docstring), not modelled
    where = f"sm{cap[0]}{cap[1]}"
    if pick.backend == "FLASHINFER" and not FLASHINFER_UNIFORM.at(inputs.version)(cap, model.head_dim):
        rule = FLASHINFER_WORDS[FLASHINFER_UNIFORM.at(inputs.version)]
        return True, f"FLASHINFER runs on {where} as {pick.why}; at this release its FULL graphs of q > 1 tokens need {rule}; it"
    state = model.state
    if state is not None and state.kind not in UNIFORM_STATES:
        single = LIGHTNING_SINGLE.at(inputs.version) if state.kind == StateKind.LIGHTNING else None
        if single is None:
            return None
        if single:
            return True, f"lightning attention's builder, {LIGHTNING_SINGLE.era(inputs.version).source},"
    return False, f"{pick.backend} on {where}"


def spec_graph_mode(inputs: CalibrationInputs, mode: str) -> SpecGraphMode:
    """The graphs' mode given the stated or default `mode`: PIECEWISE where speculative decoding meets an attention
    builder without uniform-batch graphs (module docstring), else `mode`, with words where the support is not
    modelled."""
    if mode not in DECODE_FULL_MODES or not READ.at(inputs.version):
        return SpecGraphMode(mode, False, "")
    if spec_tokens(inputs.settings) == 0:
        if stated_method(inputs.settings) is None:
            return SpecGraphMode(mode, False, "")
        found = None  # a method without num_speculative_tokens: vLLM's count (n_predict) not read
    else:
        found = _single_token_only(inputs)
    if found is None:
        return SpecGraphMode(mode, False, (
            "whether the attention backend runs FULL graphs of the speculative decode batch is not modelled "
            "(vLLM lowers the mode to PIECEWISE where it does not: spec_graph_mode.py)"))  # fmt: skip
    single, why = found
    if not single:
        return SpecGraphMode(mode, False, "")
    return SpecGraphMode("PIECEWISE", True, (
        f"{mode} lowered to PIECEWISE under speculative decoding: {why} takes no FULL graph of the uniform "
        f"{1 + spec_tokens(inputs.settings)}-token decode batch (config/compilation.py "
        f"resolve_cudagraph_mode_and_sizes)"))  # fmt: skip


def spec_mode_words(inputs: CalibrationInputs) -> str:
    """The graph term's words on the launch's mode under speculative decoding (lowered, or not modelled); ''
    elsewhere."""
    stated = graph_config(inputs.settings.flags, inputs.version).mode
    return spec_graph_mode(inputs, stated or "FULL_AND_PIECEWISE").words
