"""What a vLLM launch meets that kvtop does not model, as the lines of `EngineResult.not_modelled` (the one list plan,
explain, the planner and the JSON read). Each module that names a case gives its line or None; this one gathers them
in one order, so the budget (budget.py) asks once and a new case is registered here, beside the others."""

from __future__ import annotations

from kvtop.domain.engines.base import EngineInputs
from kvtop.domain.engines.vllm.compilation import graph_mode_not_modelled
from kvtop.domain.engines.vllm.dp_dispatch import dp_communicators_not_modelled, gathered_batch_not_modelled
from kvtop.domain.engines.vllm.gpt_oss_graphs import gpt_oss_v2_graphs_not_modelled
from kvtop.domain.engines.vllm.mxfp4_unmodelled import mxfp4_not_modelled
from kvtop.domain.engines.vllm.pp_split import pp_partition_not_modelled
from kvtop.domain.engines.vllm.sampler_path import dynamo_release_not_read
from kvtop.domain.engines.vllm.tower_fp8 import tower_fp8_not_modelled
from kvtop.domain.engines.vllm.v0_mixtral_experts import mixtral_experts_not_modelled


def launch_not_modelled(inputs: EngineInputs) -> tuple[str, ...]:
    """The launch's not-modelled lines, in the order plan and explain print them: the MXFP4 experts' layout, a stated
    pipeline partition, the DP gathered batch, a SigLIP tower quantized to FP8 at load, gpt-oss's V2 graphs, a
    compilation mode that drops the piecewise graphs (not where eager: no graphs), DP replicas' communicators, the vLLM
    release a Dynamo image ships where none is known, Mixtral's
    experts through MegaBlocks (vLLM 0.2.4)."""
    m, s, layout, version = inputs.model, inputs.settings, inputs.layout, inputs.version
    lines = (
        mxfp4_not_modelled(m, layout, s, inputs.gpu_name, version),
        pp_partition_not_modelled(s.flags, layout.pp, version),
        gathered_batch_not_modelled(inputs.terms),
        tower_fp8_not_modelled(m, s, version),
        gpt_oss_v2_graphs_not_modelled(m, s, version),
        None if s.enforce_eager else graph_mode_not_modelled(s.flags, version),
        dp_communicators_not_modelled(m, layout, version, inputs.gpu_name, s),
        dynamo_release_not_read(s.image, version),
        mixtral_experts_not_modelled(m, version),
    )
    return tuple(line for line in lines if line)
