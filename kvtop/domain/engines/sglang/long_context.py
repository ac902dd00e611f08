"""A `--context-length` above the context SGLang derives: refused, or taken where the launch allows it as the release
reads SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN (docs/engines/sglang.md §4.6).

`ModelConfig` (`_derive_context_length` in later releases, srt/configs/model_config.py) compares a stated length
with `get_context_length(hf_text_config)` (context_len.py) and, above it, raises ValueError ("User-specified
context_length (…) is greater than the derived context_length (…)") unless the variable reads true, where it logs the
message as a warning and takes the stated length: the plan proceeds at it, with `allowed_note`. From 0.4.4 to 0.5.0rc2
the release's default was "True": an unset variable takes the length too. The variable is read from the launch line
(`VAR=1 python -m sglang.launch_server …`, flags.py env_read); `or is_in_ci()` (SGLANG_IS_IN_CI, 0.5.1 on) is not read.
The rope cache's growth to the longer length after the load is charged to the KV budget from 0.5.6 (rope_growth.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvtop.domain.engines.sglang.context_len import derived_context
from kvtop.domain.engines.sglang.vocab_launch import TRUE_WORDS
from kvtop.domain.engines.versions import Era, Eras
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import ModelSpec
from kvtop.domain.refusals import (
    AbovePositions,
    ContextOverride,
    Refusal,
    above_positions,
    allowed_note,
    context_above_positions,
)

if TYPE_CHECKING:
    from kvtop.domain.engines.base import EngineInputs
    from kvtop.domain.ledger import Ledger

OVERWRITE_ENV = "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN"
CONTEXT_SOURCE = "srt/configs/model_config.py ModelConfig: context_length > the derived context length"
# utils.py get_bool_env_var: `os.getenv(name, default).lower() in ("true", "1")` (0.4.0 :1147-1149; from 0.4.6 an
# unreadable value warns and reads false, 0.4.6 :84-98); no strip
_BOOL_WORDS = frozenset({"true", "1"})
LONG_CONTEXT_ERAS: Eras[ContextOverride] = Eras((
    Era("", ContextOverride(env=OVERWRITE_ENV, truthy=_BOOL_WORDS),
        "0.4.0 model_config.py:72 `get_bool_env_var(…)` (default 'false'); 0.4.1 :72, 0.4.3 :73, 0.4.3.post4 :83-85 "
        "(default='False') alike; earlier releases taken alike"),
    Era("0.4.4", ContextOverride(env=OVERWRITE_ENV, truthy=_BOOL_WORDS, unset_allows=True),
        "0.4.4 model_config.py:83-85 `get_bool_env_var(…, default='True')`: unset, the longer length is taken with "
        "the warning; 0.4.4.post1 :84, 0.4.5 :88, 0.4.6 :112, 0.5.0rc0 / rc1 / rc2 :170 alike"),
    Era("0.5.1", ContextOverride(env=OVERWRITE_ENV, truthy=_BOOL_WORDS),
        "0.5.1 model_config.py:176-177 `get_bool_env_var(…) or is_in_ci()` (default 'false' again); 0.5.1.post1 "
        ":176, 0.5.2 :186, 0.5.3rc0 :208 alike"),
    Era("0.5.3rc2", ContextOverride(env=OVERWRITE_ENV, truthy=TRUE_WORDS),
        "0.5.3rc2 model_config.py:265 `envs.SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN.get()` (environ.py:192 "
        "EnvBool(False); :82-89 parse: lower() in true/1/yes/y, an unreadable value warns and takes False); 0.5.6 "
        ":298, 0.5.9 :371, 0.5.10 :391, 0.5.23 :1303 (environ.py:320, :143-150) alike"),
))  # fmt: skip


def context_above(model: ModelSpec, settings: LaunchSettings) -> AbovePositions | None:
    """A --context-length above the context SGLang derives (the config's positions, or get_context_length's fallback):
    the one test the refusal, its note and the rope cache's growth (rope_growth.py) read."""
    return above_positions(model, settings, derived=derived_context(model, settings))


def long_context_refusal(ledger: Ledger) -> Refusal | None:
    """SGLang's ValueError for a length above the derived one, where the launch does not allow it."""
    above = context_above(ledger.model, ledger.settings)
    return context_above_positions(ledger, above, source=CONTEXT_SOURCE, override=LONG_CONTEXT_ERAS.at(ledger.version))


def long_context_note(inputs: EngineInputs) -> str | None:
    """The plan's note where SGLang takes the longer length: the launch's variable, or its release's default."""
    above = context_above(inputs.model, inputs.settings)
    return allowed_note(above, LONG_CONTEXT_ERAS.at(inputs.version), inputs.settings, inputs.version)
