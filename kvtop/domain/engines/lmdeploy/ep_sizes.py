"""Which `--ep` sizes LMDeploy's backends take, by release (flags.py `check_parallel`, the budget's backend).

Read in the wheels v0.12.2 and 0.15.0 (the PyTorch engine; dense_ep.py) and 0.14.0 – 0.18.0 (TurboMind; turbomind_ep.py):

* The PyTorch engine: `DistConfig.__post_init__` (lmdeploy/pytorch/config.py) makes the world `ep` ranks at ep > 1
  and asserts it divides by dp and by the MLP's TP (tp): kvtop models ep == tp × dp, experts over every rank, or
  ep 1.
* TurboMind before 0.15.0 never reads `--ep` (cli/serve.py 0.14.0:231 passes it to `PytorchEngineConfig` only): any
  size starts, planned as EP off (`expert_parallel_unread`).
* TurboMind from 0.15.0: `derive_parallel_config` (turbomind/parallel_config.py) asserts where no layout holds
  (`mlp_tp_and_devices` None): an ep dividing tp at dp 1 gives mlp_tp = tp ÷ ep; 'tp=1, ep=N' is refused in its words.
"""

from __future__ import annotations

from kvtop.domain.engines.lmdeploy.turbomind_ep import TURBOMIND_EP_ERAS, mlp_tp_and_devices
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.launch import LaunchSettings


def ep_refusal(backend: str, settings: LaunchSettings, version: ResolvedVersion) -> str | None:
    """Why `backend` ('turbomind' or 'pytorch') at `version` refuses the launch's --ep; None where it takes it."""
    ep, ranks = settings.ep, settings.tp * settings.dp
    if ep <= 1:
        return None
    if backend == "pytorch":
        if ep == ranks:
            return None
        return (f"LMDeploy's PyTorch engine spreads experts over all tp × dp = {ranks} ranks (got --ep {ep}; "
                "pytorch/config.py DistConfig)")  # fmt: skip
    if not TURBOMIND_EP_ERAS.at(version):
        return None  # not read: planned as EP off
    if mlp_tp_and_devices(settings.dp, settings.tp, ep, settings.dcp) is not None:
        return None
    return (f"TurboMind {version.label} finds no parallel layout for dp {settings.dp}, tp {settings.tp}, ep {ep}, cp "
            f"{settings.dcp}: ep must divide tp × dp with mlp_tp = tp × dp ÷ ep dividing tp ('tp=1, ep=N' is written "
            "'tp=N, ep=N'; turbomind/parallel_config.py derive_parallel_config)")  # fmt: skip


def expert_parallel_unread(backend: str, settings: LaunchSettings, version: ResolvedVersion) -> str | None:
    """The plan's one note where `backend` at `version` does not read --ep (TurboMind before 0.15.0), else None."""
    if settings.ep <= 1 or backend != "turbomind" or TURBOMIND_EP_ERAS.at(version):
        return None
    return (f"--ep {settings.ep} not read: TurboMind {version.label} takes no ep, planned as EP off "
            f"({TURBOMIND_EP_ERAS.era(version).source})")
