"""What vLLM does with `--enable-expert-parallel` on a model without routed experts (`EngineRules.expert_parallel_without_experts`).

It refuses to start: `ModelConfig.verify_with_parallel_config` calls `_verify_with_expert_parallelism` whenever
`parallel_config.enable_expert_parallel` is set, and that raises where the model is not MoE (vllm/config/model.py:1498,
:1566 of the v0.33.0 wheel). The same check stands in the v0 engine's vllm/config.py (search-index file id 35040145:
the config's num_experts / n_routed_experts / num_local_experts read, `num_experts < 1` raises), so it holds at every
release that has the flag.
"""

from __future__ import annotations

from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.errors import LayoutError
from kvtop.domain.launch import LaunchSettings

# vllm/config/model.py _verify_with_expert_parallelism (v0.33.0), its words
REFUSAL = "Number of experts in the model must be greater than 0 when expert parallelism is enabled."


def expert_parallel_without_experts(settings: LaunchSettings, version: ResolvedVersion) -> str:
    """Never a note: vLLM raises ValueError at start on `--enable-expert-parallel` without experts."""
    raise LayoutError(
        f"vLLM {version.label} refuses --enable-expert-parallel on a model without experts: '{REFUSAL}' "
        "(vllm/config/model.py _verify_with_expert_parallelism)",
        field="--ep",
    )
