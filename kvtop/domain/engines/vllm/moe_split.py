"""Routed-expert splits vLLM refuses while it builds the MoE layers (docs/engines/vllm.md §3.6).

Without expert parallelism each expert's intermediate width is split over the MoE TP group, which vLLM flattens
over TP × DP (× PCP) replicas (`FusedMoEParallelConfig.flatten_tp_across_dp_and_pcp`); with
`--enable-expert-parallel` the group's TP is 1 and nothing is checked here.

- Every MoE: `assert intermediate_size % tp_size == 0` (a bare assertion: "AssertionError"), v0.13.0
  fused_moe/layer.py FusedMoE.__init__, v0.33.0 fused_moe/config.py FusedMoEConfig.__post_init__.
- GPTQ / AWQ experts (gptq, awq and their _marlin names: v0.33.0 AutoGPTQConfig / AutoAWQConfig, v0.13.0
  GPTQMarlinConfig / AWQMarlinConfig): where the Marlin MoE kernel does not take the shard
  (`check_moe_marlin_supports_layer`), vLLM falls back to MoeWNA16Method, whose create_weights halves the group
  size until it divides both the shard and the hidden size, asserting `group_size >= 32` (moe_wna16.py, read in
  both wheels). Marlin takes a shard only where the group divides it and the hidden size is a multiple of 128,
  which the halving then passes at once, so the refusal is exactly the halving failing.
- compressed-tensors weight-only int groups (WNA16, group strategy), v0.33.0
  compressed_tensors_moe_wna16.py CompressedTensorsWNA16MoEMethod.create_weights: the hidden size and the shard
  must each divide by the group size (ValueError), first in v0.24.0 (compressed_tensors_moe_wna16.py:100-114 and
  its Marlin twin :267-283). v0.13.0-v0.23.0 divide without a check: not refused there.
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.errors import InputError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import MlpKind, ModelSpec
from kvtop.domain.quant_spec import ROUTED_EXPERTS, QuantSpec

# where the assertion sits, by release (the value: the engine file named in the refusal)
SPLIT_ASSERT_ERAS: Eras[str] = Eras((
    Era("", "fused_moe/layer.py FusedMoE.__init__",
        "v0.13.0 fused_moe/layer.py FusedMoE.__init__ (earlier releases not read, taken alike)"),
    Era("0.24.0", "fused_moe/config.py FusedMoEConfig.__post_init__",
        "first in v0.24.0: fused_moe/config.py:1306 FusedMoEConfig.__post_init__ (v0.23.0 layer.py:263)"),
))  # fmt: skip
GPTQ_AWQ_SCHEMES = ("gptq", "awq", "gptq_marlin", "awq_marlin")
WNA16_MIN_GROUP = 32  # MoeWNA16Method.create_weights: assert group_size >= 32 (v0.13.0, v0.33.0)
WNA16_SOURCE = "quantization/moe_wna16.py MoeWNA16Method.create_weights (v0.13.0, v0.33.0)"
CT_GROUPS_CHECKED_ERAS: Eras[bool] = Eras((
    Era("", False, "v0.13.0 compressed_tensors_moe.py CompressedTensorsWNA16(Marlin)MoEMethod: floor division, no check"),
    Era("0.24.0", True, "first in v0.24.0: compressed_tensors_moe/compressed_tensors_moe_wna16.py:100-114 "
        "CompressedTensorsWNA16MoEMethod.create_weights (and wna16_marlin.py:267-283); absent from v0.23.0"),
))  # fmt: skip
CT = "compressed-tensors"


def wna16_group(shard: int, hidden: int, group: int) -> int | None:
    """The group MoeWNA16Method settles on (halved until it divides shard and hidden: moe_wna16.py:283-286), None
    where it would go below 32 (its assertion); the GPTQ MoE fallback's book (gptq_moe_fallback.py) reads it too."""
    while shard % group or hidden % group:
        group //= 2
        if group < WNA16_MIN_GROUP:
            return None
    return group


def check_expert_split(
    model: ModelSpec, settings: LaunchSettings, layout: ParallelLayout, version: ResolvedVersion
) -> None:
    """Raise InputError where vLLM `version` refuses how this launch splits the routed experts (module docstring)."""
    moe = model.moe
    if moe is None or settings.expert_parallel_asked:
        return
    shards, size, label = layout.expert_ranks, moe.expert_intermediate_size, version.label
    over = f"tp {layout.tp}" + (f" × dp {layout.replicas}" if layout.replicas > 1 else "")
    if size % shards:
        raise InputError(
            f"vLLM {label} refuses experts whose moe_intermediate_size {size} does not divide over the {shards} "
            f"ranks that split them ({over}, no expert parallelism): {SPLIT_ASSERT_ERAS.at(version)} asserts "
            "'intermediate_size % tp_size == 0' (AssertionError); pick a TP × DP that divides it, or "
            "--enable-expert-parallel",
            field="--tp",
        )
    first = next((i for i, kind in enumerate(model.layer_mlp) if kind is MlpKind.MOE), 0)
    fmt = model.quant.format_of((f"model.layers.{first}{ROUTED_EXPERTS}.0.down_proj",))  # the experts' format
    if fmt is None or fmt.group_size is None:
        return
    _check_groups(fmt, size // shards, model.hidden_size, over, version)


def _check_groups(fmt: QuantSpec, shard: int, hidden: int, over: str, version: ResolvedVersion) -> None:
    """The experts' weight groups against the shard: GPTQ/AWQ's MoeWNA16 fallback, compressed-tensors WNA16."""
    label, group = version.label, fmt.group_size or 0
    if fmt.scheme in GPTQ_AWQ_SCHEMES and wna16_group(shard, hidden, group) is None:
        raise InputError(
            f"vLLM {label} refuses {fmt.scheme} experts whose shard ({over}: {shard} wide, hidden {hidden}) no group "
            f"of {group} halved down to {WNA16_MIN_GROUP} divides: Marlin does not take it, and MoeWNA16's halving "
            f"asserts 'group_size >= {WNA16_MIN_GROUP}' ({WNA16_SOURCE}); pick a TP × DP whose shard keeps whole "
            "groups, or --enable-expert-parallel",
            field="--tp",
        )
    weight_only_groups = fmt.scheme == CT and fmt.weight_only_int
    if not weight_only_groups or not CT_GROUPS_CHECKED_ERAS.at(version):
        return
    if hidden % group:
        raise InputError(
            f"vLLM {label} refuses it: 'CompressedTensors WNA16 MoE requires hidden_size ({hidden}) to be divisible "
            f"by group_size ({group}).'",
            field="quantization_config.config_groups.weights.group_size",
            source=fmt.source,
        )
    if shard % group:
        raise InputError(
            f"vLLM {label} refuses {over} for these experts: 'CompressedTensors WNA16 MoE with static group scales "
            f"requires the MoE intermediate size per tensor-parallel partition ({shard}) to be divisible by "
            f"group_size ({group}).' (compressed_tensors_moe_wna16.py); use a compatible TP size or "
            "--enable-expert-parallel",
            field="--tp",
        )
