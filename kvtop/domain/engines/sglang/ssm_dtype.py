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
        if str(typed) not in rule.value.choices:
            raise InputError(f"{FLAG} {typed!r} is not one SGLang {version.label} takes ({rule.source}): "
                             f"{', '.join(sorted(rule.value.choices))}", field=FLAG)  # fmt: skip
        return BYTES[str(typed)]
    env = settings.flags.get(ENV)
    if rule.value.env_read and env is not None and str(env) in BYTES:
        return BYTES[str(env)]
    return BYTES[rule.value.default] if rule.value.default is not None else None
