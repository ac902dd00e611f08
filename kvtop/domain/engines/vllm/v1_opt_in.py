"""vLLM's V1 engine before v0.8.0, where `VLLM_USE_V1=1` opts into it (docs/engines/vllm.md §2, "V1 opt-in").

envs.py reads `bool(int(os.getenv("VLLM_USE_V1", "0")))` (v0.6.4 :475-476, v0.6.5 and v0.6.6 :459-460, v0.7.0
:476-477, v0.7.1 :479-480, v0.7.2 :494-495, v0.7.3 :503-504; PyPI wheels), so any int but 0 starts V1; v0.6.3.post1
has neither the variable nor vllm/v1/. What such a start does, read in the wheels of v0.6.4 to v0.7.3 and v0.8.0:

- The charge (v0.6.5–v0.7.3) is v0.8.0's, the `device_used` era kvtop models (`v0_charge.PROFILE_CHARGE_ERAS`):
  torch's allocated peak after `profile_run`, plus `total − free − torch's allocated bytes` after `empty_cache`
  (v1/worker/gpu_worker.py `determine_num_available_blocks` v0.6.5 and v0.6.6 :113-163; `determine_available_memory`
  v0.7.0 and v0.7.1 :145-192, v0.7.2 :146-193, v0.7.3 :136-183; the same statements as v0.8.0's :139-186).
  v0.6.4's V1 charges `init_gpu_memory − free` (:107-131): not modelled.
- The defaults: 1024 seqs (`EngineArgs.__post_init__`, `256 if not envs.VLLM_USE_V1 else 1024`: arg_utils.py :210 at
  v0.6.5, :213 at v0.6.6 and v0.7.0, :214 at v0.7.1, :217 at v0.7.2, :224 at v0.7.3; v0.8.0 keeps 1024, :1715-1717);
  chunked prefill always (`_override_v1_engine_args`); `max_num_batched_tokens` 2048 for the API server, 8192 for the
  LLM class (v0.6.5 :1252-1256, v0.6.6 :1265-1271), from v0.7.0 8192 / 16384 where the device's name holds "h100" or
  "h200" (:1281-1291 at v0.7.0, :1293-1303 at v0.7.1, :1309-1319 at v0.7.2, :1368-1378 at v0.7.3); another usage
  context (`LLMEngine` directly) keeps SchedulerConfig's 2048 with chunked prefill (config.py:1532 at v0.7.3).
- The profile is not v0.8.0's: `profile_run` runs the forward over `max_num_batched_tokens` and `compute_logits`,
  no sampler ("TODO(woosuk): Consider the memory usage of the sampler"; v0.8.0 added `_dummy_sampler_run`): on every
  token's hidden state up to v0.7.2 (gpu_model_runner.py:670-672 at v0.6.5, :708-710 at v0.6.6, :985-986 at v0.7.0 and
  v0.7.1, :1009-1010 at v0.7.2), on one row a request of `max_num_seqs` at v0.7.3 (:1285-1305, `hidden_states[
  logit_indices]`). Its peak is counted (calibration_activation.py `_opt_in_activation`).
- CUDA graphs are captured after the KV cache (`compile_or_warm_up_model`), outside the charge, as in v0.8.0.

Not modelled, refused by name: pipeline stages ("Pipeline parallelism is not yet implemented in v1",
v1/executor/multiproc_executor.py:50 at v0.6.6, :63 at v0.7.3), MLA (V1's backends are flash_attn, pallas and rocm_attn
at v0.7.3), windows, state and cross-attention layers (every decoder layer one FullAttentionSpec, anything else
NotImplementedError: gpu_model_runner.py get_kv_cache_spec, kv_cache_utils.py:572 at v0.7.3), a multimodal model (its
encoder profile is not counted), LoRA and speculative decoding (their buffers and drafts are not counted).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.launch_tokens import switch_in
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec

USE_V1_ENV = "VLLM_USE_V1"
OptIn = Literal["none", "not_modelled", "planned"]
V1_OPT_IN_ERAS: Eras[OptIn] = Eras((
    Era("", "none", "no V1 engine: v0.6.3.post1's envs.py has no VLLM_USE_V1 and its wheel no vllm/v1/"),
    Era("0.6.4", "not_modelled", "v0.6.4's V1 charges init_gpu_memory − free after its profile (v1/worker/"
                                 "gpu_worker.py:107-131), a form no V1 release kvtop models has"),
    Era("0.6.5", "planned", "V1 opt-in (envs.py VLLM_USE_V1 defaults to 0); its charge v0.8.0's: v1/worker/"
                            "gpu_worker.py v0.6.5 :113-163, v0.7.0 :145-192, v0.7.3 :136-183 (v0.8.0 :139-186)"),
    Era("0.8.0", "none", "V1 the default engine from v0.8.0"),
))  # fmt: skip
OPT_IN_MAX_NUM_SEQS = 1024
# the logits the profile computes: every token's (v0.6.5–v0.7.2) or one row a request (v0.7.3)
LogitsRows = Literal["tokens", "seqs"]
LOGITS_ROWS_ERAS: Eras[LogitsRows] = Eras((
    Era("", "tokens", "compute_logits on every token's hidden state (gpu_model_runner.py:985-986 at v0.7.0)"),
    Era("0.7.3", "seqs", "compute_logits on hidden_states[logit_indices], one row a request of max_num_seqs "
                         "(gpu_model_runner.py:1285-1305 at v0.7.3)"),
))  # fmt: skip
# (API server, LLM class) tokens: on every GPU, then by the device's name
LARGE_DEVICE_TOKENS_ERAS: Eras[bool] = Eras((
    Era("", False, "arg_utils.py _override_v1_engine_args: 2048 / 8192 on every GPU (v0.6.5 :1252-1256)"),
    Era("0.7.0", True, "arg_utils.py _override_v1_engine_args: 8192 / 16384 where the device's name holds 'h100' or "
                       "'h200' (:1281-1291 at v0.7.0, :1368-1378 at v0.7.3)"),
))  # fmt: skip
LARGE_DEVICE_NAMES = ("h100", "h200")


def named_large_device(gpu_name: str | None) -> bool:
    """Whether the device's name holds 'h100' or 'h200', as vLLM's arg_utils.py tests it (`LARGE_DEVICE_TOKENS_ERAS`;
    V1's batch rows before v0.8.5, v1_batch_tier.py)."""
    return any(n in (gpu_name or "").lower() for n in LARGE_DEVICE_NAMES)


def use_v1_env(flags: Mapping[str, object] | None) -> int | None:
    """The launch's VLLM_USE_V1 as envs.py reads it (`bool(int(value))`): None where unset or a value int() refuses
    (not read)."""
    value = (flags or {}).get(USE_V1_ENV)
    try:
        return None if value is None else int(str(value).strip())
    except ValueError:
        return None


def opts_into_v1(version: ResolvedVersion, flags: Mapping[str, object] | None) -> bool:
    """Whether the launch runs the opt-in V1 engine of a release kvtop plans it in (v0.6.5–v0.7.3)."""
    return V1_OPT_IN_ERAS.at(version) == "planned" and use_v1_env(flags) not in (None, 0)


def opt_in_batch(
    gpu_name: str | None, version: ResolvedVersion, llm_class: bool, engine_context: bool
) -> tuple[int, str]:
    """(max_num_batched_tokens, why) an opt-in V1 start takes with no flag (the module's docstring)."""
    if engine_context:
        return 2048, "SchedulerConfig's 2048 with chunked prefill (ENGINE_CONTEXT: no V1 default)"
    large = LARGE_DEVICE_TOKENS_ERAS.at(version) and named_large_device(gpu_name)
    tokens = (16384 if large else 8192) if llm_class else (8192 if large else 2048)
    entry = "LLM class" if llm_class else "API server"
    return tokens, f"the opt-in V1's {entry} defaults (v1_opt_in.py)"


def _unmodelled(model: ModelSpec, layout: ParallelLayout, flags: Mapping[str, object]) -> list[str]:
    """What of the launch the opt-in V1 plan does not model (the module's docstring), in words."""
    parts = []
    if layout.pp > 1:
        parts.append("pipeline stages (V1 raises 'Pipeline parallelism is not yet implemented in v1')")
    if model.is_mla:
        parts.append("MLA (V1 had no MLA backend)")
    if (
        model.sliding_window is not None
        or model.state is not None
        or model.attention_free
        or model.chunked_local
        or model.cross_attention_layers
        or model.encoder_layers
        or model.compressed is not None
    ):
        parts.append("layers other than full attention (V1 sized every decoder layer as FullAttentionSpec)")
    if model.multimodal:
        parts.append("a multimodal model (its encoder profile is not counted)")
    if (lora := switch_in(flags, "enable-lora")) is not None and lora[0]:  # not --no-enable-lora, nor a false word
        parts.append("LoRA (its buffers in the profile are not counted)")
    if any(str(name).startswith(("speculative", "num-speculative")) for name in flags):
        parts.append("speculative decoding (its drafts are not counted)")
    return parts


def check_v1_opt_in(
    version: ResolvedVersion, flags: Mapping[str, object] | None,
    model: ModelSpec | None = None, layout: ParallelLayout | None = None,
) -> None:  # fmt: skip
    """Refuse by name a launch that opts into V1 where kvtop does not model that V1 (`V1_OPT_IN_ERAS`: v0.6.4), or
    with what the opt-in plan leaves out (`_unmodelled`); V0's charge and defaults are never planned for it."""
    value = use_v1_env(flags)
    if value in (None, 0):
        return
    era = V1_OPT_IN_ERAS.era(version)
    if era.value == "not_modelled":
        raise UnsupportedModelError(
            f"vLLM {version.label} under {USE_V1_ENV}={value} runs its V1 engine, which kvtop does not model there "
            f"({era.source}); it plans V1 opted into from v0.6.5: drop {USE_V1_ENV} to plan V0, or plan v0.6.5 or later",
            field=USE_V1_ENV,
        )
    parts = (
        _unmodelled(model, layout or ParallelLayout(), flags or {})
        if model and era.value == "planned"
        else []
    )
    if parts:
        raise UnsupportedModelError(
            f"vLLM {version.label} under {USE_V1_ENV}={value} runs its opt-in V1 engine, which kvtop plans for a "
            f"text model of full-attention layers only: {'; '.join(parts)} not modelled there (v1_opt_in.py); drop "
            f"{USE_V1_ENV} to plan V0, or plan v0.8.0 or later",
            field=USE_V1_ENV,
        )
