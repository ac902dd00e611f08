"""vLLM's GPTQ experts where the fused Marlin MoE kernel cannot take the layer: the MoE WNA16 layout (docs/engines/
vllm.md §3.8), a `weights_built` row of the difference from the book's experts (Marlin's layout, layer_build.py).

`AutoGPTQConfig.get_quant_method` (v0.33.0 auto_gptq.py:241-251) asks `check_moe_marlin_supports_layer(layer,
group_size, allow_tile_padding=True)` (marlin_utils.py:356-387: hidden % 128, the intermediate size per partition
whole groups, group −1/32/64/128); where it refuses ("Layer '…' is not supported by GPTQMoeMarlin. Falling back to
Moe WNA16 kernels.", the run log of Qwen3-30B-A3B-GPTQ-Int4 at TP 4 and 8) `MoeWNA16Method.create_weights`
(moe_wna16.py:266-390) registers instead, per rank: w13_qweight uint8 [E, 2 × I, hidden ÷ (8 ÷ bits)], w2_qweight
uint8 [E, hidden, I ÷ (8 ÷ bits)] (the book's packed bytes), w13_scales [E, 2 × I, hidden ÷ g] and w2_scales
[E, hidden, I ÷ g] in the model dtype with g the checkpoint's group halved until it divides both I and hidden
(:283, at least 32: else the engine fails), and for a symmetric checkpoint empty qzeros (:378-386); no expert
biases. The Triton backend (the run log's "Using 'TRITON' WNA16 MoE backend") views them as they are (oracle/
int_wna16.py:1753-1791). Read at v0.30.0 (the same check, moe_wna16.py:277-287) and v0.33.0; before v0.30.0 not
read: the book's count. The Humming backend (rewrites the layer) is not modelled.
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.engines.vllm.layer_build import with_layer_build
from kvtop.domain.engines.vllm.moe_split import wna16_group
from kvtop.domain.layout import ParallelLayout, StageParts
from kvtop.domain.model import MlpKind, ModelSpec
from kvtop.domain.quant_spec import QuantSpec
from kvtop.domain.rank_matrices import RankMatrices
from kvtop.domain.weight_matrices import layer_weights
from kvtop.domain.weights import WeightRow

GPTQ_SCHEMES = ("gptq", "gptq_marlin")
MARLIN_MOE_GROUP_SIZES = (-1, 32, 64, 128)  # check_moe_marlin_supports_config supports_group_size
MARLIN_MOE_HIDDEN = 128  # hidden_size % 128
_NO_ENDS = StageParts(embedding=False, final_norm=False, lm_head=False, tower=False, tower_positions=False)

GPTQ_MOE_FALLBACK_ERAS: Eras[bool] = Eras((
    Era("", False, "before v0.30.0 not read: the book's count (the Marlin MoE layout)"),
    Era("0.30.0", True, "read at v0.30.0 (auto_gptq.py:244 allow_tile_padding=True, moe_wna16.py:277-287, :377-386) "
        "and v0.33.0 (auto_gptq.py:241-251, marlin_utils.py:356-387, moe_wna16.py:266-390)"),
))  # fmt: skip


class _BookExperts(RankMatrices):
    """The book's routed-expert matrices of one rank (nothing else), sized as the weights book sizes them."""

    def matrix(
        self,
        component: str,
        rows: int,
        cols: int,
        shards: int,
        modules: tuple[str, ...],
        quantizable: bool = True,
        tensors: int = 1,
        row_scale_shards: int | None = None,
        experts: bool = False,
        opens_module: bool = True,
    ) -> None:
        if experts:
            super().matrix(component, rows, cols, shards, modules, quantizable, tensors, row_scale_shards, experts,
                           opens_module)  # fmt: skip

    def vector(self, component: str, size: int, shards: int = 1, dtype_bytes: int | None = None) -> None:
        return None


def _expert_format(model: ModelSpec, layer: int) -> QuantSpec | None:
    assert model.moe is not None
    fmt = model.quant.format_of(model.moe.expert_names(layer))
    if fmt is None or fmt.scheme not in GPTQ_SCHEMES or fmt.zero_point_bits or fmt.weight_bits not in (4, 8):
        return None
    return fmt if fmt.group_size else None


def gptq_moe_fallback_row(
    model: ModelSpec, layout: ParallelLayout, layers: range, version: ResolvedVersion
) -> WeightRow | None:
    """The MoE WNA16 experts less the book's on one rank of the stage holding `layers`; None where Marlin takes them."""
    moe = model.moe
    if moe is None or not GPTQ_MOE_FALLBACK_ERAS.at(version) or moe.latent_size or moe.second_group_experts:
        return None
    hidden = model.hidden_size
    width = moe.expert_intermediate_size if layout.ep > 1 else moe.expert_intermediate_size // layout.moe_shards
    local = moe.num_routed_experts // layout.ep
    book = _BookExperts(model, layout, parts=with_layer_build(_NO_ENDS, model, version))
    engine, groups = 0, set()
    for layer in layers:
        fmt = _expert_format(model, layer) if model.layer_mlp[layer] is MlpKind.MOE else None
        if fmt is None or fmt.group_size is None:
            continue
        marlin = fmt.group_size in MARLIN_MOE_GROUP_SIZES and width % fmt.group_size == 0
        group = wna16_group(width, hidden, fmt.group_size)
        if (marlin and hidden % MARLIN_MOE_HIDDEN == 0) or group is None:
            continue
        layer_weights(book, layer)
        packed = 3 * width * hidden * fmt.weight_bits // 8
        scales = (2 * width * (hidden // group) + hidden * (width // group)) * model.dtype_bytes
        engine += local * (packed + scales)
        groups.add(group)
    if not groups:
        return None
    nbytes = engine - round(book.acc.parts.get("routed_experts", [0.0, 0.0])[1])
    return WeightRow(component="gptq_moe_wna16", params=0, bytes=nbytes, shards=1, bytes_per_param=0.0,
                     note=f"vLLM's fused Marlin MoE refuses {width:,} intermediate rows a rank (not whole groups): "
                     f"MoE WNA16 experts, scales in groups of {'/'.join(map(str, sorted(groups)))}, no zero points, "
                     "less the book's Marlin layout (gptq_moe_fallback.py)")  # fmt: skip
