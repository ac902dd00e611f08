"""The PyTorch engine's one DP world: how many GPUs `--dp` (with or without `--ep`) takes, what its attention and MLP
split over, and which sizes it exits on, by release (`LmdeployRules.world_ranks`; docs/engines/lmdeploy.md §16.2).

Read in the wheels 0.9.0, 0.10.2, 0.11.0 and 0.18.0 (PyPI; lmdeploy/pytorch/config.py `DistConfig`,
serve/openai/launch_server.py, pytorch/check_env/dist.py, pytorch/distributed.py):

* v0.9.0 – v0.10.2: `DistConfig.__post_init__` (config.py:110-121) makes the world dp ranks at dp > 1 with an
  attention config of tp 1; the other layers split over TP groups of tp consecutive ranks (distributed.py:55-74;
  nn/linear.py:75 reads `attn_config` for attention alone). launch_server.py (0.9.0:98-104) gives each DP server one
  GPU (`tp_per_dp = 1`) after asserting dp > 1, 'tp > 1 or ep > 1', 'tp <= dp' and 'ep <= dp'. So `--tp T --dp D` is
  D GPUs, attention TP 1, the MLP over T.
* from v0.11.0 (PR #4004 'Refactor dp tp'; config.py 0.11.0:131-176, the same in 0.18.0:224-267): mlp_tp = tp,
  moe_tp = 1 at ep > 1 else mlp_tp, world = ep at ep > 1 else max(mlp_tp, moe_tp) = tp, attn_tp = world ÷ dp,
  asserting the world ≥ and divisible by dp, ep, mlp_tp and moe_tp, and mlp_tp (> 1) a multiple of attn_tp.
  launch_server.py (0.11.0, 0.18.0:122-124) spreads the dp servers over max(dp, tp, ep) GPUs = the world.
  Embedding and LM head: `build_embedding` / `build_lm_head` with is_tp False (models/utils/model.py 0.18.0:139-225).

kvtop's layout: tp the MLP's TP (`--tp`), the world the GPUs of the stage (`ParallelLayout.world`), DP attention
inside it; the routed experts over ep (moe_tp 1), or over tp without --ep. Each DP rank sizes its own KV pool.
"""

from __future__ import annotations

from typing import Literal

from kvtop.domain.engines.lmdeploy.eras import PARALLEL_FLAGS_ERAS
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.launch import LaunchSettings

PytorchEp = Literal["dp_multiple_of_ep", "ep_world"]
# what the PyTorch engine's DistChecker / DistConfig take at ep > 1
PYTORCH_EP_ERAS: Eras[PytorchEp] = Eras((
    Era("", "dp_multiple_of_ep", "pytorch/check_env/dist.py (v0.8.0 – v0.10.2) DistChecker: 'ep>1 requires dp % ep "
        "== 0'; pytorch/config.py DistConfig world_size = dp at dp > 1"),
    Era("0.11.0", "ep_world", "PR #4004 (2025-11-14) 'Refactor dp tp': check_env/dist.py 'ep>1 requires ep % dp == "
        "0'; pytorch/config.py DistConfig world_size = ep, attn_tp = world ÷ dp, mlp_tp = tp, moe_tp = 1 (alike "
        "through the 0.18.0 wheel)"),
))  # fmt: skip
# how `serve api_server --dp N` (N > 1) runs the PyTorch engine
PYTORCH_DP_ERAS: Eras[bool] = Eras((
    Era("", False, "cli/serve.py (v0.8.0): one api_server per --dp-rank, DistChecker asks ray at dp > 1"),
    Era("0.9.0", True, "cli/serve.py (v0.9.0 – 0.18.0) runs serve/openai/launch_server.py at dp > 1: asserts "
                       "'only support tp > 1 or ep > 1', then one DP world (pytorch/config.py DistConfig)"),
))  # fmt: skip


def pytorch_world(settings: LaunchSettings, version: ResolvedVersion) -> int | None:
    """The GPUs of the PyTorch engine's one DP world at this launch, where not tp × dp replicas; None where its
    ranks are the flags' tp (dp 1 and ep 1 or ep == tp), or where it exits (`pytorch_world_refusal` says why)."""
    tp, dp, ep = settings.tp, settings.dp, settings.ep
    if (dp <= 1 and ep <= 1) or not PARALLEL_FLAGS_ERAS.at(version) or pytorch_world_refusal(settings, version):
        return None
    if PYTORCH_EP_ERAS.era(version).value == "dp_multiple_of_ep":  # v0.9.0 – v0.10.2: dp ranks, one GPU each
        return dp if dp > 1 else None
    world = ep if ep > 1 else tp
    return world if dp > 1 or world != tp else None


def pytorch_world_refusal(settings: LaunchSettings, version: ResolvedVersion) -> str | None:
    """Why the PyTorch engine at `version` exits on, or kvtop does not model, the launch's --dp / --ep; None where it
    starts (its GPUs: `pytorch_world`). Before v0.8.0 neither flag exists (`ep_sizes.dp_refusal`, `ep_refusal`)."""
    tp, dp, ep = settings.tp, settings.dp, settings.ep
    if (dp <= 1 and ep <= 1) or not PARALLEL_FLAGS_ERAS.at(version):
        return None
    label = f"LMDeploy {version.label}'s PyTorch engine"
    if dp > 1 and not PYTORCH_DP_ERAS.at(version):
        return f"not modelled: {label} at --dp {dp} serves one DP rank ({PYTORCH_DP_ERAS.era(version).source})"
    era = PYTORCH_EP_ERAS.era(version)
    if dp > 1 and tp == 1 and ep == 1:
        return f"{label} exits at --tp 1 --dp {dp} without --ep: 'only support tp > 1 or ep > 1' ({era.source})"
    if era.value == "dp_multiple_of_ep":
        return _dp_world_refusal(label, tp, dp, ep, era.source)
    return _ep_world_refusal(label, tp, dp, ep, era.source)


def _dp_world_refusal(label: str, tp: int, dp: int, ep: int, source: str) -> str | None:
    """v0.9.0 – v0.10.2: a world of dp ranks (DistChecker, launch_server.py's asserts)."""
    if ep > 1 and dp % ep:
        return f"{label} exits: 'ep>1 requires dp % ep == 0. Get dp={dp} and ep={ep}.' ({source})"
    if tp > dp:
        return f"{label} asserts: 'only support tp <= dp, but give tp={tp}, dp={dp}' (serve/openai/launch_server.py)"
    if dp % tp:
        return (f"not modelled: {label} at --tp {tp} --dp {dp} builds TP groups of {tp} consecutive ranks over "
                f"{dp}, the last one short (pytorch/distributed.py)")  # fmt: skip
    if ep > 1 and tp > 1:
        return (f"not modelled: {label} at --tp {tp} --dp {dp} --ep {ep}: experts over ep inside TP groups of "
                f"{tp}; kvtop models --tp 1 --dp {dp} --ep {ep} or --tp {tp} --dp {dp} ({source})")  # fmt: skip
    return None


def _ep_world_refusal(label: str, tp: int, dp: int, ep: int, source: str) -> str | None:
    """From v0.11.0: a world of ep ranks at ep > 1, else of tp ranks (DistConfig's asserts)."""
    world = ep if ep > 1 else tp
    if ep > 1 and ep % dp:  # DistConfig builds first, whose assert speaks before DistChecker's 'ep % dp' exit
        return f"{label} asserts: 'world_size {ep}, dp {dp}' (DistConfig: the world of ep ranks divides by dp; {source})"
    if world < dp or world % dp:
        return f"{label} asserts: 'world_size {world}, dp {dp}' (DistConfig: the world of tp ranks divides by dp; {source})"
    attn_tp = world // dp
    if world % tp or (tp > 1 and tp % attn_tp):
        return (f"{label} asserts at --tp {tp} --dp {dp} --ep {ep}: its world is {world} ranks, attention TP world ÷ "
                f"dp = {attn_tp}, and the MLP's TP (tp) must divide the world and be 1 or a multiple of attention TP "
                f"({source})")  # fmt: skip
    return None
