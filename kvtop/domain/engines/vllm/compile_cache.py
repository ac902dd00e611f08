"""Whether a vLLM start loaded its compiled model from torch.compile's cache: a warm cache (docs/engines/vllm.md §2.5).

vLLM compiles the model with torch.compile in the first forward, inside `profile_run`, unless its cache holds the
compiled graphs: then it loads them and says so, 'Directly load the compiled graph(s) for shape %s from the cache, took
%.3f s' (compilation/backends.py:119-121 at v0.8.5.post1; 'for compile range %s' at v0.30.0, :293-295), or from v0.2x
'Directly load AOT compilation from path %s' (compilation/decorators.py:313-315 at v0.30.0). Inductor's compile and
Triton's autotuning otherwise run inside the profile: their scratch raises torch's peak and their loaded kernels the
device's used memory, both charged to the profile (vllm#54383 measured a cold boot 0.47 GiB a GPU above a warm one at
v0.28.0; 1CatAI/1Cat-vLLM#518 torch's peak +2.59 GiB cold against +0.74 warm). A plan cannot know before a start
whether the cache is warm, and kvtop's fits do not say which of their starts were: **not modelled**, named where a
log shows it (the Colab L4 start at v0.8.5.post1 charged 0.44 GiB less than its L40S twin; the T4 start at v0.30.0
left no room for the 0.73 GiB kvtop keeps beside V2's profile, `v2_graphs.v2_beside_kept`).
"""

from __future__ import annotations

WARM_CACHE_MARKS = ("Directly load the compiled graph", "Directly load AOT compilation")

WARM_COMPILE_CACHE = (
    "torch.compile's cache was warm (the log's 'Directly load …' line): the profile ran no Inductor compile or "
    "autotuning, so this start charged less than a cold one (vllm#54383: 0.47 GiB a GPU at v0.28.0); kvtop's fits "
    "do not tell warm starts from cold ones: not modelled"
)


def warm_compile_cache(lines: tuple[str, ...]) -> str | None:
    """The note a log's warm-cache line earns (`WARM_COMPILE_CACHE`); None where no line says the cache was warm."""
    return WARM_COMPILE_CACHE if any(mark in line for line in lines for mark in WARM_CACHE_MARKS) else None
