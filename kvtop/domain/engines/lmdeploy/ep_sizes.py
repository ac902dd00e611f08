"""Which `--ep` (and `--dp`) sizes LMDeploy's backends take, by release (flags.py `check_parallel`, the budget's backend).

Read in the tags v0.7.3 – v0.16.0 (InternLM/lmdeploy: cli/utils.py, cli/serve.py, pytorch/config.py,
pytorch/check_env/dist.py) and the wheels 0.14.0 – 0.18.0 (TurboMind; turbomind_ep.py):

* `--ep` and `--dp` are flags of `lmdeploy serve api_server` from v0.8.0 (`ArgumentHelper.ep`, PR #3313 'add deepep';
  `ArgumentHelper.dp`, PR #3207 'Torch dp support'): an earlier argparse exits on them ("unrecognized arguments").
* The PyTorch engine v0.8.0 – v0.10.x: `DistChecker` (check_env/dist.py) exits unless dp % ep == 0, and
  `DistConfig` makes the world dp ranks at dp > 1 (max(tp, ep) at dp 1, where every ep > 1 exits).
* The PyTorch engine from v0.11.0 (PR #4004 'Refactor dp tp'): `DistChecker` exits unless ep % dp == 0 and
  `DistConfig.__post_init__` makes the world `ep` ranks, attention TP ep ÷ dp, the MLP's TP `tp`, the experts' TP 1.
* The PyTorch engine's `--dp` (`pytorch_world.PYTORCH_DP_ERAS`): one DP world from v0.9.0 (serve/openai/launch_server.py; tp 1
  without ep exits), one DP rank a server at v0.8.0 (not modelled). Which world, and which sizes exit:
  pytorch_world.py (planned with `ParallelLayout.world`, attention data-parallel inside it).
* TurboMind's `--dp`: v0.8.0 never reads it (one engine: not modelled), v0.9.0 – v0.10.2 exit on it
  (serve/openai/launch_server.py asserts), v0.11.0 on read (`TURBOMIND_DP_ERAS`).
* TurboMind before 0.15.0 never reads `--ep` (cli/serve.py 0.14.0:231 passes it to `PytorchEngineConfig` only): any
  size starts, planned as EP off (`expert_parallel_unread`).
* TurboMind from 0.15.0: `derive_parallel_config` (turbomind/parallel_config.py) asserts where no layout holds
  (`mlp_tp_and_devices` None): an ep dividing tp at dp 1 gives mlp_tp = tp ÷ ep; 'tp=1, ep=N' is refused in its words.
"""

from __future__ import annotations

from typing import Literal

from kvtop.domain.engines.lmdeploy.eras import PARALLEL_FLAGS_ERAS
from kvtop.domain.engines.lmdeploy.pytorch_world import pytorch_world_refusal
from kvtop.domain.engines.lmdeploy.turbomind_ep import TURBOMIND_EP_ERAS, mlp_tp_and_devices
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.launch import LaunchSettings

TurbomindDp = Literal["absent", "unread", "asserts", "read"]
# what `serve api_server --dp N` (N > 1) does with TurboMind
TURBOMIND_DP_ERAS: Eras[TurbomindDp] = Eras((
    Era("", "absent", "cli/utils.py (v0.7.3): no --dp"),
    Era("0.8.0", "unread", "cli/serve.py (v0.8.0) passes dp to PytorchEngineConfig only and serves one engine"),
    Era("0.9.0", "asserts", "cli/serve.py (v0.9.0 – v0.10.2) runs serve/openai/launch_server.py at dp > 1, which "
        "asserts a --proxy-url, then 'only support dp > 1, but give dp=1': TurbomindEngineConfig(dp) is never set"),
    Era("0.11.0", "read", "cli/serve.py (v0.11.0) TurbomindEngineConfig(dp=args.dp), one api_server "
        "(`if args.dp == 1 or backend == 'turbomind'`)"),
))  # fmt: skip


def ep_refusal(backend: str, settings: LaunchSettings, version: ResolvedVersion) -> str | None:
    """Why `backend` ('turbomind' or 'pytorch') at `version` refuses the launch's --ep; None where it takes it."""
    ep = settings.ep
    if ep <= 1:
        return None
    if not PARALLEL_FLAGS_ERAS.at(version):
        return _no_flag("--ep", version)
    if backend == "pytorch":
        return pytorch_world_refusal(settings, version)
    if not TURBOMIND_EP_ERAS.at(version):
        return None  # not read: planned as EP off
    if mlp_tp_and_devices(settings.dp, settings.tp, ep, settings.dcp) is not None:
        return None
    return (f"TurboMind {version.label} finds no parallel layout for dp {settings.dp}, tp {settings.tp}, ep {ep}, cp "
            f"{settings.dcp}: ep must divide tp × dp with mlp_tp = tp × dp ÷ ep dividing tp ('tp=1, ep=N' is written "
            "'tp=N, ep=N'; turbomind/parallel_config.py derive_parallel_config)")  # fmt: skip


def dp_refusal(settings: LaunchSettings, version: ResolvedVersion) -> str | None:
    """Why `version` refuses the launch's --dp: LMDeploy before v0.8.0 has no such flag; None where it has."""
    if settings.dp <= 1 or PARALLEL_FLAGS_ERAS.at(version):
        return None
    return _no_flag("--dp", version)


def _no_flag(flag: str, version: ResolvedVersion) -> str:
    """The refusal of `--ep` / `--dp` at a release before either flag (`PARALLEL_FLAGS_ERAS`)."""
    since = PARALLEL_FLAGS_ERAS[-1]
    return f"LMDeploy {version.label} has no {flag} (from v{since.since}: {since.source})"


def turbomind_dp_refusal(settings: LaunchSettings, version: ResolvedVersion) -> str | None:
    """Why TurboMind at `version` does not start, or kvtop does not plan, the launch's --dp (> 1); None from v0.11.0
    (and before v0.8.0, where `dp_refusal` answers for every backend)."""
    if settings.dp <= 1:
        return None
    era = TURBOMIND_DP_ERAS.era(version)
    if era.value == "unread":
        return (f"not modelled: TurboMind {version.label} never reads --dp {settings.dp} and serves one engine of tp "
                f"GPUs: plan it without --dp ({era.source})")  # fmt: skip
    if era.value == "asserts":
        return f"TurboMind {version.label} exits at --dp {settings.dp} ({era.source})"
    return None


def backend_dp_refusal(backend: str, settings: LaunchSettings, version: ResolvedVersion) -> str | None:
    """Why `backend` ('turbomind' or 'pytorch') at `version` refuses the launch's --dp; None where it plans it."""
    if backend == "turbomind":
        return turbomind_dp_refusal(settings, version)
    if settings.ep > 1:  # --dp with --ep: `ep_refusal` answers for both
        return None
    return pytorch_world_refusal(settings, version)


def expert_parallel_unread(backend: str, settings: LaunchSettings, version: ResolvedVersion) -> str | None:
    """The plan's one note where `backend` at `version` does not read --ep (TurboMind before 0.15.0), else None."""
    if settings.ep <= 1 or backend != "turbomind" or TURBOMIND_EP_ERAS.at(version):
        return None
    return (f"--ep {settings.ep} not read: TurboMind {version.label} takes no ep, planned as EP off "
            f"({TURBOMIND_EP_ERAS.era(version).source})")
