"""Where llama.cpp puts each layer's KV: the GPU of its layer, or host memory (docs/engines/llamacpp.md §10).

`llama_kv_cache`'s constructor (src/llama-kv-cache.cpp) gives layer `il` the CPU buffer type unless
`offload` (cparams.offload_kqv, false under `-nkvo`/`--no-kv-offload`), and then the buffer type of
`model.dev_layer(il)`, the device `load_tensors` gave the layer (src/llama-model.cpp):

    i_gpu_start = max(n_layer + 1 − n_gpu_layers, 0)     layers il < i_gpu_start are on the CPU
                                                         (il = n_layer is the output layer: -ngl counts it)

so `-ngl N` with N ≤ n_layer leaves the KV of the first n_layer + 1 − N layers in host memory. The KV
follows the layer's device, not its tensors' buffers: `--override-tensor` moves weights, not the KV.
Older builds used `n_layer − n_gpu_layers` (one more repeating layer on the GPU) from a build not known:
the plan uses the recent rule and names the older one's figure. No `-ngl` is the build's default
(eras.DEFAULT_GPU_LAYERS_ERAS: 0 layers, then every layer from ~b6350); with no build stated the plan
takes the current default and names what an older build does.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvtop.domain.engines.llamacpp.eras import DEFAULT_GPU_LAYERS_ERAS, build_release
from kvtop.domain.engines.llamacpp.flags import GPU_LAYERS_FLAGS, NO_KV_OFFLOAD_FLAGS, flag_on, flag_value
from kvtop.domain.engines.llamacpp.ggml_types import cache_type
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import LayerKind, ModelSpec

SOURCE = "src/llama-kv-cache.cpp (`offload` → model.dev_layer(il)), src/llama-model.cpp (i_gpu_start)"


@dataclass(frozen=True)
class KvPlacement:
    """The repeating layers whose KV is in host memory, and why (an empty `host_layers`: all on the GPU).

    `assumed` names what the placement rests on that the launch and the build do not settle ('' when
    nothing), and `otherwise` the host layers had it gone the other way (None: no other)."""

    host_layers: tuple[int, ...]
    why: str  # '-nkvo', '-ngl 15 (18 of 32 layers on the CPU)', or '' when none
    assumed: str = ""
    otherwise: tuple[int, ...] | None = None

    @property
    def any_on_host(self) -> bool:
        return bool(self.host_layers)


def _default(model: ModelSpec, build: int | None, said: str) -> KvPlacement:
    """No `-ngl` (or −1, which common hands to the library as "its default"): the build's default; no build
    stated: the current default, the older one named."""
    n_layer = model.num_layers
    era = DEFAULT_GPU_LAYERS_ERAS.era(build_release(build))
    if build is not None:
        if era.value:
            return KvPlacement(host_layers=(), why="")
        return KvPlacement(host_layers=tuple(range(n_layer)),
                           why=f"{said}: builds before ~{DEFAULT_GPU_LAYERS_ERAS[-1].since} default to 0 GPU layers "
                               f"({era.source})")  # fmt: skip
    first = DEFAULT_GPU_LAYERS_ERAS[-1]
    assumed = (f"{said} and no build stated: planned with the default of builds from ~{first.since}, every layer on "
               f"the GPU ({first.source}); builds before it default to 0 GPU layers "
               f"({DEFAULT_GPU_LAYERS_ERAS[0].source}), every layer's KV and weights in host memory (-ngl settles it)")  # fmt: skip
    return KvPlacement(host_layers=(), why="", assumed=assumed, otherwise=tuple(range(n_layer)))


def _by_layers(model: ModelSpec, settings: LaunchSettings, build: int | None) -> KvPlacement:
    """The layers `-ngl` (or its default) leaves on the CPU, weights and KV alike."""
    n_layer = model.num_layers
    layers = flag_value(settings, GPU_LAYERS_FLAGS)
    if layers is None or (isinstance(layers, str) and layers.strip() == "-1"):
        return _default(model, build, "no -ngl" if layers is None else "-ngl -1 (the library's default)")
    if not (isinstance(layers, str) and layers.strip().isdigit()):
        return KvPlacement(host_layers=(), why="")  # `auto`, `all`: every layer
    asked = int(layers)
    on_cpu = min(max(n_layer + 1 - asked, 0), n_layer)
    older = min(max(n_layer - asked, 0), n_layer)
    why = f"-ngl {layers}: {on_cpu} of {n_layer} layers on the CPU" if on_cpu else ""
    if older == on_cpu:
        return KvPlacement(host_layers=tuple(range(on_cpu)), why=why)
    assumed = (f"-ngl {asked}: i_gpu_start = n_layer + 1 − N = {on_cpu} layers on the CPU, the rule of recent builds "
               f"(the output layer counted); older builds (the build of the change not known) use n_layer − N = "
               f"{older}")  # fmt: skip
    return KvPlacement(host_layers=tuple(range(on_cpu)), why=why, assumed=assumed, otherwise=tuple(range(older)))


def cpu_layers(model: ModelSpec, settings: LaunchSettings, build: int | None = None) -> int:
    """The layers whose weights stay on the CPU: `-ngl N` leaves n_layer + 1 − N (within 0 … n_layer); no
    `-ngl`, the build's default (0 GPU layers before ~b6350: all); `auto`, `all`: none."""
    return len(_by_layers(model, settings, build).host_layers)


def planned(model: ModelSpec, settings: LaunchSettings, build: int | None = None) -> KvPlacement:
    """The placement the launch asks for at `build` (None: not stated): `-nkvo` puts every layer's KV on the
    host, `-ngl N` (N ≤ n_layer) the first n_layer + 1 − N; no `-ngl`, the build's default (`_default`);
    `auto`/`all`, or more than the layers, every layer on the GPU."""
    if flag_on(settings, NO_KV_OFFLOAD_FLAGS):
        return KvPlacement(host_layers=tuple(range(model.num_layers)), why="-nkvo (--no-kv-offload)")
    return _by_layers(model, settings, build)


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
