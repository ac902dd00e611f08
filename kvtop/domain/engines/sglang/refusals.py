"""Launches SGLang sizes but refuses at start (docs/engines/sglang.md §4.6), as `kvtop.domain.refusals` values.

- A `--context-length` above the model's positions: `ModelConfig.__init__` (srt/configs/model_config.py)
  compares it with the derived context length and raises ValueError ("User-specified context_length (…)
  is greater than the derived context_length (…)") unless SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN is
  set; the same in every release kvtop models.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvtop.domain.refusals import Refusal, context_above_positions

if TYPE_CHECKING:
    from kvtop.domain.ledger import Ledger

CONTEXT_SOURCE = "srt/configs/model_config.py ModelConfig: context_length > the derived context length"
CONTEXT_OVERRIDE = "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1"


def launch_refusals(ledger: Ledger) -> tuple[Refusal, ...]:
    found = context_above_positions(ledger, source=CONTEXT_SOURCE, override=CONTEXT_OVERRIDE)
    return (found,) if found else ()
