"""Whether a launch's host KV tier fits the host it would run on: the tier × the engine's ranks on the node against
the host's memory.

Every engine with a host tier kvtop reads (vLLM's KV offloading and V0 swap space, SGLang's HiCache, TensorRT-LLM's
secondary pool; LMDeploy and llama.cpp keep none) pins it in host memory on every rank, so the node must hold the
tier of each of the engine's ranks on it at once (`HostTier.total_bytes` per rank × ranks here). A tier larger than
the host's memory (less what the engine keeps free beside it: SGLang's 10 GiB, `HostTier.host_reserve_bytes`) cannot
be pinned: refused, with both figures. One that fits the total but not what is available now (plus what the engine's
own live tier pins, which a restart gives back first) is a warning: the start competes with what else runs there.
Without a host reading (`kvtop plan`, a remote node, a demo that states none) the check is a named state, never a
silent pass. One place decides; the planner's pane, its status line and the plan's JSON read it.
"""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, ConfigDict, computed_field

from kvtop.domain.deployment import HostTier
from kvtop.domain.observe import HostMemory
from kvtop.domain.wording import counted, gib


def host_origin(node_source: str) -> str:
    """Where a node's host memory figure comes from, in words, by the snapshot's source ('nvml', 'demo:<scenario>')."""
    return "the demo host's stated total" if node_source.startswith("demo") else "psutil's total of this host"


class HostTierState(str, Enum):
    FITS = "fits"
    OVER_AVAILABLE = "over_available"  # within the host's total, more than is available now: a warning
    OVER_HOST = "over_host"  # more than the host's memory (less the engine's reserve): refused
    HOST_UNKNOWN = "host_unknown"  # no host memory read: not checked, said


class HostTierFit(BaseModel):
    """One launch's host tier on one node, against that node's host memory."""

    model_config = ConfigDict(frozen=True)

    state: HostTierState
    connector: str  # the engine's name for the tier ('HiCache', 'secondary (host) pool')
    bytes_per_rank: int  # what stays pinned per rank
    ranks_on_node: int
    host_total_bytes: int | None  # None: HOST_UNKNOWN
    host_available_bytes: int | None
    host_origin: str  # where the host's figure comes from, in words ("psutil's total of this host")
    reserve_bytes: int = 0  # what the engine keeps free beside the tier (SGLang: 10 GiB)
    freed_bytes: int = 0  # what the engine's live tier pins on this node now, given back at a restart

    @property
    def on_node_bytes(self) -> int:
        """The tier over the engine's ranks on this node."""
        return self.bytes_per_rank * self.ranks_on_node

    @property
    def refused(self) -> bool:
        return self.state is HostTierState.OVER_HOST

    @computed_field  # type: ignore[prop-decorator]
    @property
    def reason(self) -> str:
        """The verdict in one line, with the figures: what the tier asks of the node, and what the host has (in
        `plan --json`'s `host_fit`, as a computed field)."""
        ranks = counted(self.ranks_on_node, "rank")
        if self.state is HostTierState.HOST_UNKNOWN or self.host_total_bytes is None:
            return (f"{self.connector}: {gib(self.bytes_per_rank)} per rank × {ranks} = {gib(self.on_node_bytes)}; no "
                    "host memory was read, so whether the node holds it is not checked")  # fmt: skip
        asked = f"{self.connector}: {gib(self.bytes_per_rank)} per rank × {ranks} on this node = {gib(self.on_node_bytes)}"
        reserve = f", less the {gib(self.reserve_bytes)} the engine keeps free" if self.reserve_bytes else ""
        origin = f" ({self.host_origin})" if self.host_origin else ""  # no '()' where no origin is named
        total = f"the host's {gib(self.host_total_bytes)}{origin}{reserve}"
        if self.state is HostTierState.OVER_HOST:
            return f"{asked}, more than {total}: it cannot be pinned"
        if self.host_available_bytes is None:
            return f"{asked}, within {total}"
        # the available side in the check's own figures (`host_tier_fit`: on node + reserve against available now +
        # what the live tier gives back); both figures named: the pane's header shows the host's free memory beside
        # this line (2,048.00 GiB in all against 1,711.53 GiB free read as two figures of one thing, session 70's operator)
        kept = (f" + the {gib(self.reserve_bytes)} the engine keeps free = {gib(self.on_node_bytes + self.reserve_bytes)}"
                if self.reserve_bytes else "")  # fmt: skip
        room = (f"the {gib(self.host_available_bytes + self.freed_bytes)} available to it ({gib(self.host_available_bytes)}"
                f" available now + {gib(self.freed_bytes)} the live tier gives back)" if self.freed_bytes
                else f"the {gib(self.host_available_bytes)} available now")  # fmt: skip
        if self.state is HostTierState.OVER_AVAILABLE:
            return (f"{asked}{kept}, within the host's {gib(self.host_total_bytes)}{origin} but more than {room}: the "
                    "start competes with what else holds host memory")  # fmt: skip
        return f"{asked}{kept}, within {room}, of the host's {gib(self.host_total_bytes)} in all{origin}"


def host_tier_fit(
    tier: HostTier | None,
    host: HostMemory | None,
    *,
    ranks_on_node: int | None = None,
    host_origin: str = "",
    live_tier: HostTier | None = None,
) -> HostTierFit | None:
    """The verdict of `tier` on a host with `host`'s memory (None: no tier asked for). `ranks_on_node`: the engine's
    ranks on this node (default: all of the tier's ranks); `live_tier`: the tier the running engine pins now, which a
    restart frees before it asks for the new one."""
    if tier is None:
        return None
    ranks = max(min(ranks_on_node, tier.ranks) if ranks_on_node is not None else tier.ranks, 1)
    per_rank = tier.pinned_bytes_per_rank or tier.bytes_per_rank
    found = HostTierFit(state=HostTierState.HOST_UNKNOWN, connector=tier.connector, bytes_per_rank=per_rank,
                        ranks_on_node=ranks, host_total_bytes=None, host_available_bytes=None, host_origin=host_origin,
                        reserve_bytes=tier.host_reserve_bytes)  # fmt: skip
    if host is None:
        return found
    freed = (live_tier.pinned_bytes_per_rank or live_tier.bytes_per_rank) * ranks if live_tier is not None else 0
    if found.on_node_bytes > host.total_bytes - tier.host_reserve_bytes:
        state = HostTierState.OVER_HOST
    elif found.on_node_bytes + tier.host_reserve_bytes > host.available_bytes + freed:
        state = HostTierState.OVER_AVAILABLE
    else:
        state = HostTierState.FITS
    return found.model_copy(update={"state": state, "host_total_bytes": host.total_bytes,
                                    "host_available_bytes": host.available_bytes, "freed_bytes": freed})  # fmt: skip
