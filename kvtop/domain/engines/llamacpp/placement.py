"""Where llama.cpp puts each layer's KV: the GPU of its layer, or host memory (docs/engines/llamacpp.md §10).

`llama_kv_cache`'s constructor (src/llama-kv-cache.cpp) gives layer `il` the CPU buffer type unless
`offload` (cparams.offload_kqv, false under `-nkvo`/`--no-kv-offload`), and then the buffer type of
`model.dev_layer(il)`, the device `load_tensors` gave the layer (src/llama-model.cpp):

    i_gpu_start = max(n_layer + 1 − n_gpu_layers, 0)     layers il < i_gpu_start are on the CPU
                                                         (il = n_layer is the output layer: -ngl counts it)

so `-ngl N` with N ≤ n_layer leaves the KV of the first n_layer + 1 − N layers in host memory. The KV
follows the layer's device, not its tensors' buffers: `--override-tensor` moves weights, not the KV.
Older builds used `n_layer − n_gpu_layers` (one more repeating layer on the GPU; not told apart here).
"""

from __future__ import annotations

from dataclasses import dataclass

from kvtop.domain.engines.llamacpp.flags import GPU_LAYERS_FLAGS, NO_KV_OFFLOAD_FLAGS, flag_on, flag_value
from kvtop.domain.engines.llamacpp.ggml_types import cache_type
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import LayerKind, ModelSpec

SOURCE = "src/llama-kv-cache.cpp (`offload` → model.dev_layer(il)), src/llama-model.cpp (i_gpu_start)"


@dataclass(frozen=True)
class KvPlacement:
    """The repeating layers whose KV is in host memory, and why (an empty `host_layers`: all on the GPU)."""

    host_layers: tuple[int, ...]
    why: str  # '-nkvo', '-ngl 15 (18 of 32 layers on the CPU)', or '' when none

    @property
    def any_on_host(self) -> bool:
        return bool(self.host_layers)


def cpu_layers(model: ModelSpec, settings: LaunchSettings) -> int:
    """The layers `-ngl N` leaves on the CPU: n_layer + 1 − N, within 0 … n_layer (no `-ngl`, `auto`, `all`: 0)."""
    layers = flag_value(settings, GPU_LAYERS_FLAGS)
    if not (isinstance(layers, str) and layers.strip().isdigit()):
        return 0
    return min(max(model.num_layers + 1 - int(layers), 0), model.num_layers)


def planned(model: ModelSpec, settings: LaunchSettings) -> KvPlacement:
    """The placement the launch asks for: `-nkvo` puts every layer's KV on the host, `-ngl N` (N ≤ n_layer)
    the first n_layer + 1 − N; no `-ngl` (or `auto`/`all`, or more than the layers) puts every layer on the GPU."""
    n_layer = model.num_layers
    if flag_on(settings, NO_KV_OFFLOAD_FLAGS):
        return KvPlacement(host_layers=tuple(range(n_layer)), why="-nkvo (--no-kv-offload)")
    on_cpu = cpu_layers(model, settings)
    if not on_cpu:
        return KvPlacement(host_layers=(), why="")
    why = f"-ngl {flag_value(settings, GPU_LAYERS_FLAGS)}: {on_cpu} of {n_layer} layers on the CPU"
    return KvPlacement(host_layers=tuple(range(on_cpu)), why=why)


def logged(model: ModelSpec, repeating_on_gpu: int) -> KvPlacement:
    """The placement a log states (`load_tensors: offloading N repeating layers to GPU`): the first
    n_layer − N layers on the CPU."""
    on_cpu = min(max(model.num_layers - repeating_on_gpu, 0), model.num_layers)
    why = f"the log offloads {repeating_on_gpu} of {model.num_layers} repeating layers"
    return KvPlacement(host_layers=tuple(range(on_cpu)), why=why if on_cpu else "")


def layer_bytes(model: ModelSpec, layer: int, k_type: str, v_type: str) -> int:
    """One cell's K row + V row of `layer`: ggml_row_size(type_k, n_embd_k_gqa) + ggml_row_size(type_v, n_embd_v_gqa)."""
    g = model.geometry(layer)
    return cache_type(k_type, "-ctk").row_bytes(g.kv_heads * g.head_dim) + cache_type(v_type, "-ctv").row_bytes(
        g.kv_heads * g.v_head_dim
    )


def host_bytes(model: ModelSpec, placement: KvPlacement, cells: dict[LayerKind, int], k_type: str, v_type: str) -> int:
    """Bytes of KV in host memory: Σ over the host layers of the cells of their cache × their row bytes
    (`cells`: every stream's cells of the full-attention and of the sliding-window cache)."""
    return sum(
        cells.get(model.layer_attention[layer], 0) * layer_bytes(model, layer, k_type, v_type)
        for layer in placement.host_layers
    )
