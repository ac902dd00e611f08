"""gpt-oss's CUDA graphs on vLLM's V2 model runner: a charge its KV budget may take that kvtop's graph term does not
count, said aloud where a launch meets it (docs/engines/vllm.md §25). Its size is not known, so nothing is charged.

From v0.29.0 vLLM runs every generating model V2 can run on the V2 model runner (`runner_eras.runs_v2`; gpt-oss, an
MoE of no listed class, ran V1 before). V2's `profile_cudagraph_memory` (v1/worker/gpu/cudagraph_utils.py:718-801 at
v0.29.0) captures every PIECEWISE graph into a throwaway pool and takes the whole free-memory drop (`measured =
int(runner.capture_model())`), extrapolating only the FULL graphs from two samples
(`_extrapolate_full_graph_memory`, :823-831); gpu_worker.py:606-610 takes that figure off the KV budget (the same at
v0.34.0: cudagraph_utils.py:989-1076, gpu_worker.py:776-780). kvtop's V2 form (`v2_graphs.v2_graph_extras`) counts
the PIECEWISE graphs as one first capture and the FULL ones as V2 extrapolates them; what that leaves out on the
starts that print V2's estimate (dense models) is named in the term's basis (`v2_graphs.V2_PIECEWISE_UNCOUNTED`,
0.06-0.14 GiB).

What points at gpt-oss is the V1 runner's record: there vLLM estimates each mode from two samples (first capture +
(n − 1) × the second, gpu_model_runner.py:6581-6588 at v0.25.1), takes the estimate off and captures after the KV
cache, and gpt-oss's capture ran far above its estimate: chiatzen's gpt-oss-20b on an H100 PCIe at v0.26.0 (83
PIECEWISE + 83 FULL graphs, the largest 1,024) estimated 0.82 GiB and captured 1.52 (its EAGLE-3 starts, drafter
included, 1.19 and 2.02), where the corpus's other starts that print both capture at most 0.13 GiB above. On V1 that
excess costs no KV. Where it lies in the PIECEWISE graphs, V2 measures it and takes it off; the log does not split it
between the modes, and no gpt-oss start at v0.29.0 or later prints V2's estimate, so the charge is named, not sized.
The four compiled akamaslabs L4 starts at v0.29.0 kept 0.77-0.95 GiB a GPU less KV than planned (the eager one
0.07 more), but they compiled cold, and cold V2 starts of a dense model fall as short (wrbooth's Qwen2.5-7B on an
RTX 5090 at v0.29.0: 1.21 and 1.27 GiB cold, 0.23 warm): they do not measure this charge.
"""

from __future__ import annotations

from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.compilation import graph_config
from kvtop.domain.engines.vllm.runner_eras import runs_v2
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import ModelSpec
from kvtop.domain.wording import GIB, gib, gib_figure

GPT_OSS = "GptOssForCausalLM"
# The cudagraph modes that capture PIECEWISE graphs, which V2's profile measures in full (None: the launch states no
# mode, vLLM's default FULL_AND_PIECEWISE); FULL and FULL_DECODE_ONLY capture FULL graphs only, which V2 extrapolates
# from two samples as the V1 runner does (`_extrapolate_full_graph_memory`, cudagraph_utils.py:823-831 at v0.29.0)
PIECEWISE_MODES = (None, "PIECEWISE", "FULL_AND_PIECEWISE")
# chiatzen-gpt-oss-20b-h100pcie-v0260-nospec-u085-mml65536's log: 'Estimated CUDA graph memory: 0.82 GiB' and 'Graph
# capturing finished … took 1.52 GiB' (GiB)
V1_ESTIMATED, V1_CAPTURED = 0.82, 1.52


def gpt_oss_v2_graphs_not_modelled(model: ModelSpec, settings: LaunchSettings | None,
                                   version: ResolvedVersion) -> str | None:  # fmt: skip
    """The line for `EngineResult.not_modelled` where gpt-oss runs on V2 and captures CUDA graphs; None elsewhere
    (another class, the V1 runner, an eager launch, graphs turned off, or a FULL-only mode: no PIECEWISE graph)."""
    if model.architecture != GPT_OSS or settings is None or settings.enforce_eager:
        return None
    if not runs_v2(version, model, settings) or graph_config(settings.flags, version).mode not in PIECEWISE_MODES:
        return None
    return (f"gpt-oss's CUDA graphs on vLLM {version.label}'s V2 model runner, which measures every PIECEWISE graph "
            "in full (v1/worker/gpu/cudagraph_utils.py:718-801 at v0.29.0) where kvtop counts them as one capture: on "
            f"the V1 runner gpt-oss's graphs captured {gib(V1_CAPTURED * GIB)} against vLLM's two-sample estimate of "
            f"{gib_figure(V1_ESTIMATED * GIB)} (an H100 PCIe at v0.26.0), an excess V2 takes off the KV budget where it lies in the "
            "PIECEWISE graphs; its size there is not known (no gpt-oss start at v0.29.0 or later prints V2's estimate)")  # fmt: skip
