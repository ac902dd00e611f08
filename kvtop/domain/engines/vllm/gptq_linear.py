"""What vLLM's GPTQ linear layers hold beyond the weights book's count, by the kernel each module gets
(docs/engines/vllm.md §3.8; the kernel choice: gptq_kernels.py; the experts' zero points are layer_build.py's).

vLLM's GPTQ linear method (gptq_marlin.py `GPTQMarlinLinearMethod`, auto_gptq.py `AutoGPTQLinearMethod` from v0.22.0)
registers `qzeros` (int32 [groups, output ÷ pack]) for every checkpoint, a symmetric one too, and until v0.29.x a
`g_idx` (int32, one per input row of the partition). What loading keeps is the kernel's:
- Machete never touches either tensor of a symmetric checkpoint (it transforms the zeros only `if c.zero_points`,
  which GPTQ never sets): both stay. Marlin empties both (`marlin_make_empty`, v0.33.0 marlin.py:172). Exllama
  replaces qzeros by a tensor of the same shape (exllama.py:72-103) and g_idx by an empty one unless act order.
- The groups are whole per rank: `scales_and_zp_size = input_size_per_partition // group_size` (v0.33.0
  auto_gptq.py:373; the whole input's under act order, `marlin_repeat_scales_on_all_ranks`), where the book splits
  the matrix's groups by TP (Qwen1.5-7B's down_proj, 11,008 ÷ TP rows: 21.5 groups of 128 at TP 4, the engine 21).
  The scales' difference is a row of its own, `gptq_scale_groups` (usually negative).
Measured by the engine_diff harness (vLLM 0.33.0, meta build, tests/data/engine_diff/vllm-0.33.0.json):
Qwen1.5-7B-Chat-GPTQ-Int4 25,296,896 B and Qwen2.5-7B-Instruct-GPTQ-Int4 25,489,408 B of qzeros at TP 1 on sm90;
Qwen1.5's TP 4 sm90 rank 131,072 B over the build before the whole-group rule (32 layers × 0.5 group × 4,096 × 2 B).
"""

from __future__ import annotations

from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.gptq_kernels import (
    GPTQ_KERNEL_ERAS,
    HOPPER,
    PACKED_BITS,
    GptqKernelRule,
    GptqModule,
    Kernel,
    kernel_for,
)
from kvtop.domain.gpus import compute_capability
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.rank_matrices import RankMatrices
from kvtop.domain.rounding import ceil_div
from kvtop.domain.weight_compressed import compressed_attention
from kvtop.domain.weight_matrices import layer_weights
from kvtop.domain.weight_shared import hybrid_layer
from kvtop.domain.weights import WeightRow

INT32 = 4
GPTQ_SCHEMES = ("gptq", "gptq_marlin")


class _GptqModules(RankMatrices):
    """Records the rank's GPTQ linear modules (k and v fused into q's, up into gate's) instead of their bytes, and
    what the book counts of their group scales (the matrix's groups split by TP) against the engine's whole groups."""

    def __init__(self, model: ModelSpec, layout: ParallelLayout, act_order: bool) -> None:
        super().__init__(model, layout)
        self.act_order = act_order  # the release takes desc_act: scales and qzeros of the whole input on every rank
        self.modules: list[GptqModule] = []
        self.scale_groups_over_book = 0.0  # the engine's scale bytes less the book's

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
        fmt = None if experts else self.format_for(modules, quantizable)
        if fmt is None or fmt.scheme not in GPTQ_SCHEMES or fmt.zero_point_bits or fmt.weight_bits not in (4, 8):
            return
        row_parallel = row_scale_shards is not None
        rows_in, cols_out = (cols // shards, rows) if row_parallel else (cols, rows // shards)
        group = fmt.group_size
        if group:  # rank_matrices.py: rows × ceil(cols ÷ group) scales, split `shards` ways; the engine's whole groups
            book = rows * ceil_div(cols, group) * fmt.scale_bytes / shards
            groups = (cols if self.act_order and fmt.act_order else rows_in) // group
            self.scale_groups_over_book += groups * cols_out * fmt.scale_bytes - book
        if not opens_module and self.modules and self.modules[-1].rows_in == rows_in:
            self.modules[-1].cols_out += cols_out
            return
        act_order = self.act_order and fmt.act_order
        self.modules.append(GptqModule(fmt, rows_in, cols_out, cols, row_parallel and shards > 1, act_order))


def _kept_bytes(module: GptqModule, kernel: Kernel, rule: GptqKernelRule) -> int:
    """qzeros [groups, output ÷ pack] int32 (one group where channelwise; the whole input's under act order) and
    g_idx [input rows] int32 where the release registers one and the kernel keeps it: Machete both; Exllama the
    qzeros, and g_idx under act order (argsort, int32); Marlin, under act order only, g_idx and g_idx_sort_indices
    (v0.29.0 marlin.py:175-185, marlin_utils.py:455-457 marlin_sort_g_idx: int32 each)."""
    g_idx = module.rows_in * INT32 if rule.g_idx else 0
    if kernel in (Kernel.MARLIN, Kernel.MARLIN_PADDED):
        return 2 * g_idx if module.act_order else 0
    if kernel is Kernel.NOT_MODELLED:
        return 0
    group, pack = module.fmt.group_size, PACKED_BITS // module.fmt.weight_bits
    groups = (module.full_in if module.act_order else module.rows_in) // group if group else 1
    qzeros = groups * (module.cols_out // pack) * INT32
    return qzeros + (g_idx if kernel is Kernel.MACHETE or module.act_order else 0)


def walk_layers(recorder: RankMatrices, layers: range) -> None:
    """Hands `recorder` every matrix of `layers` as the weights book walks them (AWQ's walk too: awq_linear.py)."""
    model = recorder.model
    attention_of = compressed_attention if model.compressed is not None else None
    for layer in layers:
        layer_weights(recorder, layer, hybrid_layer if model.shared_block is not None else attention_of)


def gptq_linear_rows(
    model: ModelSpec, layout: ParallelLayout, layers: range, gpu_name: str | None, version: ResolvedVersion
) -> tuple[WeightRow, ...]:
    """On one rank of the stage holding `layers`: the zero points (and g_idx) the modules' kernels keep, and the
    scales of whole groups less the book's split; none where the checkpoint is no symmetric GPTQ."""
    quant = model.quant
    if quant.scheme not in GPTQ_SCHEMES or quant.zero_point_bits:
        return ()
    rule = GPTQ_KERNEL_ERAS.at(version)
    capability = compute_capability(gpu_name)
    assumed = capability is None
    capability = capability or HOPPER  # vLLM's rules assume Hopper for a GPU kvtop does not know (backends.py)
    if rule is None:
        return ()
    recorder = _GptqModules(model, layout, act_order=rule.g_idx)  # desc_act refused from v0.30.0 (kernels.py)
    walk_layers(recorder, layers)
    kernels = [kernel_for(module, rule, capability) for module in recorder.modules]
    rows: list[WeightRow] = []
    nbytes = sum(_kept_bytes(module, kernel, rule) for module, kernel in zip(recorder.modules, kernels, strict=True))
    if nbytes > 0:
        rows.append(_zero_row(nbytes, kernels, rule, gpu_name, capability, assumed))
    scales = round(recorder.scale_groups_over_book)
    if scales:
        rows.append(WeightRow(component="gptq_scale_groups", params=0, bytes=scales, shards=1, bytes_per_param=0.0,
                              note="vLLM sizes a GPTQ module's scales by whole groups of its partition "
                              "(input_size_per_partition // group_size; the whole input under act order), where "
                              "the book splits the matrix's groups by TP (auto_gptq.py:373; gptq_linear.py)"))  # fmt: skip
    return tuple(rows)


def _zero_row(
    nbytes: int, kernels: list[Kernel], rule: GptqKernelRule, gpu_name: str | None, capability: tuple[int, int],
    assumed: bool,
) -> WeightRow:
    """The `gptq_zero_points` row, its note naming how many modules each kernel serves."""
    kept = "qzeros and g_idx" if rule.g_idx else "qzeros"
    where = ("GPU not stated: compute capability 9.0 assumed (vLLM's rules' default)" if assumed
             else f"{gpu_name}: compute capability {capability[0]}.{capability[1]}")  # fmt: skip
    counts = ", ".join(f"{kernels.count(kind)} {kind.value}" for kind in Kernel if kernels.count(kind))
    caveats = []
    if Kernel.MARLIN_PADDED in kernels:
        caveats.append("Marlin's tile padding of qweight and scales not modelled")
    if Kernel.NOT_MODELLED in kernels:
        caveats.append("modules no modelled kernel takes (AllSpark, Triton, Humming) hold what the book counts")
    if Kernel.EXLLAMA in kernels:
        caveats.append("Exllama assumes float16 activations")
    tail = "; " + "; ".join(caveats) if caveats else ""
    return WeightRow(component="gptq_zero_points", params=0, bytes=nbytes, shards=1, bytes_per_param=0.0,
                     note=f"vLLM's Machete and Exllama kernels keep a symmetric GPTQ checkpoint's {kept}, Marlin "
                     f"empties them ({where}; modules by kernel: {counts}{tail}; gptq_linear.py, gptq_kernels.py)")  # fmt: skip
