"""What TensorRT-LLM does with `--ep_size` (`moe_expert_parallel_size`) on a model without routed experts
(`EngineRules.expert_parallel_without_experts`).

It starts, and EP holds nothing: `Mapping` (tensorrt_llm/mapping.py, NVIDIA/TensorRT-LLM@05ebebb2) takes
moe_tp_size = tp_size // moe_ep_size, raises only where moe_tp × moe_ep ≠ tp (refused before this: flags.py
`check_parallel`), and keeps the MoE groups as lists of ranks: it opens no communicator. Only a MoE layer reads
them, and a model without experts builds none. Read at that commit; other releases not read, taken alike.
"""

from __future__ import annotations

from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.launch import LaunchSettings


def expert_parallel_without_experts(settings: LaunchSettings, version: ResolvedVersion) -> str:
    """The plan's note: EP off, said."""
    return (
        f"--ep_size {settings.ep} on a model without experts: planned as EP off; TensorRT-LLM's Mapping only lists "
        "the MoE ranks (tensorrt_llm/mapping.py) and no layer of the model reads them, so it holds no memory"
    )
