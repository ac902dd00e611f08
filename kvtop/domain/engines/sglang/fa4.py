"""SGLang's `fa4` attention backend (FlashAttention 4): the page it forces, by release (docs/engines/sglang.md §6.6).

Read in the wheels (session 60). The backend only changes the page: the pool is the same `MHATokenToKVPool` of the
model's heads (no fa4 branch in mem_cache/ or pool_configurator.py at 0.5.23), its token count floored to the page
like any other.
- v0.5.3 … v0.5.3.post1: in the choices (server_args.py:98), no rule read: refused as not modelled.
- v0.5.4 … v0.5.7: `--attention-backend fa4` or `--decode-attention-backend fa4` raise "FA4 backend is only supported
  for prefill" (0.5.4 server_args.py:1143-1146, 0.5.7 :1647-1650); `--prefill-attention-backend fa4` sets page 128 on
  any GPU (0.5.4 :1147-1151, every model; from 0.5.5.post1 :1276 a non-MLA one; 0.5.7 :1651-1655).
- v0.5.8 … v0.5.9: no raise; a prefill fa4 sets 128 on a non-MLA model, any GPU (0.5.8 :1779-1783, 0.5.9 :1917-1921).
- v0.5.10rc0 … v0.5.14: the same on SM100 only (`is_sm100_supported()`: 0.5.10rc0 :2358-2366, 0.5.14 :4651-4659).
- v0.5.15 … v0.5.23: fa4 for any phase, a non-MLA model, SM100, and EAGLE's topk at most 1 (its tree cascade runs at page
  1 only): `_fa4_page_constraint` (0.5.15 arg_groups/overrides.py:1675-1693, run at server_args.py:4466; 0.5.23
  overrides.py:1274-1297). 0.5.23's DiffusionGemma gets page 1, a class kvtop does not build.
Each sets the page last, over `--page-size` and the default backend's (0.5.14 :4651 follows trtllm_mha's :4642).
An MLA model under fa4 is refused (its pages and decode backends were not read).
"""

from __future__ import annotations

from typing import NamedTuple

from kvtop.domain.deployment_flags import flag_int
from kvtop.domain.engines.sglang.attention_backends import (
    ATTENTION,
    DECODE,
    PHASE_FLAG,
    PREFILL,
    NamedBackends,
    effective_attention,
)
from kvtop.domain.engines.sglang.deployment import setup as deployment_setup
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion, era_for
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.gpus import SM100
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import ModelSpec

FA4 = "fa4"
FA4_PAGE = 128


class Fa4Rule(NamedTuple):
    """What one release does with fa4 (None at a release whose rule was not read)."""

    prefill_only: bool  # `--attention-backend` / `--decode-attention-backend fa4` raise
    phases: frozenset[str]  # the phases whose fa4 sets the page
    sm100_only: bool
    eagle_guard: bool  # EAGLE topk > 1 keeps the page


_PREFILL = frozenset({PREFILL})
FA4_ERAS: Eras[Fa4Rule | None] = Eras((
    Era("", None, "server_args.py: fa4 in the choices from 0.5.3 (:98), no rule for it at 0.5.3 / 0.5.3.post1"),
    Era("0.5.4", Fa4Rule(True, _PREFILL, False, False), "server_args.py:1143-1151 (0.5.4), :1647-1655 (0.5.7)"),
    Era("0.5.8", Fa4Rule(False, _PREFILL, False, False), "server_args.py:1779-1783 (0.5.8), :1917-1921 (0.5.9)"),
    Era("0.5.10rc0", Fa4Rule(False, _PREFILL, True, False),
        "server_args.py:2358-2366 (0.5.10rc0), :4651-4659 (0.5.14): is_sm100_supported()"),
    Era("0.5.15", Fa4Rule(False, frozenset({ATTENTION, PREFILL, DECODE}), True, True),
        "arg_groups/overrides.py _fa4_page_constraint (0.5.15:1675-1693, 0.5.23:1274-1297)"),
))  # fmt: skip


def _fa4_phases(named: NamedBackends, version: ResolvedVersion) -> tuple[str, ...]:
    """The phases the launch runs fa4 for (the attention backend as SGLang resolves it: both phases' same name)."""
    attention = effective_attention(named, version)
    by_phase = ((ATTENTION, attention), (PREFILL, named.prefill), (DECODE, named.decode))
    return tuple(phase for phase, backend in by_phase if backend == FA4)


def fa4_page(
    model: ModelSpec, settings: LaunchSettings | None, gpu_name: str | None, version: ResolvedVersion,
    named: NamedBackends | None,
) -> tuple[int, str] | None:
    """(128, why) where the release's fa4 rule forces the page; None where the launch names no fa4 or the rule does
    not apply (the page is then the launch's, as under any backend without a rule). Refused where SGLang refuses
    the launch, where the rule was not read, and for an MLA model."""
    phases = _fa4_phases(named, version) if named is not None else ()
    if not phases:
        return None
    flag = PHASE_FLAG[phases[0]]
    era = era_for(FA4_ERAS, version)
    rule = era.value
    if rule is None:
        raise UnsupportedModelError(f"fa4: SGLang {version.label} names no page rule for it ({era.source}): not "
                                    "modelled", field=flag)  # fmt: skip
    if model.mla is not None:
        raise UnsupportedModelError("fa4 with an MLA model: its pages and decode backends were not read: not modelled",
                                    field=flag)  # fmt: skip
    if rule.prefill_only and (ATTENTION in phases or DECODE in phases):
        raise InputError(f"SGLang {version.label} raises 'FA4 backend is only supported for prefill' ({era.source}); "
                         "use --prefill-attention-backend fa4", field=flag)  # fmt: skip
    if not rule.phases.intersection(phases):
        return None
    if rule.sm100_only and not SM100.holds(gpu_name):  # is_sm100_supported() (0.5.10rc0 server_args.py:2358)
        return None
    if rule.eagle_guard and settings is not None and deployment_setup(settings).spec_method is not None:
        topk = flag_int(settings, "speculative-eagle-topk")
        if topk is None:
            raise UnsupportedModelError("fa4 with speculative decoding and no --speculative-eagle-topk: the page (128 "
                                        "at topk 1, the launch's above) rests on the topk SGLang picks, which kvtop "
                                        "does not model", field=flag)  # fmt: skip
        if topk > 1:
            return None
    on = " on SM100" if rule.sm100_only else ""
    return FA4_PAGE, f"{flag} fa4 pages by {FA4_PAGE} for a non-MLA model{on} ({era.source})"
