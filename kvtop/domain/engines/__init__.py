"""Engine budget rules, one module per engine behind one interface (`EngineRules`)."""

from __future__ import annotations

from kvtop.domain.engines.base import BudgetStep, EngineInputs, EngineResult, EngineRules, MeasuredInputs
from kvtop.domain.engines.sglang import SGLANG
from kvtop.domain.engines.vllm import VLLM

ENGINES: dict[str, EngineRules] = {"sglang": SGLANG, "vllm": VLLM}

__all__ = ["ENGINES", "BudgetStep", "EngineInputs", "EngineResult", "EngineRules", "MeasuredInputs"]
