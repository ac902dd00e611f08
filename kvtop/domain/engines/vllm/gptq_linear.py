"""What vLLM's GPTQ linear layers hold beside the packed weights and scales, by the kernel the GPU gets
(docs/engines/vllm.md §3.8; the experts' zero points are layer_build.py's).

vLLM's GPTQ linear method (gptq_marlin.py `GPTQMarlinLinearMethod`, auto_gptq.py `AutoGPTQLinearMethod` from v0.22.0)
registers `qzeros` (int32 [groups, output ÷ pack]) for every checkpoint, a symmetric one too, and until v0.29.x a
`g_idx` (int32, one per input row of the partition). The kernel `choose_mp_linear_kernel` picks decides what loading
keeps (read in the wheels of v0.6.2, 0.6.3, 0.7.0, 0.8.0, 0.10.0, 0.11.0, 0.13.0, 0.20.0, 0.22.0, 0.26.0, 0.27.0,
0.29.0, 0.30.0, 0.32.0, 0.33.0):
- Machete, first in the list for 16-bit activations, and never touching either tensor of a symmetric checkpoint
  (machete.py process_weights_after_loading transforms the zeros only `if c.zero_points`, which GPTQ never sets):
  both stay. It takes a module whose partition is whole 64-row by 128-column blocks (machete_utils.py
  check_machete_supports_shape), a group size it supports, and (act order) an input not split over TP.
- Marlin (SM 7.5 and on, every other GPU kvtop sizes): `setattr(layer, w_zp_name, marlin_make_empty(...))`
  (0.33.0 marlin.py:172) and the empty g_idx without act order: the book's count.
Machete's GPU: any of compute capability 9.0 or more up to v0.8.x (get_min_capability 90 alone), exactly 9.0 from
v0.10.0 (machete.py `is_device_capability(90)`). A module Machete refuses on such a GPU goes to the next kernel that
takes it (v0.33.0 kernels/linear/__init__.py:539-547: Marlin, which empties them; where Marlin refuses too, a partition
not whole groups, marlin.py:57-66, Exllama, which keeps them, exllama.py:72-103, on every GPU: not modelled): not
counted, said in the note.
Measured by the engine_diff harness (vLLM 0.33.0, sm90, meta build): Qwen1.5-7B-Chat-GPTQ-Int4 25,296,896 B and
Qwen2.5-7B-Instruct-GPTQ-Int4 25,489,408 B more than the book without this row, at TP 1.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.gpus import compute_capability
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.quant_spec import QuantSpec
from kvtop.domain.rank_matrices import RankMatrices
from kvtop.domain.weight_compressed import compressed_attention
from kvtop.domain.weight_matrices import layer_weights
from kvtop.domain.weight_shared import hybrid_layer
from kvtop.domain.weights import WeightRow

INT32 = 4
PACKED_BITS = 32  # zeros packed into int32 words
MACHETE_BLOCK = (64, 128)  # machete_utils.py MACHETE_PREPACKED_BLOCK_SHAPE: input rows, output columns
HOPPER = (9, 0)
GPTQ_SCHEMES = ("gptq", "gptq_marlin")


@dataclass(frozen=True)
class MacheteRule:
    """How a release picks Machete for a GPTQ linear layer and what the layer then keeps."""

    exactly_90: bool  # Machete only on compute capability 9.0 (else on any of 9.0 or more)
    g_idx: bool  # the linear method registers a g_idx, which Machete keeps
    group_sizes: tuple[int, ...]  # the group sizes it takes with 16-bit activations (-1: channelwise)


MACHETE_GPTQ_ERAS: Eras[MacheteRule | None] = Eras((
    Era("", None, "before v0.6.2 gptq_marlin.py runs Marlin itself (v0.6.1 :277 registers qzeros, :308 sets an "
        "empty layer.zp beside it): not modelled, the book's count stands"),
    Era("0.6.2", MacheteRule(False, True, (-1, 128)), "first in v0.6.2: quantization/kernels/__init__.py:13-16 "
        "_POSSIBLE_KERNELS [Machete, Marlin]; kernels/machete.py:21-22 get_min_capability 90, :56-93 "
        "process_weights_after_loading keeps g_idx and qzeros; gptq_marlin.py:285-287 registers both; "
        "utils/machete_utils.py:7 group sizes [-1, 128] (read at v0.6.3, v0.7.0, v0.8.0 alike)"),
    Era("0.10.0", MacheteRule(True, True, (-1, 64, 128)), "v0.10.0 kernels/mixed_precision/machete.py:35 "
        "is_device_capability(90) (absent from v0.8.0; v0.8.1-v0.9.2 not read), :62 process_weights_after_loading "
        "keeps g_idx and qzeros; machete_utils.py:36-37 [-1, 64, 128]; gptq_marlin.py:353-355 (auto_gptq.py:439-441 "
        "from v0.22.0, :443-445 at v0.27.0 and v0.29.0)"),
    Era("0.30.0", MacheteRule(True, False, (-1, 64, 128)), "first in v0.30.0: auto_gptq.py:430 registers qzeros "
        "and no g_idx (v0.29.0 :443); v0.33.0 kernels/linear/__init__.py:539-547 _POSSIBLE_KERNELS [CutlassW4A8, "
        "Machete, Marlin, …], mixed_precision/machete.py:33 is_device_capability(90), :60-95 keeps qzeros "
        "(zero_points=False: auto_gptq.py:346), marlin.py:172 empties them"),
))  # fmt: skip


@dataclass
class _Module:
    """One linear module of a rank: its partition (input rows, output columns) and format."""

    fmt: QuantSpec
    rows_in: int
    cols_out: int
    split_input: bool


class _GptqModules(RankMatrices):
    """Records the rank's GPTQ linear modules (k and v fused into q's, up into gate's) instead of their bytes."""

    def __init__(self, model: ModelSpec, layout: ParallelLayout) -> None:
        super().__init__(model, layout)
        self.modules: list[_Module] = []

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
        if not opens_module and self.modules and self.modules[-1].rows_in == rows_in:
            self.modules[-1].cols_out += cols_out
            return
        self.modules.append(_Module(fmt, rows_in, cols_out, row_parallel and shards > 1))


def _machete_takes(module: _Module, rule: MacheteRule) -> bool:
    """machete.py can_implement for a symmetric GPTQ module with 16-bit activations."""
    group = module.fmt.group_size or -1
    if module.fmt.act_order and module.split_input:
        return False  # "Act reordering currently not supported by Machete" on a TP-split input
    return group in rule.group_sizes and module.rows_in % MACHETE_BLOCK[0] == 0 and module.cols_out % MACHETE_BLOCK[1] == 0


def _kept_bytes(module: _Module, rule: MacheteRule) -> int:
    """qzeros [groups, output ÷ pack] int32 (one group where channelwise) and g_idx [input rows] int32 where the
    release registers one (a split input under act order is Marlin's: `_machete_takes`)."""
    group, pack = module.fmt.group_size, PACKED_BITS // module.fmt.weight_bits
    groups = module.rows_in // group if group else 1
    qzeros = groups * (module.cols_out // pack) * INT32
    return qzeros + (module.rows_in * INT32 if rule.g_idx else 0)


def gptq_linear_row(
    model: ModelSpec, layout: ParallelLayout, layers: range, gpu_name: str | None, version: ResolvedVersion
) -> WeightRow | None:
    """The zero points (and g_idx) vLLM's Machete kernel keeps on one rank of the stage holding `layers`; None where
    the GPU's kernel (Marlin) drops them or the checkpoint is no symmetric GPTQ."""
    quant = model.quant
    if quant.scheme not in GPTQ_SCHEMES or quant.zero_point_bits:
        return None
    rule = MACHETE_GPTQ_ERAS.at(version)
    capability = compute_capability(gpu_name)
    assumed = capability is None
    capability = capability or HOPPER  # vLLM's rules assume Hopper for a GPU kvtop does not know (backends.py)
    if rule is None or capability < HOPPER or (rule.exactly_90 and capability != HOPPER):
        return None
    recorder = _GptqModules(model, layout)
    attention_of = compressed_attention if model.compressed is not None else None
    for layer in layers:
        layer_weights(recorder, layer, hybrid_layer if model.shared_block is not None else attention_of)
    taken = [module for module in recorder.modules if _machete_takes(module, rule)]
    nbytes = sum(_kept_bytes(module, rule) for module in taken)
    if nbytes <= 0:
        return None
    kept = "qzeros and g_idx" if rule.g_idx else "qzeros"
    where = ("GPU not stated: compute capability 9.0 assumed (vLLM's rules' default); on SM 8.x or 10.x Marlin "
             "drops them" if assumed else f"{gpu_name}: compute capability {capability[0]}.{capability[1]}")  # fmt: skip
    refused = len(recorder.modules) - len(taken)
    others = f"; {refused} module(s) Machete refuses (shape, group): the next kernel's, not counted" if refused else ""
    return WeightRow(component="gptq_zero_points", params=0, bytes=nbytes, shards=1, bytes_per_param=0.0,
                     note=f"vLLM's Machete kernel keeps a symmetric GPTQ checkpoint's {kept} on every linear layer "
                     f"({where}{others}; gptq_linear.py)")  # fmt: skip
