"""vLLM's `--mamba-cache-dtype` / `--mamba-ssm-cache-dtype` (CacheConfig.mamba_cache_dtype / mamba_ssm_cache_dtype):
the element bytes of a Mamba layer's conv and SSM (temporal) state, hence its state page and the hybrid block
(hybrid.py), read at v0.10.1, v0.10.2, v0.11.0, v0.12.0, v0.13.0, v0.16.0, v0.17.0, v0.17.1, v0.21.0, v0.24.0, v0.34.0.

- `--mamba-cache-dtype`: the conv state's dtype, `get_kv_cache_torch_dtype(mamba_cache_dtype, model_dtype)`: `auto`
  is the model dtype, any other the dtype it names (MambaStateDtypeCalculator._mamba_state_dtype, v0.11.0
  layers/mamba/mamba_utils.py:47-61, v0.24.0 :84-96; get_kv_cache_torch_dtype, v0.24.0 utils/torch_utils.py:286-306);
- `--mamba-ssm-cache-dtype`: the SSM state's; `auto` is the conv state's dtype (same lines). Before `auto` reaches
  it, NemotronH's config class puts the config's `mamba_ssm_cache_dtype` (else its default) and, from v0.17.0,
  Qwen3.5's its config's `mamba_ssm_dtype` in its place (models/config.py update_mamba_ssm_cache_dtype, v0.24.0
  :469-484, :606-626): the config's stated dtype (kv_state.py) then stands unless the flag names one;
- a gated delta net (Qwen3-Next, Qwen3.5) keeps both states in the conv dtype through v0.16.0 (the ssm flag is not
  passed: qwen3_next.py v0.11.0:191-192, v0.16.0:230-232; gated_delta_net_state_dtype(model_dtype,
  mamba_cache_dtype)), and takes the ssm flag from v0.17.0 (qwen3_next.py v0.17.0:339-343, v0.34.0:911-915);
- the choices: auto and float32 (v0.10.1 – v0.12.0 config/cache.py MambaDType), float16 from v0.13.0, bfloat16 from
  v0.22.0 (v0.21.0 has not it);
- v0.10.1 raises for a Mamba1 layer under float32 ("fp32 state for mamba1 is not yet supported", mamba_utils.py:33-35;
  from v0.10.2 Mamba1 takes `_mamba_state_dtype` as Mamba2 does): refused as vLLM refuses it.

Modelled for Mamba1, Mamba2 and gated-delta-net layers; another state kind (KDA's float32 recurrent state, a short
conv, lightning attention) with a dtype other than `auto` is refused as not modelled.
"""

from __future__ import annotations

from typing import NamedTuple

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion, era_for
from kvtop.domain.engines.vllm.flags_table import FlagSpan
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import ModelSpec, StateKind

CACHE_DTYPE_FLAG = "--mamba-cache-dtype"
SSM_DTYPE_FLAG = "--mamba-ssm-cache-dtype"
FLAGS = frozenset({CACHE_DTYPE_FLAG, SSM_DTYPE_FLAG})
SPANS = {
    CACHE_DTYPE_FLAG: FlagSpan("0.10.1", None, "engine/arg_utils.py:1444 (v0.34.0)"),
    SSM_DTYPE_FLAG: FlagSpan("0.10.1", None, "engine/arg_utils.py:1447 (v0.34.0)"),
}
BYTES = {"float32": 4, "float16": 2, "bfloat16": 2}
# the values CacheConfig's MambaDType takes, by release
CHOICES_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset({"auto", "float32"}), "config/cache.py MambaDType = Literal['auto', 'float32'] (v0.10.1:26, v0.12.0)"),
    Era("0.13.0", frozenset({"auto", "float32", "float16"}), "config/cache.py MambaDType (v0.13.0, v0.21.0)"),
    Era("0.22.0", frozenset({"auto", "float32", "float16", "bfloat16"}),
        "config/cache.py MambaDType (v0.22.0:35, v0.24.0:36, v0.34.0)"),
))  # fmt: skip
# whether vLLM raises for a Mamba1 layer's float32 state
MAMBA1_FP32_RAISES_ERAS: Eras[bool] = Eras((
    Era("", True, "mamba_utils.py:33-35 mamba1_state_dtype: 'fp32 state for mamba1 is not yet supported' (v0.10.1)"),
    Era("0.10.2", False, "mamba_utils.py mamba1_state_dtype → _mamba_state_dtype (v0.10.2, v0.11.0:27-34)"),
))  # fmt: skip
# whether a gated delta net's SSM state takes `--mamba-ssm-cache-dtype` (else the conv state's dtype)
GDN_SSM_FLAG_ERAS: Eras[bool] = Eras((
    Era("", False, "qwen3_next.py: gated_delta_net_state_dtype(model dtype, mamba_cache_dtype) (v0.11.0:191, v0.16.0:230)"),
    Era("0.17.0", True, "qwen3_next.py: … mamba_ssm_cache_dtype (v0.17.0:339-343, v0.34.0:911-915)"),
))  # fmt: skip
MODELLED_KINDS = frozenset({StateKind.MAMBA1, StateKind.MAMBA2, StateKind.GATED_DELTA_NET})


class StateDtypes(NamedTuple):
    """Bytes an element of the conv state, and of the SSM state where the launch decides it (None: the config's
    stated dtype, else the engine's default, `KvStorage.unstated_ssm_dtype_bytes`)."""

    conv: int
    ssm: int | None
    unstated_ssm: int | None  # the SSM bytes where the config states none and no ssm flag names one


def _asked(settings: LaunchSettings, flag: str, version: ResolvedVersion) -> str:
    value = settings.flags.get(flag[2:])
    asked = "auto" if value is None else str(value)
    era = era_for(CHOICES_ERAS, version)
    if asked not in era.value:
        raise InputError(f"{flag} {asked!r} is not one vLLM {version.label} takes ({era.source}): "
                         f"{', '.join(sorted(era.value))}", field=flag)  # fmt: skip
    return asked


def state_dtypes(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> StateDtypes | None:
    """The state dtypes: the conv state's `auto` is the served model's dtype (`model.dtype_bytes`: 4 B under `--dtype
    float32`, 2 B for a float32 config under `--dtype auto`, which vLLM serves in 16 bits) at every release read, no
    family forcing another (get_kv_cache_torch_dtype(mamba_cache_dtype, model_config.dtype): v0.12.0, v0.21.0, v0.22.0
    models/mamba.py, nemotron_h.py, qwen3_next.py get_mamba_state_dtype_from_config; models/config.py sets only the
    SSM dtype). None for a model with no state. Raises UnsupportedModelError for a state kind not modelled under a
    named dtype."""
    cache, ssm = _asked(settings, CACHE_DTYPE_FLAG, version), _asked(settings, SSM_DTYPE_FLAG, version)
    if model.state is None:
        return None
    if (cache, ssm) == ("auto", "auto"):
        return StateDtypes(model.dtype_bytes, None, None)
    if model.state.kind not in MODELLED_KINDS:
        raise UnsupportedModelError(
            f"vLLM's {CACHE_DTYPE_FLAG} / {SSM_DTYPE_FLAG} for {model.state.kind.value} state layers is not modelled "
            "(Mamba1, Mamba2 and gated delta nets are)", field=CACHE_DTYPE_FLAG if cache != "auto" else SSM_DTYPE_FLAG)
    raises = era_for(MAMBA1_FP32_RAISES_ERAS, version)
    if model.state.kind is StateKind.MAMBA1 and "float32" in (cache, ssm) and raises.value:
        raise InputError(f"vLLM {version.label} raises for a Mamba1 state in float32 ({raises.source})",
                         field=CACHE_DTYPE_FLAG if cache != "auto" else SSM_DTYPE_FLAG)  # fmt: skip
    conv = BYTES[cache] if cache != "auto" else model.dtype_bytes
    takes_ssm = model.state.kind is not StateKind.GATED_DELTA_NET or era_for(GDN_SSM_FLAG_ERAS, version).value
    if not takes_ssm:
        return StateDtypes(conv, conv, conv)
    forced = BYTES[ssm] if ssm != "auto" else None
    return StateDtypes(conv, forced, conv if cache != "auto" else None)
