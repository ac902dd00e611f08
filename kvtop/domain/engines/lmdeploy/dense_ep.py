"""What LMDeploy does with `--ep` on a model without routed experts (`EngineRules.expert_parallel_without_experts`).

The PyTorch engine read in the v0.12.2 wheel (earlier releases with `--ep` not read, taken alike); TurboMind in the
0.14.0 – 0.18.0 wheels. An `--ep` the backend refuses is refused before this (flags.py `check_parallel`, ep_sizes.py).

* TurboMind before 0.15.0 never reads it (lmdeploy/cli/serve.py v0.12.2, 0.14.0:231 pass `ep=args.ep` to
  `PytorchEngineConfig` only): the ledger plans EP off with ep_sizes.py's one note before asking here, experts or not.
* TurboMind from 0.15.0 reads it (turbomind_ep.py): a dense model's FFN splits over `mlp_tp` = tp × dp ÷ ep, whole
  on every rank at ep == tp × dp (the layout's `mlp_split`, the book's rows); attention and the vocabulary
  keep their TP. At dp > 1 the tp × dp ranks are one engine whose attention is data-parallel, as dp replicas.
* The PyTorch engine at dp 1: `DistConfig.__post_init__` (lmdeploy/pytorch/config.py) makes the world `ep` ranks,
  attention TP world ÷ dp and the dense MLP's TP `tp`: at ep == tp the ranks and splits of ep 1. The one thing it adds,
  `DistContext._build_ep_group` (pytorch/distributed.py), is a `torch.distributed.new_group` that only MoE layers
  use. `DistChecker` (pytorch/check_env/dist.py) exits on CUDA where its EP kernels are not installed, whatever the
  model (`EP_PACKAGES_ERAS`: dlblas v0.9.1 – v0.14.x, DeepEP and DeepGEMM from v0.15.0): kvtop cannot see that, and
  says so.
* At dp > 1 EP makes one engine of tp × dp ranks out of dp replicas: not modelled without experts.
"""

from __future__ import annotations

from kvtop.domain.engines.lmdeploy.turbomind_ep import TURBOMIND_EP_ERAS
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.errors import LayoutError
from kvtop.domain.launch import LaunchSettings

# what `DistChecker.check` (pytorch/check_env/dist.py) asks installed on CUDA at ep > 1, in its words
EP_PACKAGES_ERAS: Eras[str] = Eras((
    Era("", "", "check_env/dist.py v0.8.0 – v0.9.0: no package check"),
    Era("0.9.1", "ep>1 requires install dlblas", "PR #3636 (2025-06-26) check_env/dist.py is_dlblas_installed"),
    Era("0.15.0", "ep>1 requires install DeepEP … and DeepGEMM", "PR #4682 (2026-07-01) 'Remove dlblas from "
        "lmdeploy': check_env/dist.py is_deep_ep_installed, is_deep_gemm_installed (alike in the 0.18.0 wheel)"),
))  # fmt: skip


def expert_parallel_without_experts(backend: str, settings: LaunchSettings, version: ResolvedVersion) -> str:
    """The plan's note where `--ep` holds nothing on `backend` ('turbomind' or 'pytorch'); LayoutError where the
    world it builds is not modelled (the PyTorch engine at dp > 1)."""
    ep = settings.ep
    if backend == "turbomind":
        return (f"--ep {ep} on a model without experts: no experts to divide; TurboMind {version.label} reads --ep "
                f"and splits the FFN over mlp_tp = tp × dp ÷ ep ({TURBOMIND_EP_ERAS.era(version).source})")  # fmt: skip
    if settings.dp > 1:
        raise LayoutError(
            f"not modelled: --ep {ep} with --dp {settings.dp} makes LMDeploy's PyTorch engine one world of {ep} ranks "
            "(pytorch/config.py DistConfig) out of the DP replicas; kvtop models that world for experts only",
            field="--ep",
        )
    packages = EP_PACKAGES_ERAS.era(version)
    exits = f"; it exits at start on CUDA where '{packages.value}' ({packages.source})" if packages.value else ""
    return (
        f"--ep {ep} on a model without experts: planned as EP off; LMDeploy {version.label}'s PyTorch engine keeps "
        "the ranks and splits of ep 1 at ep == tp (pytorch/config.py DistConfig) and only MoE layers use its EP group"
        f"{exits}"
    )
