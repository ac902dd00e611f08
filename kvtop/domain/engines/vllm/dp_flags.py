"""Two data-parallel flags of vLLM that kvtop reads: the DP backend and where the DP padding synchronizes.

- `--data-parallel-backend ray` (ParallelConfig.data_parallel_backend, "mp" by default; flag from v0.9.1): the Ray
  backend runs the same engine core in a Ray actor (`DPEngineCoreActor` subclasses `DPEngineCoreProc`, only setting
  CUDA_VISIBLE_DEVICES first, v1/engine/core.py:1133-1193 at v0.11.0); at TP × PP = 1 its executor stays in-process
  (config/parallel.py:447 at v0.11.0), the same worker, groups and memory as mp's, so kvtop plans it as mp. At
  TP × PP > 1 the executor becomes Ray's (config/parallel.py:465-468): not modelled, refused by name. Read at
  v0.11.0-v0.16.0 (`RAY_AS_MP_ERAS`); other releases refuse it by name. Any other value is refused by name.
- `--disable-nccl-for-dp-synchronization` (ParallelConfig.disable_nccl_for_dp_synchronization, flag from v0.11.1:
  engine/arg_utils.py:408-409 and :839-842 at v0.11.1, :1348 at v0.33.0; absent from v0.11.0's): the DP padding
  all-reduces on the Gloo CPU group, not the DP device group
  (v1/worker/dp_utils.py:20-34 at v0.11.2; the field async scheduling sets at v0.12.0, engine/arg_utils.py:1574-1578),
  so torch's NCCL communicator on the DP device group is not made in the profile (dp_gather.with_dp_communicators).
  Without the flag the field is False to v0.13.0, which async scheduling sets True at v0.12.0-v0.13.0; from v0.14.0
  it is None and takes async scheduling's value (`NCCL_OFF_ERAS`), so `--no-disable-nccl-for-dp-synchronization`
  (a stated False) keeps the padding on NCCL under async scheduling from v0.14.0 only.
"""

from __future__ import annotations

from typing import Literal

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.engines.vllm.flags_table import FlagSpan
from kvtop.domain.errors import InputError
from kvtop.domain.launch import LaunchSettings

BACKEND_FLAG = "--data-parallel-backend"
NCCL_OFF_FLAG = "--disable-nccl-for-dp-synchronization"
NCCL_ON_FLAG = "--no-disable-nccl-for-dp-synchronization"  # BooleanOptionalAction's other spelling (arg_utils.py:290)
SPANS = {
    BACKEND_FLAG: FlagSpan("0.9.1", None, "engine/arg_utils.py:1277 (v0.33.0)"),
    NCCL_OFF_FLAG: FlagSpan("0.11.1", None, "engine/arg_utils.py:839-842 at v0.11.1, :1348 (v0.33.0)"),
    NCCL_ON_FLAG: FlagSpan("0.11.1", None, "engine/arg_utils.py:839-842 at v0.11.1, :1348 (v0.33.0): a bool field's "
                                           "BooleanOptionalAction (:283 at v0.11.1)"),
}
FLAGS = frozenset(SPANS)
# Whether `--data-parallel-backend ray` at TP × PP = 1 runs mp's worker and groups, by release (None: not read)
RAY_AS_MP_ERAS: Eras[bool | None] = Eras((
    Era("", None, "not read before v0.11.0"),
    Era("0.11.0", True, "v1/engine/core.py:1133-1193 (DPEngineCoreActor subclasses DPEngineCoreProc), "
                        "config/parallel.py:447 (in-process executor at world size 1) at v0.11.0; the same at v0.11.1 "
                        "and v0.11.2 (core.py:1312-1359, parallel.py:550), v0.12.0 (core.py:1313, parallel.py:547) and "
                        "v0.13.0 (core.py:1347-1394, parallel.py:547)"),
    Era("0.14.0", True, "v0.14.0-v0.16.0: the Ray actors run mp's engine cores (EngineCoreActorMixin only sets the "
                        "visible devices: DPMoEEngineCoreActor(…, DPEngineCoreProc) for a MoE, EngineCoreActor(…, "
                        "EngineCoreProc) of DP size 1 for a dense model, v1/engine/core.py:1457-1610 at v0.14.0, "
                        ":1517-1670 at v0.16.0); the executor in-process at world size 1 (config/parallel.py:590 at "
                        "v0.14.0, :600 at v0.16.0)"),
    Era("0.17.0", None, "not read from v0.17.0: ParallelConfig picks the executor by world_size_across_dp, Ray's where "
                        "data_parallel_backend is ray even at TP × PP = 1 (config/parallel.py:715-755 at v0.17.0)"),
))  # fmt: skip


def refuse_unread_backend(settings: LaunchSettings, version: ResolvedVersion | None) -> None:
    """InputError naming `--data-parallel-backend` where its memory is not modelled: a value other than mp / ray, ray
    at TP × PP > 1 (Ray's executor), or ray at a release whose engine core was not read (`RAY_AS_MP_ERAS`)."""
    value = settings.flags.get(BACKEND_FLAG[2:])
    if value is None or value == "mp":
        return
    if value != "ray":
        raise InputError(f"{BACKEND_FLAG} {value}: not modelled by kvtop (only mp and ray are read)", field=BACKEND_FLAG)
    if settings.tp * settings.pp > 1:
        raise InputError(f"{BACKEND_FLAG} ray at TP × PP = {settings.tp * settings.pp}: Ray's executor "
                         "(config/parallel.py:465-468 at v0.11.0) is not modelled by kvtop", field=BACKEND_FLAG)  # fmt: skip
    if version is None:
        return
    era = RAY_AS_MP_ERAS.era(version)
    if era.value is None:
        raise InputError(f"{BACKEND_FLAG} ray at vLLM {version.label}: {era.source} "
                         "(read at v0.11.0-v0.16.0: planned as mp at TP × PP = 1)", field=BACKEND_FLAG)  # fmt: skip


# disable_nccl_for_dp_synchronization where the launch leaves it to vLLM, and what async scheduling does to it
NcclOffRule = Literal["false", "async_forces", "follows_async"]
NCCL_OFF_ERAS: Eras[NcclOffRule] = Eras((
    Era("", "false", "config/parallel.py:178 at v0.11.1 (False; async scheduling leaves it, engine/arg_utils.py at "
                     "v0.11.2)"),
    Era("0.12.0", "async_forces", "engine/arg_utils.py:1574-1578 at v0.12.0, config/vllm.py:594-601 at v0.13.0: async "
                                  "scheduling sets it True, --no-disable-nccl-for-dp-synchronization or not"),
    Era("0.14.0", "follows_async", "config/parallel.py:186 at v0.14.0 (Field(default=None)); config/vllm.py:635-644 "
                                   "at v0.14.0, :845-856 v0.20.0, :1721-1732 v0.33.0: None takes async scheduling's "
                                   "value, a stated False (--no-disable-nccl-for-dp-synchronization) stays"),
))  # fmt: skip


def padding_on_gloo(settings: LaunchSettings, version: ResolvedVersion, async_on: bool) -> tuple[bool, str]:
    """(on Gloo, why): whether the DP padding's all-reduce takes the Gloo CPU group, not the DP device group
    (ParallelConfig.disable_nccl_for_dp_synchronization: the flags, else `NCCL_OFF_ERAS` with `async_on`, the
    launch's async scheduling, `batching_async.async_scheduling`)."""
    rule = NCCL_OFF_ERAS.era(version)
    if settings.flags.get(NCCL_OFF_FLAG[2:]) is True:
        return True, NCCL_OFF_FLAG
    if async_on and rule.value == "async_forces":
        return True, f"async scheduling ({rule.source})"
    if settings.flags.get(NCCL_ON_FLAG[2:]) is True:
        return False, NCCL_ON_FLAG
    if async_on and rule.value == "follows_async":
        return True, f"async scheduling ({rule.source})"
    return False, f"disable_nccl_for_dp_synchronization False ({rule.source})"
