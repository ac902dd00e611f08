"""Which kernel vLLM's `choose_mp_linear_kernel` gives one symmetric GPTQ linear module, by the engine's own checks in
the order it tries them, and what that kernel keeps of the linear method's `qzeros` and `g_idx` after loading
(docs/engines/vllm.md §3.8; the bytes: gptq_linear.py).

The CUDA list (v0.33.0 kernels/linear/__init__.py:539-547): CutlassW4A8 (FP8 activations only: never a 16-bit
GPTQ module), Machete, Marlin, Conch (only where the `conch-triton-kernels` package is installed, which a default
install is not: skipped), Exllama, TritonW4A16, Humming. AllSpark (v0.8.0-v0.30.x, before Marlin) takes only
channelwise checkpoints on SM 8.x: for a grouped module it refuses, for a channelwise one it is named not modelled.
Activations are assumed float16 (GPTQ checkpoints' dtype; kvtop keeps the dtype's width only): Exllama refuses
bfloat16 ("Exllama only supports float16 activations"), and a bf16 run's refused modules would go on to Triton.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum

from kvtop.domain.engines.versions import Era, Eras
from kvtop.domain.quant_spec import QuantSpec

MACHETE_BLOCK = (64, 128)  # machete_utils.py MACHETE_PREPACKED_BLOCK_SHAPE: input rows, output columns
MARLIN_TILE = (128, 64)  # marlin_utils.py GPTQ_MARLIN_MIN_THREAD_K, GPTQ_MARLIN_MIN_THREAD_N: input rows, output columns
MARLIN_GROUP_SIZES = (-1, 32, 64, 128)  # marlin_utils.py MARLIN_SUPPORTED_GROUP_SIZES (v0.23.0, v0.33.0)
MARLIN_MIN = (7, 5)  # marlin.py get_min_capability 75
EXLLAMA_MIN = (6, 0)  # exllama.py get_min_capability 60
HOPPER = (9, 0)
PACKED_BITS = 32  # zeros packed into int32 words


class Kernel(Enum):
    """The kernel a module gets, as far as kvtop follows vLLM's list."""

    MACHETE = "Machete"  # keeps qzeros and g_idx
    MARLIN = "Marlin"  # empties both (marlin_make_empty); under act order keeps g_idx sorted and its sort indices
    MARLIN_PADDED = "Marlin, tile-padded"  # empties both, pads qweight and scales: the padding not modelled
    EXLLAMA = "Exllama"  # keeps qzeros; g_idx only under act order (argsort, int32)
    NOT_MODELLED = "not modelled"  # AllSpark, Triton, Humming, or no kernel at all


@dataclass(frozen=True)
class MacheteRule:
    """How a release picks Machete for a GPTQ linear layer."""

    exactly_90: bool  # Machete only on compute capability 9.0 (else on any of 9.0 or more)
    group_sizes: tuple[int, ...]  # the group sizes it takes with 16-bit activations (-1: channelwise)


@dataclass(frozen=True)
class GptqKernelRule:
    """One release's kernel list for a symmetric GPTQ module with 16-bit activations, and what the method registers."""

    machete: MacheteRule
    g_idx: bool  # the linear method registers a g_idx (int32, one per input row of the partition)
    marlin_pads: bool  # Marlin takes any whole-group partition, zero-padding tiles (else it needs whole tiles)
    exllama: bool  # Exllama follows Marlin
    allspark: bool  # AllSpark precedes Marlin


_MACHETE_0_6 = MacheteRule(False, (-1, 128))
_MACHETE_0_10 = MacheteRule(True, (-1, 64, 128))
GPTQ_KERNEL_ERAS: Eras[GptqKernelRule | None] = Eras((
    Era("", None, "before v0.6.2 gptq_marlin.py runs Marlin itself (v0.6.1 :277 registers qzeros, :308 sets an "
        "empty layer.zp beside it): not modelled, the book's count stands"),
    Era("0.6.2", GptqKernelRule(_MACHETE_0_6, True, False, False, False), "first in v0.6.2: quantization/kernels/"
        "__init__.py:13-16 _POSSIBLE_KERNELS [Machete, Marlin]; kernels/machete.py:21-22 get_min_capability 90, "
        ":56-93 process_weights_after_loading keeps g_idx and qzeros; gptq_marlin.py:285-287 registers both; "
        "utils/machete_utils.py:7 group sizes [-1, 128] (read at v0.6.3, v0.7.0, v0.8.0 alike)"),
    Era("0.7.3", GptqKernelRule(_MACHETE_0_6, True, False, True, False), "v0.7.3 kernels/mixed_precision/"
        "__init__.py:17-21 [Machete, Marlin, Exllama] (v0.7.0-v0.7.2 not read for the list)"),
    Era("0.8.0", GptqKernelRule(_MACHETE_0_6, True, False, True, True), "v0.8.0 __init__.py:19-24 [Machete, "
        "AllSpark, Marlin, Exllama]"),
    Era("0.10.0", GptqKernelRule(_MACHETE_0_10, True, False, True, True), "v0.10.0 kernels/mixed_precision/"
        "machete.py:35 is_device_capability(90) (absent from v0.8.0; v0.8.1-v0.9.2 not read), :62 keeps g_idx and "
        "qzeros; machete_utils.py:36-37 [-1, 64, 128]; gptq_marlin.py:353-355 (auto_gptq.py:439-441 from v0.22.0); "
        "v0.11.0 list [CutlassW4A8, Machete, AllSpark, Marlin, Dynamic4bit, BitBLAS, Conch, Exllama]; v0.23.0 "
        "marlin.py can_implement → marlin_utils.py:167-199 verify_marlin_supports_shape: output % 64, input % 128, "
        "whole groups"),
    Era("0.24.0", GptqKernelRule(_MACHETE_0_10, True, True, True, True), "first in v0.24.0 (absent at v0.23.0): "
        "marlin.py can_implement refuses only 'a group straddling TP ranks' (input per partition % group), "
        "'Tile misalignment is fixed by zero-padding at weight prep' (read at v0.24.0-v0.30.0, v0.33.0 :57-69)"),
    Era("0.30.0", GptqKernelRule(_MACHETE_0_10, False, True, True, True), "first in v0.30.0: auto_gptq.py:430 "
        "registers qzeros and no g_idx (v0.29.0 :443)"),
    Era("0.32.0", GptqKernelRule(_MACHETE_0_10, False, True, True, False), "v0.32.0 list [CutlassW4A8, Machete, "
        "Marlin, Conch, Exllama, TritonW4A16, Humming] (AllSpark gone; v0.31.x not read); v0.33.0 "
        "kernels/linear/__init__.py:539-547 the same, mixed_precision/machete.py:33 is_device_capability(90), "
        ":60-95 keeps qzeros (zero_points=False: auto_gptq.py:346), marlin.py:172 empties them, exllama.py:72-103 "
        "replaces them by a tensor [input per partition // group, output ÷ pack] int32"),
))  # fmt: skip


@dataclass
class GptqModule:
    """One linear module of a rank: its partition (input rows, output columns), the whole input, and format."""

    fmt: QuantSpec
    rows_in: int
    cols_out: int
    full_in: int
    split_input: bool
    act_order: bool  # desc_act with groups, where the release takes it (before v0.30.0: kernels.py refuses it after)


def _machete_takes(module: GptqModule, rule: MacheteRule, capability: tuple[int, int]) -> bool:
    """machete.py can_implement for a symmetric GPTQ module with 16-bit activations."""
    if capability < HOPPER or (rule.exactly_90 and capability != HOPPER):
        return False
    if module.act_order and module.split_input:
        return False  # "Act reordering currently not supported by Machete" on a TP-split input
    group = module.fmt.group_size or -1
    return group in rule.group_sizes and module.rows_in % MACHETE_BLOCK[0] == 0 and module.cols_out % MACHETE_BLOCK[1] == 0


def _whole_groups(module: GptqModule) -> bool:
    """The partition's input is whole groups (or one group spans the whole input)."""
    group = module.fmt.group_size
    return not group or group >= module.full_in or module.rows_in % group == 0


def _marlin(module: GptqModule, rule: GptqKernelRule, capability: tuple[int, int]) -> Kernel | None:
    """marlin.py can_implement (the tile check before v0.24.0; after it, a misaligned tile is padded)."""
    if capability < MARLIN_MIN or (module.fmt.group_size or -1) not in MARLIN_GROUP_SIZES or not _whole_groups(module):
        return None
    if module.rows_in % MARLIN_TILE[0] == 0 and module.cols_out % MARLIN_TILE[1] == 0:
        return Kernel.MARLIN
    if not rule.marlin_pads or module.act_order:  # v0.29.0 marlin.py:62-70: act order keeps the strict check
        return None
    group = max(module.fmt.group_size or 1, 1)  # marlin_utils.py marlin_padded_nk: either tile family, unpadded
    flipped = module.rows_in % math.lcm(MARLIN_TILE[1], group) == 0 and module.cols_out % MARLIN_TILE[0] == 0
    tiled = module.rows_in % math.lcm(MARLIN_TILE[0], group) == 0 and module.cols_out % MARLIN_TILE[1] == 0
    return Kernel.MARLIN if flipped or tiled else Kernel.MARLIN_PADDED


def _exllama_takes(module: GptqModule, rule: GptqKernelRule, capability: tuple[int, int]) -> bool:
    """exllama.py can_implement: float16 activations (assumed), 4 or 8 bits, grouped, the whole input whole groups,
    output whole int32 words of zeros; before v0.30.0 no act order on a split input."""
    group = module.fmt.group_size
    if not rule.exllama or capability < EXLLAMA_MIN or not group or module.full_in % group:
        return False
    if module.act_order and module.split_input:
        return False
    return module.cols_out % (PACKED_BITS // module.fmt.weight_bits) == 0


def kernel_for(module: GptqModule, rule: GptqKernelRule, capability: tuple[int, int]) -> Kernel:
    """The first kernel of the release's list whose checks take the module."""
    if _machete_takes(module, rule.machete, capability):
        return Kernel.MACHETE
    if rule.allspark and (8, 0) <= capability < HOPPER and not module.fmt.group_size:
        return Kernel.NOT_MODELLED  # AllSpark's channelwise layers (allspark_utils.py): what it keeps not read
    marlin = _marlin(module, rule, capability)
    if marlin is not None:
        return marlin
    return Kernel.EXLLAMA if _exllama_takes(module, rule, capability) else Kernel.NOT_MODELLED
