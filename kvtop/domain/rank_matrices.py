"""One rank's weight bytes as they are added: `RankMatrices` sizes each matrix and vector by the parallelism
that splits it and the checkpoint's format for its module (quantized, its scales whole or split), and sums them per
component (`ComponentSums`). The builders in `weight_matrices.py` say which matrices a layer holds; this says what
one of them costs a rank.
"""

from __future__ import annotations

from kvtop.domain.layout import ParallelLayout, StageParts
from kvtop.domain.model import ModelSpec
from kvtop.domain.quant_spec import QuantSpec
from kvtop.domain.tower_spec import TowerSplit

# a W4A16 expert's input_scale: fp32 in both engines (vLLM 0.33.0's meta build of Qwen3.6-35B-A3B-NVFP4:
# w13_input_scale [256, 2] and w2_input_scale [256] float32, where its linear layers' are bfloat16)
EXPERT_INPUT_SCALE_BYTES = 4


class ComponentSums:
    """Accumulates (params, bytes) per component for one rank."""

    def __init__(self) -> None:
        self.parts: dict[str, list[float]] = {}
        self.shards: dict[str, int] = {}
        self.notes: dict[str, str] = {}
        # each tensor's bytes in the order added (a matrix the engine fuses into the previous one's module grows
        # that tensor): what a caching allocator is asked for (a vision tower's, summed, left out: `add_many`)
        self.tensors: list[float] | None = []
        self._module: tuple[int, int | None] | None = None  # the last tensor opened and its scales' (indices)

    def add(self, component: str, params: float, nbytes: float, shards: int, *, fused: bool = False,
            listed: bool = False, scales: float = 0.0) -> None:  # fmt: skip
        """Adds to `component`; its shards are the most any of its parts splits over; `fused`: these bytes
        extend the tensor added last (k and v in qkv_proj) rather than open one; `listed`: their tensors are
        already listed (bytes moved from one component to another); `scales`: the part of `nbytes` a quantized
        matrix holds in tensors of its scales (listed as one beside it)."""
        entry = self.parts.setdefault(component, [0.0, 0.0])
        entry[0] += params
        entry[1] += nbytes
        self.shards[component] = max(self.shards.get(component, 1), shards)
        if self.tensors is None or listed or not nbytes:
            return
        data = nbytes - scales
        if fused and self._module is not None:  # the module's tensors grow (its weight, its scales)
            weight, scale = self._module
            self.tensors[weight] += data
            if scale is None and scales:
                self._module = (weight, len(self.tensors))
                self.tensors.append(scales)
            elif scale is not None:
                self.tensors[scale] += scales
            return
        self._module = (len(self.tensors), len(self.tensors) + 1 if scales else None)
        self.tensors.append(data)
        if scales:
            self.tensors.append(scales)

    def add_many(self, component: str, params: float, nbytes: float, shards: int) -> None:
        """Adds a part made of tensors the book does not size one by one (a vision tower): left out of the list, so
        what an allocator rounds of it is not counted."""
        self.add(component, params, nbytes, shards, listed=True)

    def extend_tensors(self, other: ComponentSums, times: int) -> None:
        """Lists `other`'s tensors `times` over after these (a kind of layer repeated)."""
        if self.tensors is not None:
            self.tensors = None if other.tensors is None else [*self.tensors, *other.tensors * times]
        self._module = None


def _renamed(name: str, renames: tuple[tuple[str, str], ...]) -> str:
    """`name` as the engine names the module (`StageParts.target_names`: the first fragment it holds replaced)."""
    return next((name.replace(old, new, 1) for old, new in renames if old in name), name)


class RankMatrices:
    """Adds one rank's matrices; quantized unless the checkpoint spares the module."""

    def __init__(
        self, model: ModelSpec, layout: ParallelLayout, build: TowerSplit | None = None, parts: StageParts | None = None
    ) -> None:
        self.model = model
        self.layout = layout
        self.build = build or TowerSplit()  # the engine's own way with the parts engines disagree on
        self.parts = parts  # the stage's parts: what the engine's class adds to each layer, or builds unquantized
        self.acc = ComponentSums()
        self.plain = False  # every matrix in the model dtype (an MTP layer built unquantized: `mtp_layer`)
        self.asked_as: tuple[str, str] = ("", "")  # (a layer's name, the name its quant format is asked under)

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
        """A (rows × cols) matrix, rows its outputs; `tensors`: the stacked tensors one rank holds, each with its own
        scalar scales (experts); `row_scale_shards`: a row-parallel matrix's (o_proj, down_proj, w2) per-channel
        scales, one per output row, split only so many ways (docs/engines/architectures.md §6); `opens_module`:
        False where the engine fuses this matrix into the previous one's linear module (k and v into qkv_proj, up
        into gate_up_proj), which holds the module's own scalars once (`StageParts.linear_shape_bytes`)."""
        fmt = self.format_for(modules, quantizable)
        narrow = self.parts.block_scale_bytes if self.parts is not None else None
        if narrow is not None and fmt is not None and fmt.block is not None:
            fmt = fmt.model_copy(update={"scale_bytes": narrow})
        word = self.parts.expert_zero_word_bits if experts and self.parts is not None else 0
        if word and fmt is not None and fmt.group_size and not fmt.zero_point_bits:
            # a zero per group and row, packed 32 ÷ weight_bits to a word of `word` bits
            fmt = fmt.model_copy(update={"zero_point_bits": fmt.weight_bits * word // 32})
        host_scales = self.parts is not None and self.parts.host_row_scales
        if host_scales and fmt is not None and not (fmt.per_tensor or fmt.block or fmt.group_size):
            fmt = fmt.model_copy(update={"scale_bytes": 0})  # the per-row scales are not on the GPU yet
        whole = 0  # scalar scales each rank holds whole
        row_scales = 0  # per-channel scales of a row-parallel matrix: split over row_scale_shards only
        if fmt is not None:
            whole = fmt.tensor_scale_bytes
            nbytes = fmt.matrix_bytes(rows, cols, self.model.dtype_bytes)
            per_channel = not fmt.per_tensor and fmt.block is None and not fmt.group_size
            if row_scale_shards is not None and per_channel:
                row_scales = rows * fmt.scale_bytes + rows * fmt.zero_point_bits // 8
        else:
            nbytes = rows * cols * self.model.dtype_bytes
        held = (nbytes - whole - row_scales) / shards + whole * tensors
        if fmt is not None and fmt.unused_input_scale:  # whole on every rank, one per tensor
            held += (EXPERT_INPUT_SCALE_BYTES if experts else self.unused_input_scale_bytes()) * tensors
        if row_scales:
            held += row_scales / (row_scale_shards or 1)
        if opens_module and not experts and fmt is not None and fmt.weight_only_int and self.parts is not None:
            held += self.parts.linear_shape_bytes  # CT WNA16 `weight_shape`: whole on every rank
        data = rows * cols * fmt.weight_bits / 8 / shards if fmt is not None and fmt.quantized else held
        self.acc.add(component, rows * cols / shards, held, shards, fused=not opens_module, scales=max(held - data, 0))

    def format_for(self, modules: tuple[str, ...], quantizable: bool = True) -> QuantSpec | None:
        """The checkpoint's format of the module `modules` name, as the engine builds it (None: the model dtype)."""
        if self.plain:
            return None
        unquantized = self.parts.unquantized if self.parts is not None else ()
        if unquantized and any(name.endswith(suffix) for name in modules[:1] for suffix in unquantized):
            return None  # the engine builds this module in the model dtype (its first name says which)
        held, asked_as = self.asked_as
        if held:  # an MTP layer built as the target's last one but named as its class names it (`mtp_names`)
            modules = tuple(asked_as + name[len(held):] if name.startswith(held) else name for name in modules)
        renames = self.parts.target_names if self.parts is not None and self.model.quant.targeted else ()
        asked = tuple(_renamed(name, renames) for name in modules) if renames else modules
        return self.model.quant.format_of(asked) if quantizable else None

    def mtp_layer(self, target_layer: int, index: int) -> RankMatrices:
        """This rank building MTP layer `index` as `target_layer`, into the same sums: its modules' formats asked
        under the names the engine's class gives it (`StageParts.mtp_names`), every matrix in the model dtype where
        the engine builds it so (`StageParts.mtp_plain`)."""
        layer = RankMatrices(self.model, self.layout, self.build, self.parts)
        layer.acc = self.acc
        names = self.parts.mtp_names if self.parts is not None else ""
        asked = names.format(index=index, layer=self.model.num_layers + index)
        layer.asked_as = (f"model.layers.{target_layer}.", asked) if names else ("", "")
        layer.plain = self.parts is not None and self.parts.mtp_plain
        return layer

    def unused_input_scale_bytes(self) -> int:
        """A W4A16 matrix's input_scale width: the engine's (its stage parts), else the model dtype."""
        width = self.parts.unused_input_scale_bytes if self.parts is not None else None
        return self.model.dtype_bytes if width is None else width

    def vector(self, component: str, size: int, shards: int = 1, dtype_bytes: int | None = None) -> None:
        """A never-quantized vector (norm, bias, per-head term) of `size` values split `shards` ways, in the model
        dtype unless the engine builds it wider (`dtype_bytes`: fp32 A_log, router bias)."""
        width = self.model.dtype_bytes if dtype_bytes is None else dtype_bytes
        self.acc.add(component, size / shards, size * width / shards, shards)
