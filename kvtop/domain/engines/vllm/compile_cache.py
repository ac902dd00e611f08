"""Whether a vLLM start compiled its model cold or loaded it from torch.compile's cache (docs/engines/vllm.md §2.6).

vLLM compiles the model with torch.compile in the first forward, inside `profile_run`, unless its cache holds the
compiled graphs: then it loads them and says so, 'Directly load the compiled graph(s) for shape %s from the cache, took
%.3f s' (compilation/backends.py:119-121 at v0.8.5.post1; 'for compile range %s' at v0.30.0, :293-295, :315 at
v0.34.0), or from v0.2x 'Directly load AOT compilation from path %s' (compilation/decorators.py:313-315 at v0.30.0,
:327 at v0.34.0). A cold start says 'Compiling a graph for general shape' (v0.6.x-v0.8.x), 'for dynamic shape takes
%.2f s' / 'for shape %s takes %.2f s' (CompilerManager.compile, v0.8.x-v0.10.x) or 'for compile range %s takes %.2f s'
(compilation/backends.py:422 at v0.34.0). Inductor's compile and Triton's autotuning then run inside the profile:
their scratch raises torch's peak (`allocated_bytes.all.peak`, which `memory_profiling` charges as the transient
headroom, utils/mem_utils.py:245-340 at v0.34.0) and the device's used memory beyond torch's stays raised after the
profile's `empty_cache` (non-torch: the RTX 5090 pair held +0.98 GiB non-torch and +0.76 GiB peak cold).

Measured on kvtop's corpus (session 60, the table in docs/engines/vllm.md §2.6): the same launch on the same host held
0.46-1.74 GiB more cold than warm (RTX 3090 0.46, A40 0.77, RTX 4090 0.78 and ≈ 1.0, L4 0.99, RTX PRO 6000 0.98,
RTX 5090 1.74; B200 ≈ 2.6 at v0.9.1), and nothing on two cold starts whose layer shapes an earlier start of the host
had compiled (Llama-3.1-8B, Mistral-7B: likely Inductor's and Triton's own caches, keyed by kernel, which outlive
vLLM's per-model one). Neither the size nor whether it is paid at all follows from the launch (model size, release, GPU or batch), so
the plan's figure stays the fits' (between the two: the corpus's cold starts plan +1.4 % median, its warm ones
-0.5 to -2 %) and this is **not modelled**: a log's lines name which a start was, measured (`compile_cache_state`).
"""

from __future__ import annotations

from typing import Literal

CompileCacheState = Literal["warm", "cold"]

WARM_CACHE_MARKS = ("Directly load the compiled graph", "Directly load AOT compilation")
COLD_COMPILE_MARK = "Compiling a graph for"

WARM_COMPILE_CACHE = (
    "torch.compile's cache was warm (the log's 'Directly load …' line): the profile ran no Inductor compile or "
    "autotuning, so this start charged less than a cold one (0.46-1.74 GiB less on the corpus's pairs of one launch; "
    "vllm#54383: 0.47 GiB a GPU at v0.28.0); kvtop's plan sits between a warm and a cold start: not modelled"
)
COLD_COMPILE = (
    "torch.compile compiled cold in this start (the log's 'Compiling a graph for …' line): Inductor's compile and "
    "Triton's autotuning ran inside the profile, which can charge up to ≈ 1.7 GiB (2.6 on a B200) more than a warm "
    "start of the same launch, or nothing where Inductor's own cache already held the kernels; kvtop's plan sits "
    "between a warm and a cold start: not modelled"
)


def compile_cache_state(loads: tuple[str, ...], misses: tuple[str, ...]) -> CompileCacheState | None:
    """What a log's lines say of torch.compile's cache: 'cold' where any graph was compiled (`misses`, even beside a
    load: Inductor ran inside the profile), 'warm' where graphs were only loaded, None where no line says."""
    if misses:
        return "cold"
    return "warm" if loads else None


def compile_cache_note(loads: tuple[str, ...], misses: tuple[str, ...]) -> str | None:
    """The note a log's compile lines earn (`WARM_COMPILE_CACHE`, `COLD_COMPILE`); None where no line says."""
    state = compile_cache_state(loads, misses)
    return None if state is None else WARM_COMPILE_CACHE if state == "warm" else COLD_COMPILE

