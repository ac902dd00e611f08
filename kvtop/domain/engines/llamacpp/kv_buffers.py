"""The log's `<device> KV buffer size` lines against where llama.cpp's rules put each layer's KV (§10).

Each cache prints one buffer line per device it allocated on (src/llama-kv-cache.cpp), `CPU` for host
memory. The rule (placement.py) gives the host layers from `-nkvo`, else the log's own offload line
(`offloading N repeating layers to GPU`, else `offloaded A/B layers`), else the launch's `-ngl`; the host
bytes are cells × Σ host layers (K row + V row), compared with the CPU lines' `%8.2f` MiB.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvtop.domain.engines.llamacpp.flags import NO_KV_OFFLOAD_FLAGS, flag_on
from kvtop.domain.engines.llamacpp.log_records import KvBuffer, KvCacheSummary
from kvtop.domain.engines.llamacpp.placement import KvPlacement, host_bytes, logged, planned
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import LayerKind, ModelSpec
from kvtop.domain.wording import mib


@dataclass(frozen=True)
class KvBufferCheck:
    """The log's KV bytes by device beside the rule's split between host memory and the GPU."""

    devices: tuple[tuple[str, int], ...]  # (device, printed bytes over every cache), in the order printed
    host_low: int  # the CPU lines' bytes: the interval their `%8.2f` MiB print covers
    host_high: int
    predicted_host: int
    predicted_total: int
    placement: KvPlacement

    @property
    def agrees(self) -> bool:
        return self.host_low <= self.predicted_host <= self.host_high

    def note(self) -> str:
        printed = ", ".join(f"{device} {mib(value, 2)}" for device, value in self.devices)
        host = (self.host_low + self.host_high) // 2
        rule = self.placement.why or "every layer's KV on the GPU"
        said = (f"KV buffers in the log: {printed}; in host memory {mib(host, 2)}, the rule "
                f"({rule}) gives {mib(self.predicted_host, 2)} on the host and "
                f"{mib(self.predicted_total - self.predicted_host, 2)} on the GPU")  # fmt: skip
        if self.agrees:
            return f"{said}: they agree"
        if self.predicted_host == 0:
            return (f"{said}: llama.cpp kept KV in host memory where every layer is on the GPU (launched with -nkvo, "
                    "or a build without a GPU backend): host memory, not GPU memory; plan it with -nkvo")  # fmt: skip
        return f"{said}: they differ"


def _placement(model: ModelSpec, settings: LaunchSettings, repeating: int | None,
               offloaded: tuple[int, int] | None, build: int | None) -> KvPlacement:  # fmt: skip
    if flag_on(settings, NO_KV_OFFLOAD_FLAGS):
        return planned(model, settings, build)
    if repeating is not None:
        return logged(model, repeating)
    if offloaded is not None:
        done, of = offloaded  # A counts the output layer when it is offloaded (A = -ngl when -ngl ≤ n_layer + 1)
        return logged(model, model.num_layers if done >= of else max(done - 1, 0))
    return planned(model, settings, build)  # no offload line: -ngl, else the log's build's default


def check(
    model: ModelSpec, settings: LaunchSettings, caches: tuple[KvCacheSummary, ...], buffers: tuple[KvBuffer, ...],
    repeating: int | None, offloaded: tuple[int, int] | None, build: int | None = None,
) -> KvBufferCheck | None:  # fmt: skip
    """None where the log prints no buffer line or no cache summary with its cells."""
    full = next((cache for cache in caches if not cache.sliding), None)
    if not buffers or full is None or full.total_cells is None:
        return None
    swa = next((cache for cache in caches if cache.sliding), None)
    cells = {LayerKind.FULL: full.total_cells, LayerKind.SLIDING: swa.total_cells or 0 if swa else 0}
    placement = _placement(model, settings, repeating, offloaded, build)
    every = KvPlacement(host_layers=tuple(range(model.num_layers)), why="")
    devices: dict[str, int] = {}
    for buffer in buffers:
        devices[buffer.device] = devices.get(buffer.device, 0) + buffer.size.value_bytes
    on_host = [buffer.size for buffer in buffers if buffer.on_host]
    return KvBufferCheck(
        devices=tuple(devices.items()), host_low=sum(m.low_bytes for m in on_host),
        host_high=sum(m.high_bytes for m in on_host),
        predicted_host=host_bytes(model, placement, cells, full.k_type, full.v_type),
        predicted_total=host_bytes(model, every, cells, full.k_type, full.v_type), placement=placement,
    )  # fmt: skip
