"""The rope cache's growth after the load, before the pool (docs/engines/sglang.md §4.6): bytes the KV budget loses
where a --context-length above the context SGLang derives is taken (long_context.py).

`ModelRunner.load_model` calls `reserve_rope_cache_for_long_sequences` after `Load weight end` (0.5.10
model_executor/model_runner.py:1247, :1269; utils/common.py:3700-3737; 0.5.23 utils/common.py:4999-5039): reserve =
the context (the server's context_length, else the derived context_len: `engine_context`) + speculative steps ×
draft tokens × SGLANG_SPEC_EXPANSION_SAFETY_FACTOR (2) + SGLANG_ROPE_CACHE_SAFETY_MARGIN (256), rounded up to SGLANG_ROPE_CACHE_ALIGN (128) (environ.py 0.5.10 :437-439, 0.5.23
:1545-1548); each rope module (one per distinct rope, get_rope's `_ROPE_DICT`) then `_ensure_cos_sin_cache_length
(reserve − 1)`: rows up to `reserve` appended by `torch.cat` at the cache's own width and dtype. The profile that sizes
the pool reads the free memory after it, so the appended rows come out of the KV budget. At a context up to the one
SGLang derives (long_context.py's test, one for the refusal and this growth) the growth is the margin's rows at most,
a few hundred KiB: not charged. A YaRN, `dynamic` or `linear` rope's cache is longer than the config's positions
(rope_rows.py): it grows only past its own rows. Phi-3's longrope module (Phi3LongRoPEScaledRotaryEmbedding) has no
`cos_sin_cache` attribute, and `reserve_rope_cache_recursive` grows only a child with both it and
`_ensure_cos_sin_cache_length` (0.5.6 utils/common.py:3758-3761, 0.5.23 :5030-5035): never grown.
"""

from __future__ import annotations

from kvtop.domain.deployment_flags import flag_int
from kvtop.domain.engines.sglang.long_context import context_above
from kvtop.domain.engines.sglang.rope_rows import LONGROPE_TYPES
from kvtop.domain.engines.sglang.weights_held import cache_rows, rope_cache_of
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import ModelSpec
from kvtop.domain.rounding import round_up

SAFETY_FACTOR, MARGIN, ALIGN = 2, 256, 128  # environ.py's defaults (module docstring)

RESERVE_ERAS: Eras[bool] = Eras((
    Era("", False, "no reserve_rope_cache_for_long_sequences (0.5.3, 0.5.4, 0.5.5 read: model_runner.py has none)"),
    Era("0.5.6", True, "model_runner.py load_model: reserve_rope_cache_for_long_sequences after `Load weight end` "
                       "(0.5.6 :873 after :856, utils/common.py:3728-3765, environ.py:302-304, "
                       "layers/rotary_embedding.py:182-183; 0.5.10 :1269; 0.5.23 read)"),
))  # fmt: skip


def speculative_rows(settings: LaunchSettings) -> int:
    """steps × draft tokens × the safety factor, where the launch types both (SGLang's own choice is not read)."""
    steps = flag_int(settings, "speculative-num-steps") or 0
    draft = flag_int(settings, "speculative-num-draft-tokens") or 0
    return steps * draft * SAFETY_FACTOR


def reserve_rows(settings: LaunchSettings, context: int) -> int:
    """`reserve`: the context, the speculative expansion, the margin, aligned up."""
    reserve = context + speculative_rows(settings) + MARGIN
    return round_up(reserve, ALIGN)


def rope_growth(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> tuple[int, str] | None:
    """(bytes, why) the rope caches grow by after the load where the launch's --context-length is above the context
    SGLang derives (long_context.context_above); None below it, before 0.5.6, for a model without a rope cache, or
    where the cache its rope type builds already holds the rows (a YaRN one: rope_rows.py)."""
    above = context_above(model, settings)
    if not RESERVE_ERAS.at(version) or above is None:
        return None
    cache = rope_cache_of(model, version)
    if cache is None or model.rope_type in LONGROPE_TYPES:  # no `cos_sin_cache`: not grown (module docstring)
        return None
    stated = above.stated  # SGLang's base_ctx: the server's context_length, stated here (engine_context's answer)
    rows, reserve = cache_rows(model), reserve_rows(settings, stated)
    if reserve <= rows:
        return None
    grown = cache[0] // rows * (reserve - rows)
    spec = speculative_rows(settings)
    told = f" + {spec:,} speculative" if spec else ""
    return grown, (f"the rope cache grown from {rows:,} to {reserve:,} rows after the load "
                   f"(reserve_rope_cache_for_long_sequences: --context-length {stated:,}{told} + {MARGIN}, "
                   f"{ALIGN}-aligned, SGLang {version.label}); {cache[1]}")
