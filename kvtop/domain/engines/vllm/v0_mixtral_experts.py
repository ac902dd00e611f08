"""Mixtral's experts in vLLM 0.2.4 – 0.2.7, before the fused MoE kernel: counted at 0.2.5 – 0.2.7, named at 0.2.4.

v0.2.4 ran MegaBlocks' sparse kernels (mixtral.py:35-45, `BlockSparseMoE` :151), not read here. v0.2.5 – v0.2.7 split
the experts whole across the TP ranks (`MixtralMoE.expert_indicies = np.array_split(range(8), tp)[rank]`,
mixtral.py:114-116 at v0.2.7) and run each of a rank's experts over every token at full width (`MixtralMLP.forward`,
:87-93: w1's output passed through SiLU, which frees the pre-SiLU output, w3's output and their product, three
(tokens, intermediate) tensors still bound when w2 writes its (tokens, hidden) output), the rank's first expert's
output kept as the sum (:146-157), alive beside the next expert's. v0.3.0 replaced it with `fused_moe` over
the routed tokens at intermediate ÷ TP (mixtral.py:125-140), whose transient kvtop's activation counts. The profile at
0.2.5 – 0.2.7 so holds 3 × tokens × intermediate + 2 × tokens × hidden (1 × hidden on a rank of one expert, TP 8)
dtype bytes at w2's output where the fused path holds
tokens × top-k × (3 × intermediate ÷ TP + hidden) × dtype bytes: kvtop counts the full-width path there
(`full_width_experts_bytes`, read by `v0_profile.v0_forward_bytes`); 0.2.4's MegaBlocks path is named not modelled (docs/engines/vllm.md §2.5). Read in the wheels of 0.2.4 – 0.2.7 and 0.3.0.
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.model import ModelSpec
from kvtop.domain.rounding import ceil_div

MIXTRAL = "MixtralForCausalLM"
MIXTRAL_EXPERT_PATH: Eras[str] = Eras((
    Era("", "absent", "no models/mixtral.py in the v0.2.3 wheel: MixtralForCausalLM is not registered"),
    Era("0.2.4", "megablocks", "mixtral.py:35-45, 151 at v0.2.4: MegaBlocks' / stk's block-sparse MoE"),
    Era("0.2.5", "full_width", "mixtral.py:57-94, 133-160 at v0.2.7 (:58, :121-171 at v0.2.5): whole experts a rank, "
                               "each over every token"),
    Era("0.3.0", "fused", "mixtral.py:34, 125-140 at v0.3.0: fused_moe, intermediate split across TP"),
))  # fmt: skip


def full_width_experts_bytes(model: ModelSpec, version: ResolvedVersion, tokens: int, tp: int = 1) -> int | None:
    """What a Mixtral layer holds at 0.2.5 – 0.2.7 beside the residual and normed input, at w2's output in a rank's
    expert (`MIXTRAL_EXPERT_PATH` "full_width"): SiLU of w1's output (the pre-SiLU output rebound, freed), w3's output
    and their product (3 × tokens × intermediate, mixtral.py:87-91 at v0.2.7), still bound while w2 writes its output
    (tokens × hidden, :92), and from a rank's second expert the sum of its experts so far (tokens × hidden, :146-157:
    a rank holds ceil(experts ÷ `tp`) at most, `np.array_split`, :114-116, so one at TP 8 on Mixtral-8x7B),
    the router's logits in the model dtype and their float32 softmax (tokens × experts each), the top-k weights
    (float32) and ids (int64); the intermediate is whole (`ReplicatedLinear`, :71-82), not split by TP. None elsewhere:
    the fused path's count (`v0_profile._fused_moe_bytes`) applies."""
    moe = model.moe
    if model.architecture != MIXTRAL or moe is None or MIXTRAL_EXPERT_PATH.at(version) != "full_width":
        return None
    dtype = model.dtype_bytes
    held = 2 if ceil_div(moe.num_routed_experts, max(tp, 1)) >= 2 else 1  # w2's output, and the sum beside it
    expert = 3 * tokens * moe.expert_intermediate_size * dtype + held * tokens * model.hidden_size * dtype
    router = tokens * moe.num_routed_experts * (dtype + 4) + tokens * moe.experts_per_token * (4 + 8)
    return expert + router


def mixtral_experts_not_modelled(model: ModelSpec, version: ResolvedVersion) -> str | None:
    """The not-modelled line of a Mixtral start at 0.2.4, MegaBlocks' path (`MIXTRAL_EXPERT_PATH`); None elsewhere."""
    if model.architecture != MIXTRAL or model.moe is None or MIXTRAL_EXPERT_PATH.at(version) != "megablocks":
        return None
    return (
        f"vLLM {version.text} runs Mixtral's experts through MegaBlocks' sparse kernels (mixtral.py:151 at v0.2.4), "
        "whose profile peak kvtop has not read; the plan counts the fused path's (v0.3.0 on)"
    )
