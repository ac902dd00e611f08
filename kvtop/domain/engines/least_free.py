"""The restart rules every engine that sizes all its ranks from the least free GPU shares (SGLang, LMDeploy,
TensorRT-LLM: a MIN over the ranks' free memory; llama.cpp too, whose replay gives the cells `-c` asks or none where
they do not fit): each engine's `diagnosis` module takes them as they are."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kvtop.domain.launch import LaunchSettings
    from kvtop.domain.ledger import Ledger
    from kvtop.domain.ledger_values import WhatIf


def restart_capacity(replay: WhatIf, free: Mapping[int, int]) -> int:
    """Tokens per rank a restart gets with `free` bytes free on each GPU: the least free GPU sizes all."""
    return replay.capacity_at_least_free(free)


def restart_ledger(replay: WhatIf, free: Mapping[int, int], settings: LaunchSettings) -> Ledger | None:
    """A restart with `settings`: the least free GPU sizes every rank."""
    return replay.at_least_free(free, settings)
