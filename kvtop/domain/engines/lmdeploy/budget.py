"""LMDeploy's KV budget: TurboMind's (`budget_turbomind`) or the PyTorch engine's (`budget_pytorch`),
whichever serves the model (docs/engines/lmdeploy.md §1–§4)."""

from __future__ import annotations

from kvtop.domain.engines.base import EngineInputs, EngineResult
from kvtop.domain.engines.lmdeploy.budget_pytorch import solve_pytorch
from kvtop.domain.engines.lmdeploy.budget_turbomind import solve_turbomind
from kvtop.domain.engines.lmdeploy.memory import resolve_backend


class LmdeployBudget:
    """`solve`: TurboMind's or the PyTorch engine's blocks for one rank set (every rank gets the same count)."""

    def solve(self, inputs: EngineInputs) -> EngineResult:
        backend, why = resolve_backend(inputs.model, inputs.settings, inputs.version)
        if backend == "pytorch":
            return solve_pytorch(inputs, why)
        return solve_turbomind(inputs, why)
