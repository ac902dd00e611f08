"""What LMDeploy does with `--ep` on a model without routed experts (`EngineRules.expert_parallel_without_experts`).

Read in the v0.12.2 wheel (earlier releases with `--ep` not read, taken alike). `--ep` other than tp × dp is refused
before this (flags.py `check_parallel`).

* TurboMind never reads it: lmdeploy/cli/serve.py passes `ep=args.ep` to `PytorchEngineConfig` only
  (`TurbomindEngineConfig` has no `ep`).
* The PyTorch engine at dp 1: `DistConfig.__post_init__` (lmdeploy/pytorch/config.py) makes the world `ep` ranks,
  attention TP world ÷ dp and the dense MLP's TP `tp`: at ep == tp the ranks and splits of ep 1. The one thing it adds,
  `DistContext._build_ep_group` (pytorch/distributed.py), is a `torch.distributed.new_group` that only MoE layers
  use. `DistChecker` (pytorch/check_env/dist.py) exits on CUDA where dlblas is not installed ("ep>1 requires install
  dlblas"), whatever the model: kvtop cannot see that, and says so.
* At dp > 1 EP makes one engine of tp × dp ranks out of dp replicas: not modelled without experts.
"""

from __future__ import annotations

from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.errors import LayoutError
from kvtop.domain.launch import LaunchSettings


def expert_parallel_without_experts(backend: str, settings: LaunchSettings, version: ResolvedVersion) -> str:
    """The plan's note where `--ep` holds nothing on `backend` ('turbomind' or 'pytorch'); LayoutError where the
    world it builds is not modelled (the PyTorch engine at dp > 1)."""
    ep = settings.ep
    if backend == "turbomind":
        return (f"--ep {ep} on a model without experts: planned as EP off; TurboMind does not read --ep "
                "(lmdeploy/cli/serve.py passes it to the PyTorch engine's config only)")  # fmt: skip
    if settings.dp > 1:
        raise LayoutError(
            f"not modelled: --ep {ep} with --dp {settings.dp} makes LMDeploy's PyTorch engine one world of {ep} ranks "
            "(pytorch/config.py DistConfig) out of the DP replicas; kvtop models that world for experts only",
            field="--ep",
        )
    return (
        f"--ep {ep} on a model without experts: planned as EP off; LMDeploy {version.label}'s PyTorch engine keeps "
        "the ranks and splits of ep 1 at ep == tp (pytorch/config.py DistConfig) and only MoE layers use its EP group; "
        "it exits at start on CUDA without dlblas installed ('ep>1 requires install dlblas', pytorch/check_env/dist.py)"
    )
