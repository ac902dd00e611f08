"""LMDeploy's KV budget: TurboMind's (`budget_turbomind`) or the PyTorch engine's (`budget_pytorch`),
whichever serves the model (docs/engines/lmdeploy.md §1–§4)."""

from __future__ import annotations

from kvtop.domain.engines.base import EngineInputs, EngineResult
from kvtop.domain.engines.lmdeploy.budget_pytorch import solve_pytorch
from kvtop.domain.engines.lmdeploy.budget_turbomind import solve_turbomind
from kvtop.domain.engines.lmdeploy.eras import TRUST_REMOTE_CODE_SINCE, since
from kvtop.domain.engines.lmdeploy.flags import REMOTE_CODE_FLAG
from kvtop.domain.engines.lmdeploy.memory import resolve_backend
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.launch import LaunchSettings


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
        check_remote_code(inputs.settings, inputs.version)
        backend, why = resolve_backend(inputs.model, inputs.settings, inputs.version)
        return solve_pytorch(inputs, why) if backend == "pytorch" else solve_turbomind(inputs, why)


def check_remote_code(settings: LaunchSettings, version: ResolvedVersion) -> None:
    """`--trust-remote-code` where the release's `serve api_server` has it (v0.13.0 on); before, its argparse
    rejects the flag, and its loaders trust the model's code themselves."""
    if REMOTE_CODE_FLAG.lstrip("-") in settings.flags and not since(TRUST_REMOTE_CODE_SINCE, version):
        raise InputError(f"LMDeploy {version.label}'s serve api_server has no such flag (from v0.13.0: "
                         f"{TRUST_REMOTE_CODE_SINCE.source}); before it, LMDeploy loads the model's own code "
                         "without asking", field=REMOTE_CODE_FLAG)  # fmt: skip
