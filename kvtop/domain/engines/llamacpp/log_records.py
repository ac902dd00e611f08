"""The values llama.cpp's startup log states (read by its `log_lines`).

Each KV cache prints one summary (docs/engines/llamacpp.md §3):

    llama_kv_cache: size = 4096.00 MiB ( 32768 cells,  32 layers,  1/1 seqs), K (f16): 2048.00 MiB, V (f16): …
    llama_kv_cache_unified: size = … (N cells, L layers, S seqs), K (…): …           (2025-05 – 2025-08)
    llama_new_context_with_model: KV self size  = 1024.00 MiB, K (f16):  512.00 MiB, V (f16): …   (older)

(`%7.2f` of the bytes ÷ 2^20); a model with sliding-window layers prints two, the non-SWA cache first
(`llama_kv_cache_iswa: creating non-SWA KV cache` / `creating     SWA KV cache`). `llama_context:`
prints the cells it asked for (`n_ctx`, `n_ctx_seq`, `n_seq_max`, `kv_unified`, `n_ubatch`).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from kvtop.domain.engine_log_records import Measured, RankLog


def mib_figure(text: str) -> Measured:
    """A `%7.2f` MiB figure (`Measured.from_mib`): '2048.00' is [2047.995, 2048.005] MiB, its point the byte below."""
    return Measured.from_mib(text, point="down")


class KvCacheSummary(BaseModel):
    """One cache's summary line."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    size: Measured
    k_type: str
    k_size: Measured
    v_type: str
    v_size: Measured
    cells: int | None = None  # per stream (None: the older `KV self size` line prints none)
    layers: int | None = None
    seqs: int | None = None  # n_seq_max
    streams: int | None = None  # n_stream (`S/T seqs`; the unified cache's older `S seqs` is one stream)
    sliding: bool = False  # printed after `creating     SWA KV cache`

    @property
    def total_cells(self) -> int | None:
        return self.cells * (self.streams or 1) if self.cells is not None else None


class KvBuffer(BaseModel):
    """One `<device> KV buffer size = X MiB` line: the bytes of one cache on one device (`CPU`: host memory)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    device: str  # ggml_backend_buffer_name: `CPU`, `CUDA0`, `Metal`, `HTP0`, `Vulkan0`, …
    size: Measured
    sliding: bool = False  # printed after `creating     SWA KV cache`

    @property
    def on_host(self) -> bool:
        return self.device.upper().startswith("CPU")


def whole_mib(text: str) -> Measured:
    """A `%zu` MiB figure (bytes / 1024 / 1024, floored) as bytes: the printed MiB, up to one MiB short."""
    return Measured.from_mib(text, printed="floored")


class DeviceMemory(BaseModel):
    """One `device_info:` line (common.cpp `common_params_print_info`: `  - %-8s: %s (%zu MiB, %zu MiB free)`): a
    backend device's total and free memory as `ggml_backend_dev_memory` reads them (CUDA: `cudaMemGetInfo`'s), before
    the model loads."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    device: str  # ggml_backend_dev_name: `CPU`, `CUDA0`, `Vulkan0`, `Metal`, …
    description: str  # ggml_backend_dev_description: `NVIDIA GeForce RTX 2060`
    total: Measured
    free: Measured


class LlamacppRankLog(RankLog):
    """Everything llama-server printed (one process)."""

    kv_caches: tuple[KvCacheSummary, ...] = ()
    n_ctx: tuple[int, ...] = ()  # `llama_context: n_ctx = N` (older: `llama_new_context_with_model: n_ctx = N`)
    n_ctx_seq: tuple[int, ...] = ()  # `n_ctx_seq` (older `n_ctx_per_seq`)
    n_seq_max: tuple[int, ...] = ()
    n_ubatch: tuple[int, ...] = ()
    kv_unified: tuple[bool, ...] = ()
    offloaded_layers: tuple[tuple[int, int], ...] = ()  # `offloaded 15/33 layers to GPU`
    repeating_on_gpu: tuple[int, ...] = ()  # `load_tensors: offloading 14 repeating layers to GPU`
    kv_buffers: tuple[KvBuffer, ...] = ()  # `llama_kv_cache:       CUDA0 KV buffer size =  1792.00 MiB`
    slots: tuple[int, ...] = ()  # `initializing slots, n_slots = 4`
    slot_ctx: tuple[int, ...] = ()  # each slot's `new slot, n_ctx = 8192` (older `new slot n_ctx_slot = 8192`)
    n_swa: tuple[int, ...] = ()  # print_info: n_swa
    devices: tuple[DeviceMemory, ...] = ()  # `device_info:`'s `  - CUDA0   : NVIDIA … (5738 MiB, 5141 MiB free)`
    builds: tuple[int, ...] = ()  # `build: 6980 (5e4f…)` / `main: build = 3673 (…)`: llama.cpp's build number
