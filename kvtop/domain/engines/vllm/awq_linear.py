"""What vLLM's AWQ linear layers hold beyond the weights book's count: Machete's 16-bit zero points on compute
capability 9.0 (docs/engines/vllm.md §3.8; GPTQ's counterpart: gptq_linear.py).

The book counts an AWQ module's zero points as the checkpoint packs them: 4 bits per group and output (`qzeros`,
int32 [groups, output ÷ 8]). What loading keeps is the kernel's:
- Marlin repacks them into Marlin's order at the same packed size (`awq_to_marlin_zero_points`,
  awq_marlin.py:403 at v0.13.0-v0.18.1); the legacy AWQ kernel keeps them as loaded. Both hold the book's count.
- From v0.19.0 the AWQ-Marlin method asks `choose_mp_linear_kernel`, whose CUDA list puts Machete before Marlin
  (awq_marlin.py:405 at v0.19.0, :417 at v0.20.1, :434 at v0.23.0; auto_awq.py:467 at v0.24.0, :470 at v0.27.1,
  :444 at v0.30.0, :454 at v0.34.0). Machete takes a module on compute capability 9.0 exactly, uint4 with zero
  points, groups of 64 or 128 (or channelwise) with 16-bit activations, input % 64 and output % 128
  (kernels/linear/mixed_precision/machete.py:26-50, utils/machete_utils.py at v0.19.0 and v0.30.0), and its
  `transform_w_zp` unpacks the zeros and pre-applies the scales: `-1.0 * w_s * zeros` in the scales' dtype
  (machete.py:117-118 at v0.19.0), one 16-bit value per group and output where the book counts 4 bits.
- v0.19.0-v0.23.x send an explicit `--quantization awq` to the legacy AWQConfig ('… you specified
  quantization=awq explicitly, so forcing awq', awq_marlin.py:248-255 at v0.19.0); from v0.24.0 'awq',
  'awq_marlin' and 'auto_awq' are all AutoAWQConfig (quantization/__init__.py:141-142 at v0.24.0).
Measured: Qwen2.5-72B-Instruct-AWQ on an H200 at v0.30.0 printed 'Model loading took 39.56 GiB' against the book's
38.75 (case-study2 in tests/data/calibration/vllm.jsonl); its 80 layers' zeros add 0.77 GiB this way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.engines.vllm.awq_bits import AWQ_SCHEMES
from kvtop.domain.engines.vllm.gptq_kernels import HOPPER, MACHETE_BLOCK  # Machete's shape, as GPTQ reads it
from kvtop.domain.engines.vllm.gptq_linear import walk_layers
from kvtop.domain.gpus import compute_capability
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.rank_matrices import RankMatrices
from kvtop.domain.rounding import ceil_div
from kvtop.domain.weights import WeightRow

MACHETE_GROUPS = (None, 64, 128)  # query_machete_supported_group_sizes for 16-bit activations (None: channelwise)
ZERO_BYTES = 2  # the scales' dtype (the model's 16-bit dtype) that Machete's zeros take

# Which AWQ launches reach Machete: None before v0.19.0 (Marlin itself); from v0.19.0 unless `--quantization awq`
# forces the legacy kernel; from v0.24.0 every AWQ name (AutoAWQConfig)
MacheteReach = Literal["unless-awq", "always"]
MACHETE_ERAS: Eras[MacheteReach | None] = Eras((
    Era("", None, "awq_marlin.py:375 `ops.awq_marlin_repack` at v0.18.1 (:375 at v0.13.0-v0.18.0): Marlin itself; "
        "before v0.13.0 not read, Marlin assumed"),
    Era("0.19.0", "unless-awq", "awq_marlin.py:405 choose_mp_linear_kernel at v0.19.0 (:417 v0.20.1, :433 v0.22.0, "
        ":434 v0.23.0); an explicit --quantization awq forces AWQConfig (:248-255)"),
    Era("0.24.0", "always", "auto_awq.py:467 choose_mp_linear_kernel at v0.24.0 (:470 v0.27.1, :444 v0.30.0, "
        ":454 v0.34.0); quantization/__init__.py:141-142 'awq' and 'awq_marlin' → AutoAWQConfig"),
))  # fmt: skip


@dataclass
class AwqModule:
    """One linear module of a rank: its partition (input rows, output columns), its group, and the book's zeros."""

    rows_in: int
    cols_out: int
    group: int | None
    book_zero_bytes: float


class _AwqModules(RankMatrices):
    """Records the rank's AWQ linear modules (k and v fused into q's, up into gate's) instead of their bytes."""

    def __init__(self, model: ModelSpec, layout: ParallelLayout) -> None:
        super().__init__(model, layout)
        self.modules: list[AwqModule] = []

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
        if fmt is None or fmt.scheme not in AWQ_SCHEMES or fmt.weight_bits != 4 or not fmt.zero_point_bits:
            return
        row_parallel = row_scale_shards is not None
        rows_in, cols_out = (cols // shards, rows) if row_parallel else (cols, rows // shards)
        group = fmt.group_size
        # the book's zeros (quant_spec.matrix_bytes): rows × ceil(cols ÷ group) × bits ÷ 8, split `shards` ways
        book = rows * (ceil_div(cols, group) if group else 1) * fmt.zero_point_bits / 8 / shards
        if not opens_module and self.modules and self.modules[-1].rows_in == rows_in:
            self.modules[-1].cols_out += cols_out
            self.modules[-1].book_zero_bytes += book
            return
        self.modules.append(AwqModule(rows_in, cols_out, group, book))


def machete_takes(module: AwqModule) -> bool:
    """machete.py can_implement for a uint4 module with zero points and 16-bit activations, on compute capability
    9.0 (the caller's check)."""
    return (module.group in MACHETE_GROUPS and module.rows_in % MACHETE_BLOCK[0] == 0
            and module.cols_out % MACHETE_BLOCK[1] == 0)  # fmt: skip


def machete_zero_bytes(module: AwqModule) -> int:
    """Machete's zeros: one value of the scales' dtype per group of the partition's input and output column."""
    groups = module.rows_in // module.group if module.group else 1
    return groups * module.cols_out * ZERO_BYTES


def awq_linear_rows(
    model: ModelSpec, layout: ParallelLayout, layers: range, gpu_name: str | None, version: ResolvedVersion,
    quantization: str | None = None,
) -> tuple[WeightRow, ...]:
    """On one rank of the stage holding `layers`: what Machete's 16-bit zeros add over the book's packed ones; none
    where the checkpoint is no AWQ, the release or `quantization` (the launch's --quantization) keeps Marlin or the
    legacy kernel, or the GPU is not compute capability 9.0 (an unnamed GPU is taken as 9.0: vLLM's default)."""
    if model.quant.scheme not in AWQ_SCHEMES:
        return ()
    era = MACHETE_ERAS.at(version)
    if era is None or era == "unless-awq" and quantization == "awq":
        return ()
    capability = compute_capability(gpu_name)
    if (capability or HOPPER) != HOPPER:
        return ()
    recorder = _AwqModules(model, layout)
    walk_layers(recorder, layers)
    taken = [module for module in recorder.modules if machete_takes(module)]
    extra = round(sum(machete_zero_bytes(module) - module.book_zero_bytes for module in taken))
    if extra <= 0:
        return ()
    where = ("GPU not stated: compute capability 9.0 assumed" if capability is None
             else f"{gpu_name}: compute capability 9.0")  # fmt: skip
    avoided = "; --quantization awq avoids it on 0.19-0.23" if era == "unless-awq" else ""
    return (WeightRow(component="awq_zero_points", params=0, bytes=extra, shards=1, bytes_per_param=0.0,
                      note=f"vLLM's Machete kernel (from v0.19.0, on compute capability 9.0) keeps an AWQ checkpoint's "
                      f"zero points as 16-bit values pre-scaled by the group scales, where the book counts 4 bits "
                      f"({where}; {len(taken)} of {len(recorder.modules)} modules; vLLM v0.19.0 "
                      f"kernels/linear/mixed_precision/machete.py:117 transform_w_zp{avoided})"),)  # fmt: skip
