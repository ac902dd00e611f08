"""A `--max-model-len` above the positions vLLM derives: refused, or taken where the launch sets
VLLM_ALLOW_LONG_MAX_MODEL_LEN as the release reads it (docs/engines/vllm.md §3.7).

`_get_and_verify_max_len` compares a stated length with the derived one (the config's position key, scaled by a
launch's `--rope-scaling` / `--hf-overrides` rope first: rope_override.py) and, above it and above any
`model_max_length`, raises ValueError ("User-specified max_model_len (…) is greater than the derived max_model_len …")
unless `envs.VLLM_ALLOW_LONG_MAX_MODEL_LEN`, where it logs that message as a warning and returns the stated length:
the plan proceeds at it, with `allowed_note`. The variable is read from the launch line (`VAR=1 vllm serve …`,
flags.py env_read), by `LONG_CONTEXT_ERAS`. With no `--max-model-len`, a longrope config starts at its original
positions (rope_override.longrope_default), which the plan's note says.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.engines.vllm.rope_override import (
    derived_length,
    derived_or_positions,
    longrope_default,
    unread_override,
)
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
    from kvtop.domain.launch import LaunchSettings
    from kvtop.domain.ledger import Ledger
    from kvtop.domain.model import ModelSpec

ALLOW_LONG_ENV = "VLLM_ALLOW_LONG_MAX_MODEL_LEN"
CONTEXT_SOURCE = "vllm/config: _get_and_verify_max_len, max_model_len > the derived max_model_len"

# how each release reads the override; before v0.5.4 there is none (the ValueError names no variable)
LONG_CONTEXT_ERAS: Eras[ContextOverride] = Eras((
    Era("", ContextOverride(env=ALLOW_LONG_ENV, read=False),
        "no override: v0.5.3.post1 config.py:1532-1538 raises 'Make sure the value is correct and within the model "
        "context size.' whatever the environment (v0.4.0 :806-819, v0.5.0, v0.5.3 alike)"),
    Era("0.5.4", ContextOverride(env=ALLOW_LONG_ENV, truthy=frozenset({"1", "true"}), strips=True),
        "first in v0.5.4: envs.py:340-343 `os.environ.get(…, '0').strip().lower() in ('1', 'true')`, config.py:1566-1573 "
        "warns and takes the length; alike at v0.5.5 (envs.py:366-369), v0.6.0 (envs.py:371-374), v0.13.0 (config/model.py:2183), "
        "v0.33.0 (config/model.py:2677-2683, envs.py:1115-1118) and v0.34.0 (config/model.py:2721, envs.py:1177-1180)"),
))  # fmt: skip


def derived_positions(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> tuple[int, str] | None:
    """What `_get_and_verify_max_len` checks a stated length against where it is not the config's positions as read:
    the rope in effect's scaling of them (rope_override.py `derived_length`: the launch's, else config.json's), or the
    positions as read where a rope override kvtop does not read is given (named so)."""
    derived = derived_length(model, settings, version)
    unread = unread_override(settings, version)
    if derived is None and unread is not None:
        derived = model.max_position_embeddings, unread
    return derived


def context_above(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> AbovePositions | None:
    """The launch's --max-model-len above the derived length; `_get_and_verify_max_len` returns a stated length as it
    is where no config key gives the positions (v0.13.0, v0.33.0 read: "If max_model_len is specified, we use it")."""
    return above_positions(model, settings, stated_wins_without_positions=True,
                          derived=derived_positions(model, settings, version))  # fmt: skip


def long_context_refusal(ledger: Ledger) -> Refusal | None:
    """vLLM's ValueError for a length above the derived one, where the launch does not allow it."""
    above = context_above(ledger.model, ledger.settings, ledger.version)
    return context_above_positions(ledger, above, source=CONTEXT_SOURCE, override=LONG_CONTEXT_ERAS.at(ledger.version))


def long_context_note(inputs: EngineInputs) -> str | None:
    """The plan's note where vLLM does not start at the config's positions as the operator may read them: a longrope
    config's default (`longrope_default`, with the length --max-model-len may give instead), or the longer length the
    launch's VLLM_ALLOW_LONG_MAX_MODEL_LEN makes vLLM take; else an `--hf-overrides` rope the release does not derive
    the length from (`unread_override`: the positions stand, which a plan would otherwise show without a word)."""
    default = longrope_default(inputs.model, inputs.settings, inputs.version)
    if default is not None:
        longest = derived_or_positions(inputs.model, inputs.settings, inputs.version)
        return f"context: {default[1]}; --max-model-len up to {longest:,} plans a longer one"
    above = context_above(inputs.model, inputs.settings, inputs.version)
    allowed = allowed_note(above, LONG_CONTEXT_ERAS.at(inputs.version), inputs.settings, inputs.version)
    unread = unread_override(inputs.settings, inputs.version)
    if allowed is not None or unread is None:
        return allowed
    return f"context: {inputs.model.max_position_embeddings:,} positions, as read ({unread})"
