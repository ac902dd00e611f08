"""gpt-oss's CUDA graphs on vLLM's V2 model runner: what its budget takes off that kvtop's graph term does not count,
said aloud where a launch meets it (docs/engines/vllm.md §25).

From v0.29.0 vLLM runs every generating model V2 can run on the V2 model runner (`runner_eras.runs_v2`; gpt-oss, an
MoE of no listed class, ran V1 before). V2's `profile_cudagraph_memory` (v1/worker/gpu/cudagraph_utils.py:718-801 at
v0.29.0) captures every PIECEWISE graph into a throwaway pool and takes the whole free-memory drop (`measured =
int(runner.capture_model())`), extrapolating only the FULL graphs from two samples
(`_extrapolate_full_graph_memory`, :823-831); gpu_worker.py:606-610 takes that figure off the KV budget (the same at
v0.34.0: cudagraph_utils.py:989-1076, gpu_worker.py:776-780). kvtop's graph term is the V1 runner's two-sample form
(first capture + (n − 1) × the second, gpu_model_runner.py:6581-6588 at v0.25.1), fitted on logs that print it. For
most models a full capture costs no more than that form (the corpus's starts that print both: the capture at or
below the estimate, or up to 0.13 GiB above on Qwen3-8B at v0.20.0); gpt-oss's costs more: chiatzen's gpt-oss-20b
start on an H100 PCIe at v0.26.0 (V1, 83 PIECEWISE + 83 FULL graphs, the largest 1,024) estimated 0.82 GiB and
captured 1.52 GiB. What makes its graphs dearer was not found in the code, so the V2 charge is not modelled: vLLM
0.29.0's four compiled gpt-oss-20b starts on L4s in kvtop's corpus (akamaslabs study 10: TP 1 twice, TP 1 fp8, TP 2
EP) kept 0.77-0.95 GiB a GPU less KV than planned, its eager DP-4 start none (−0.07 GiB).
"""

from __future__ import annotations

from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.compilation import graph_config
from kvtop.domain.engines.vllm.runner_eras import runs_v2
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import ModelSpec

GPT_OSS = "GptOssForCausalLM"
# The cudagraph modes that capture PIECEWISE graphs, which V2's profile measures in full (None: the launch states no
# mode, vLLM's default FULL_AND_PIECEWISE); FULL and FULL_DECODE_ONLY capture FULL graphs only, which V2 extrapolates
# from two samples as the V1 runner does (`_extrapolate_full_graph_memory`, cudagraph_utils.py:823-831 at v0.29.0)
PIECEWISE_MODES = (None, "PIECEWISE", "FULL_AND_PIECEWISE")
# chiatzen-gpt-oss-20b-h100pcie-v0260-nospec-u085-mml65536's log: 'Estimated CUDA graph memory: 0.82 GiB' and 'Graph
# capturing finished … took 1.52 GiB' (GiB)
V1_ESTIMATED, V1_CAPTURED = 0.82, 1.52
# the KV the akamas study-10 L4 starts at v0.29.0 kept below kvtop's plan, per GPU (GiB): the compiled starts' least and
# most (TP 1 fp8 0.77, TP 2 EP 0.81, TP 1 auto and block 96 0.95); the eager DP-4 start's −0.07
V2_SHORT_LEAST, V2_SHORT_MOST = 0.77, 0.95


def gpt_oss_v2_graphs_not_modelled(model: ModelSpec, settings: LaunchSettings | None,
                                   version: ResolvedVersion) -> str | None:  # fmt: skip
    """The line for `EngineResult.not_modelled` where gpt-oss runs on V2 and captures CUDA graphs; None elsewhere
    (another class, the V1 runner, an eager launch, graphs turned off, or a FULL-only mode: no PIECEWISE graph)."""
    if model.architecture != GPT_OSS or settings is None or settings.enforce_eager:
        return None
    if not runs_v2(version, model, settings) or graph_config(settings.flags, version).mode not in PIECEWISE_MODES:
        return None
    return (f"gpt-oss's CUDA graphs on vLLM {version.label}'s V2 model runner, which measures every PIECEWISE graph "
            "in full (v1/worker/gpu/cudagraph_utils.py:718-801 at v0.29.0): its graphs cost more than the two-sample "
            f"estimate kvtop counts (captured {V1_CAPTURED:.2f} GiB against {V1_ESTIMATED:.2f} GiB estimated on a V1 "
            f"start at v0.26.0); compiled starts at v0.29.0 kept {V2_SHORT_LEAST:.2f}–"
            f"{V2_SHORT_MOST:.2f} GiB a GPU less KV than planned")  # fmt: skip
