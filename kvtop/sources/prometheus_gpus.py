"""Every node's GPUs from Prometheus: per-node sums for the node list, every GPU only when asked for.

The node list needs of a node's GPUs only their count, how many are lost and used over total memory.
Prometheus sums them itself (`GPU_SUMMARY_QUERIES`: one series per exporter and figure), so a refresh of
1,000 nodes × 8 GPUs reads 7,000 GPU series instead of 64,000 (benchmarks/cluster_scale_bench.py: the
refresh's answers went from 14.8 to 3.2 MiB of JSON). Every GPU's series (`GPU_LIST_QUERIES`) are read only for `kvtop cluster --gpus`; the
drill-down reads one node's own series (prometheus_node.py).

Which exporter speaks for a node: kvtop's (NVML v2 bytes) wherever it reports GPUs, else DCGM's (MiB,
host label `Hostname` or `hostname`); when DCGM counts more GPUs on a kvtop node, a note says so. Memory
is summed over the GPUs reporting both used and total (DCGM: used and free; total = used + free +
reserved, as one GPU's is), so a GPU that reports half its figures moves neither sum.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kvtop.domain.cluster import OUT_OF_SERVICE, ClusterGpu, GpuSource, NodeGpus
from kvtop.units import MIB

Series = list[tuple[dict[str, str], float]]
_DCGM_FB = "DCGM_FI_DEV_FB_(USED|FREE|RESERVED)"
_DCGM_HOST = "instance, Hostname, hostname"

_KVTOP_FIGURES = ("kvtop_gpu_memory_used_bytes", "kvtop_gpu_memory_total_bytes",
                  "kvtop_gpu_memory_reserved_bytes", "kvtop_gpu_memory_free_bytes")  # fmt: skip
_DCGM_FIGURES = ("DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_FB_RESERVED")


def _both(pattern: str, first: str, second: str) -> str:
    """`pattern`'s series of the GPUs whose `first` and `second` are figures (`and` matches a GPU's series:
    equal labels but the name); a negative or NaN sample is no figure (`>= 0` drops both), never summed."""
    return f'{{__name__=~"{pattern}"}} >= 0 and {first} >= 0 and {second} >= 0'


#: what the node list needs, summed by Prometheus per exporter (kvtop's by instance, DCGM's by instance and host)
GPU_SUMMARY_QUERIES = {
    "gpu_states": "count by (instance, state) (kvtop_gpu_info)",
    # used and total over the GPUs reporting both
    "gpu_memory": "sum by (instance, __name__) ("
    + _both("kvtop_gpu_memory_(used|total)_bytes", "kvtop_gpu_memory_used_bytes", "kvtop_gpu_memory_total_bytes") + ")",
    # distinct GPUs: a MIG GPU has one series per instance
    "dcgm_gpus": f'count by ({_DCGM_HOST}) (group by ({_DCGM_HOST}, gpu) ({{__name__=~"{_DCGM_FB}"}}))',
    # used, free and reserved MiB over the GPUs (MIG instances) reporting used and free
    "dcgm_memory": f"sum by ({_DCGM_HOST}, __name__) (" + _both(_DCGM_FB, "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE") + ")",
    # the GPU figures that cannot be true (negative; NaN: `x != x`), left out of the sums above and named
    # (`or` adds a NaN only where the answer so far has no series of that GPU: such a second lie is not
    # named, and not summed either)
    "gpu_lies": f'{{__name__=~"kvtop_gpu_memory_(total|used|reserved|free)_bytes|{_DCGM_FB}"}} < 0 or '
    + " or ".join(f"{name} != {name}" for name in (*_KVTOP_FIGURES, *_DCGM_FIGURES)),
}
#: every GPU's series (`kvtop cluster --gpus`)
GPU_LIST_QUERIES = {
    "dcgm": '{__name__=~"DCGM_FI_DEV_FB_USED|DCGM_FI_DEV_FB_FREE|DCGM_FI_DEV_FB_RESERVED"}',
    "gpu": '{__name__=~"kvtop_gpu_memory_(total|used|reserved|free)_bytes"}',
    "gpu_state": "kvtop_gpu_info",
}
_DCGM_FIELDS = {
    "DCGM_FI_DEV_FB_USED": "used_bytes",
    "DCGM_FI_DEV_FB_FREE": "free_bytes",
    "DCGM_FI_DEV_FB_RESERVED": "reserved_bytes",
}
_KVTOP_MEMORY = {"kvtop_gpu_memory_used_bytes": "used_bytes", "kvtop_gpu_memory_total_bytes": "total_bytes"}


def dcgm_host(labels: Mapping[str, str]) -> str | None:
    """The host DCGM names (`Hostname`, or `hostname` in some exporters' pages)."""
    return labels.get("Hostname") or labels.get("hostname") or None


@dataclass
class _Tally:
    """One exporter's sums for one node while the answers are read."""

    node: str
    instance: str
    source: GpuSource
    count: int = 0
    lost: int = 0
    memory: dict[str, int] = field(default_factory=dict)  # used_bytes/total_bytes/free_bytes/reserved_bytes

    def summary(self) -> NodeGpus:
        m = self.memory
        if self.source is GpuSource.DCGM and "used_bytes" in m and "free_bytes" in m:
            m = {
                "used_bytes": m["used_bytes"],
                "total_bytes": m["used_bytes"] + m["free_bytes"] + m.get("reserved_bytes", 0),
            }
        return NodeGpus(source=self.source, count=self.count, lost=self.lost,
                        used_bytes=m.get("used_bytes"), total_bytes=m.get("total_bytes"))  # fmt: skip


@dataclass(frozen=True)
class NodeGpuReport:
    """The node's GPUs as the join settles them: the summary shown, the exporters' instances, a note."""

    summary: NodeGpus | None
    instances: tuple[str, ...]
    note: str | None = None


def gpu_summaries(answers: Mapping[str, Series], node_of: Callable[[str], str]) -> dict[str, NodeGpuReport]:
    """Each node's GPUs from GPU_SUMMARY_QUERIES' answers: kvtop's where it reports any, else DCGM's."""
    tallies: dict[tuple[GpuSource, str, str], _Tally] = {}

    def tally(source: GpuSource, node: str, instance: str) -> _Tally:
        key = (source, node, instance)
        found = tallies.get(key)
        if found is None:
            found = tallies[key] = _Tally(node, instance, source)
        return found

    for labels, value in answers.get("gpu_states", ()):
        instance = labels.get("instance", "")
        kvtop = tally(GpuSource.KVTOP, node_of(instance), instance)
        kvtop.count += int(value)
        if labels.get("state") in OUT_OF_SERVICE:
            kvtop.lost += int(value)
    for labels, value in answers.get("gpu_memory", ()):
        figure = _KVTOP_MEMORY.get(labels.get("__name__", ""))
        instance = labels.get("instance", "")
        if figure is not None:
            tally(GpuSource.KVTOP, node_of(instance), instance).memory[figure] = int(value)
    for key, per_gpu in (("dcgm_gpus", False), ("dcgm_memory", True)):
        for labels, value in answers.get(key, ()):
            instance = labels.get("instance", "")
            dcgm = tally(GpuSource.DCGM, dcgm_host(labels) or node_of(instance), instance)
            if not per_gpu:
                dcgm.count += int(value)
            elif (figure := _DCGM_FIELDS.get(labels.get("__name__", ""))) is not None:
                dcgm.memory[figure] = int(value) * MIB
    by_node: dict[str, list[_Tally]] = {}
    for found in tallies.values():
        by_node.setdefault(found.node, []).append(found)
    return {node: _settle(found) for node, found in by_node.items()}


def _settle(tallies: list[_Tally]) -> NodeGpuReport:
    """kvtop's exporter speaks for the node wherever it reports GPUs; of two exporters of one kind, the one
    counting more (they see the same GPUs: summing them would count each twice)."""
    instances = tuple(sorted({t.instance for t in tallies if t.instance}))
    kvtop = max((t for t in tallies if t.source is GpuSource.KVTOP), key=lambda t: t.count, default=None)
    dcgm = max((t for t in tallies if t.source is GpuSource.DCGM), key=lambda t: t.count, default=None)
    if kvtop is not None and kvtop.count:
        note = None
        if dcgm is not None and dcgm.count > kvtop.count:
            note = (f"DCGM reports {dcgm.count} GPUs, kvtop's exporter {kvtop.count}: the node's GPU figures "
                    "are kvtop's (kvtop cluster --gpus lists each)")  # fmt: skip
        return NodeGpuReport(kvtop.summary(), instances, note)
    if dcgm is not None and dcgm.count:
        return NodeGpuReport(dcgm.summary(), instances)
    return NodeGpuReport(None, instances)


def gpu_lists(
    answers: Mapping[str, Series], node_of: Callable[[str], str]
) -> dict[str, tuple[set[str], list[ClusterGpu]]]:
    """Every GPU of each node from GPU_LIST_QUERIES' answers, with the instances that reported them; kvtop's
    NVML v2 bytes win over DCGM's MiB for the same GPU index."""
    nodes: dict[str, tuple[set[str], dict[str, dict[str, Any]]]] = {}

    def gpus_of(name: str, instance: str) -> dict[str, dict[str, Any]]:
        instances, gpus = nodes.setdefault(name, (set(), {}))
        if instance:
            instances.add(instance)
        return gpus

    def kvtop_gpu(labels: Mapping[str, str]) -> dict[str, Any]:
        instance = labels.get("instance", "")
        gpus, index = gpus_of(node_of(instance), instance), labels.get("gpu", "?")
        gpu = gpus.get(f"kvtop:{index}")
        if gpu is None:
            gpu = gpus[f"kvtop:{index}"] = {"source": GpuSource.KVTOP, "gpu": index, "uuid": labels.get("uuid") or None,
                                            "name": labels.get("name") or None}  # fmt: skip
        return gpu

    for labels, value in answers.get("gpu", ()):
        kind = labels.get("__name__", "").removeprefix("kvtop_gpu_memory_").removesuffix("_bytes")
        gpu = kvtop_gpu(labels)
        if kind in ("total", "used", "reserved", "free"):
            gpu[f"{kind}_bytes"] = int(value)
    for labels, _ in answers.get("gpu_state", ()):  # a lost GPU has no memory series: it is counted here
        kvtop_gpu(labels)["state"] = labels.get("state") or None
    for labels, value in answers.get("dcgm", ()):
        instance = labels.get("instance", "")
        gpus, index = gpus_of(dcgm_host(labels) or node_of(instance), instance), labels.get("gpu", "?")
        if f"kvtop:{index}" in gpus:
            continue  # kvtop's NVML v2 numbers win over DCGM's MiB for the same GPU (read first, above)
        gpu = gpus.setdefault(f"dcgm:{index}", {"source": GpuSource.DCGM, "gpu": index, "uuid": labels.get("UUID"),
                                                 "name": labels.get("modelName")})  # fmt: skip
        field_name = _DCGM_FIELDS.get(labels.get("__name__", ""))
        if field_name is not None:
            gpu[field_name] = int(value) * MIB
    return {name: (instances, _listed(gpus)) for name, (instances, gpus) in nodes.items()}


def _listed(gpus: dict[str, dict[str, Any]]) -> list[ClusterGpu]:
    listed = []
    for gpu in gpus.values():
        if gpu["source"] is GpuSource.DCGM:
            used, free = gpu.get("used_bytes"), gpu.get("free_bytes")
            gpu["total_bytes"] = (
                used + free + gpu.get("reserved_bytes", 0) if used is not None and free is not None else None
            )
        listed.append(ClusterGpu.model_construct(**gpu))  # typed at the door: ints and text
    return sorted(listed, key=lambda g: (g.gpu.zfill(4), g.source.value))
