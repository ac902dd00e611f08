"""SGLang's SSM-state dtype: `--mamba-ssm-dtype` and `SGLANG_MAMBA_SSM_DTYPE`, by release (docs/engines/sglang.md §4.2).

The state pool's bytes a slot are `conv numel × conv itemsize + temporal numel × ssm itemsize` a state layer
(configs/mamba_utils.py `mamba_cache_per_req`), the SSM (temporal) itemsize this file decides:

- 0.5.2 – 0.5.8: the flag, default float32, choices float32 / bfloat16, always written to the environment
  (server_args.py:396 default, :843 `os.environ["SGLANG_MAMBA_SSM_DTYPE"] = self.mamba_ssm_dtype`, :1732-1737 at
  0.5.2; :202, :497, :2391 at 0.5.8) and read back by the config classes (configs/qwen3_next.py:306 at 0.5.2,
  configs/mamba_utils.py:47-53 `mamba2_state_dtype()` at 0.5.4 – 0.5.8): the config's `mamba_ssm_dtype` is not
  read and a launch's own `SGLANG_MAMBA_SSM_DTYPE` is overwritten, so the state is float32 unless the flag says
  bfloat16.
- 0.5.9 on: the flag defaults to None and, when typed, sets the variable (server_args.py:522, :2675-2676 at 0.5.9;
  :2536-2543, :8067-8068 at 0.5.18; arg_groups/serving_hook.py:439-440 at 0.5.23); `mamba2_state_dtype(config)`
  takes the variable over the config's `mamba_ssm_dtype` over float32 (configs/mamba_utils.py:47-107 at 0.5.9 and
  0.5.18, :95 at 0.5.23), a value it does not know warned and skipped (the config's stands); float16 joins the
  choices (server_args.py:214 at 0.5.9).

The value sets `KvStorage.launch_ssm_dtype_bytes`; None leaves the config's stated dtype, else float32
(state_rules.py). The DGX Spark's Qwen3.8-27B-FP8 at `--mamba-ssm-dtype bfloat16` (coralleicn-…-mamba256-mtp3-bs64)
logged 'conv_state size: 0.71GB, ssm_state size: 18.07GB' for 257 slots, half the float32 state.
"""

from __future__ import annotations

from typing import NamedTuple

from kvtop.domain.engines.sglang.flag_releases import check_flag_release
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion, era_for
from kvtop.domain.errors import InputError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_layers import StateKind
from kvtop.domain.redact import quoted

FLAG = "--mamba-ssm-dtype"
ENV = "SGLANG_MAMBA_SSM_DTYPE"
BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}


class SsmDtypeRule(NamedTuple):
    """What a release does with the flag: its default (None: the config's dtype, else float32), its choices, and
    whether a launch's own `SGLANG_MAMBA_SSM_DTYPE` reaches the state (else the flag overwrites it)."""

    default: str | None
    choices: frozenset[str]
    env_read: bool


SSM_DTYPE_ERAS: Eras[SsmDtypeRule] = Eras((
    Era("", SsmDtypeRule(None, frozenset(), False), "no --mamba-ssm-dtype before 0.5.2 (none at 0.5.1.post3)"),
    Era("0.5.2", SsmDtypeRule("float32", frozenset({"float32", "bfloat16"}), False),
        "server_args.py:396, :843, :1732-1737 (0.5.2) … :202, :497, :2391 (0.5.8): default float32, always set as "
        "SGLANG_MAMBA_SSM_DTYPE; the config's mamba_ssm_dtype unread"),
    Era("0.5.9", SsmDtypeRule(None, frozenset({"float32", "bfloat16", "float16"}), True),
        "server_args.py:214, :522, :2675-2676 (0.5.9), :8067-8068 (0.5.18); configs/mamba_utils.py:47-107 "
        "mamba2_state_dtype: SGLANG_MAMBA_SSM_DTYPE over the config's mamba_ssm_dtype over float32"),
))  # fmt: skip


def launch_ssm_dtype_bytes(settings: LaunchSettings, version: ResolvedVersion) -> int | None:
    """Bytes an SSM-state element where the launch or the release decides it (None: the config's, else float32).
    Raises InputError for a value the release's argparse refuses, or the flag at a release without it."""
    rule = era_for(SSM_DTYPE_ERAS, version)
    typed = settings.flags.get(FLAG[2:])
    if typed is not None:
        check_flag_release(FLAG, version)
        if typed is True:  # the flag alone: argparse wants one of its choices
            raise InputError(f"{FLAG} needs a value: one of {', '.join(sorted(rule.value.choices))} "
                             f"(SGLang {version.label})", field=FLAG)  # fmt: skip
        if str(typed) not in rule.value.choices:
            raise InputError(f"{quoted(typed)} is not one SGLang {version.label} takes ({rule.source}): "
                             f"{', '.join(sorted(rule.value.choices))}", field=FLAG)  # fmt: skip
        return BYTES[str(typed)]
    env = settings.flags.get(ENV)
    if rule.value.env_read and env is not None and str(env) in BYTES:
        return BYTES[str(env)]
    return BYTES[rule.value.default] if rule.value.default is not None else None


def ignored_env_note(settings: LaunchSettings, version: ResolvedVersion) -> str | None:
    """A launch's own SGLANG_MAMBA_SSM_DTYPE the release does not use: 0.5.2 – 0.5.8 overwrite it with the flag's
    value (server_args.py:2391 at 0.5.8), 0.5.9 on warn on a value mamba2_state_dtype does not know and skip it
    (configs/mamba_utils.py:95-101 at 0.5.23), or the typed flag sets it over the launch's."""
    env = settings.flags.get(ENV)
    if env is None:
        return None
    rule = era_for(SSM_DTYPE_ERAS, version).value
    typed = settings.flags.get(FLAG[2:])
    if not rule.env_read or typed is not None:
        return (f"{ENV}={env} is not used: SGLang {version.label} sets the variable to {FLAG}'s "
                f"{typed if typed is not None else rule.default}")  # fmt: skip
    if str(env) not in BYTES:
        return (f"{ENV}={env} is not used: SGLang {version.label} warns 'Invalid mamba_ssm_dtype' and keeps the "
                "config's (float32 where it states none)")  # fmt: skip
    return None


def cache_key_not_modelled(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> str | None:
    """A Mamba2 config's stated SSM dtype kvtop cannot place: from 0.5.9 SGLang reads only `mamba_ssm_dtype`
    (configs/mamba_utils.py mamba2_state_dtype, 0.5.9 … 0.5.23), and kvtop reads it and vLLM's
    `mamba_ssm_cache_dtype` (NemotronH's key) as one field, so a non-float32 state there may be SGLang's float32."""
    state = model.state
    if state is None or state.kind is not StateKind.MAMBA2 or not state.ssm_dtype_stated or state.ssm_dtype_bytes == 4:
        return None
    if launch_ssm_dtype_bytes(settings, version) is not None:  # the flag, the variable or the release decides
        return None
    return (f"the config's {state.ssm_dtype_bytes}-byte SSM state dtype: SGLang {version.label} reads only "
            "mamba_ssm_dtype (configs/mamba_utils.py mamba2_state_dtype), float32 where the config names it "
            "mamba_ssm_cache_dtype; kvtop does not tell the two keys apart")  # fmt: skip
