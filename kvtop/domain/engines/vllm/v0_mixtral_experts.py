"""Mixtral's experts in vLLM 0.2.4 – 0.2.7, before the fused MoE kernel: named not modelled, with the figure.

v0.2.4 ran MegaBlocks' sparse kernels (mixtral.py:35-45, `BlockSparseMoE` :151), not read here. v0.2.5 – v0.2.7 split
the experts whole across the TP ranks (`MixtralMoE.expert_indicies = np.array_split(range(8), tp)[rank]`,
mixtral.py:114-116 at v0.2.7) and run each of a rank's experts over every token at full width (`MixtralMLP.forward`,
:87-93: w1's output, its SiLU copy, w3's output and their product, three (tokens, intermediate) tensors alive at
the product), the rank's first expert's output kept as the sum (:146-157). v0.3.0 replaced it with `fused_moe` over
the routed tokens at intermediate ÷ TP (mixtral.py:125-140), whose transient kvtop's activation counts. The profile at
0.2.5 – 0.2.7 so holds 3 × tokens × intermediate × dtype bytes at the expert's product, beside the fused path's
caches (tokens × top-k × (3 × intermediate ÷ TP + hidden) × dtype bytes) kvtop charges instead: the difference is
named, not charged (docs/engines/vllm.md §2.5). Read in the wheels of 0.2.4 – 0.2.7 and 0.3.0.
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.wording import GIB

MIXTRAL = "MixtralForCausalLM"
MIXTRAL_EXPERT_PATH: Eras[str] = Eras((
    Era("", "megablocks", "mixtral.py:35-45, 151 at v0.2.4: MegaBlocks' / stk's block-sparse MoE"),
    Era("0.2.5", "full_width", "mixtral.py:57-94, 133-160 at v0.2.7 (:58, :121-171 at v0.2.5): whole experts a rank, "
                               "each over every token"),
    Era("0.3.0", "fused", "mixtral.py:34, 125-140 at v0.3.0: fused_moe, intermediate split across TP"),
))  # fmt: skip


def mixtral_experts_not_modelled(
    model: ModelSpec, settings: LaunchSettings, layout: ParallelLayout, context: int, version: ResolvedVersion
) -> str | None:
    """The not-modelled line of a Mixtral start at 0.2.4 – 0.2.7 (`MIXTRAL_EXPERT_PATH`); None elsewhere."""
    path = MIXTRAL_EXPERT_PATH.at(version)
    if model.architecture != MIXTRAL or model.moe is None or path == "fused":
        return None
    if path == "megablocks":
        return (
            f"vLLM {version.text} runs Mixtral's experts through MegaBlocks' sparse kernels "
            "(mixtral.py:151 at v0.2.4), whose profile peak kvtop has not read; the plan counts the fused path's"
        )
    tokens = settings.max_num_batched_tokens or max(context, 2048)  # V0's profile batch at 0.2.x
    wide = (
        3 * tokens * model.moe.expert_intermediate_size * model.dtype_bytes
        + tokens * model.hidden_size * model.dtype_bytes
    )
    fused = (
        tokens
        * model.moe.experts_per_token
        * model.dtype_bytes
        * (3 * model.moe.expert_intermediate_size // layout.tp + model.hidden_size)
    )
    return (
        f"vLLM {version.text} runs each rank's whole Mixtral experts over all {tokens:,} profiled "
        f"tokens at full width (mixtral.py:87-93, 146-157 at v0.2.7): about {wide / GIB:.2f} GiB at the expert's "
        f"product against the fused path's {fused / GIB:.2f} GiB (v0.3.0 on), so about "
        f"{max(wide - fused, 0) / GIB:.2f} GiB less KV than planned, the activation fit reading the fused path"
    )
