"""LMDeploy's KV budget: TurboMind's (`budget_turbomind`) or the PyTorch engine's (`budget_pytorch`),
whichever serves the model (docs/engines/lmdeploy.md §1–§4)."""

from __future__ import annotations

from kvtop.domain.engines.base import EngineInputs, EngineResult
from kvtop.domain.engines.lmdeploy.budget_pytorch import solve_pytorch
from kvtop.domain.engines.lmdeploy.budget_turbomind import solve_turbomind
from kvtop.domain.engines.lmdeploy.memory import resolve_backend
from kvtop.domain.errors import InputError, UnsupportedModelError


class LmdeployBudget:
    """`solve_budget`: TurboMind's or the PyTorch engine's blocks for one rank set (every rank gets the same count)."""

    def solve_budget(self, inputs: EngineInputs) -> EngineResult:
        if inputs.layout.pp > 1:
            raise InputError("LMDeploy has no pipeline parallelism (use --tp, or --dp for replicas)", field="--pp")
        if inputs.layout.dcp > 1:
            raise InputError("TurboMind's context parallelism (--cp) is not modelled by kvtop", field="--cp")
        if inputs.model.attention_free:  # no KV block to size: its budgets divide by one (a 0 B block)
            raise UnsupportedModelError(
                "LMDeploy registers no attention-free (Mamba) class (engines/lmdeploy/architectures.py): kvtop does "
                "not plan one there",
                field="--model",
            )
        backend, why = resolve_backend(inputs.model, inputs.settings, inputs.version)
        return solve_pytorch(inputs, why) if backend == "pytorch" else solve_turbomind(inputs, why)
