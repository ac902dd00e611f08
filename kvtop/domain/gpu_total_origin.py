"""What a GPU total is (`GpuTotalOrigin`): the table's nvidia-smi figure, the operator's --gpu-memory, a larger memory
variant's, NVML's on a live node or a WSL2 card's whole memory; decided once where the total is chosen, read by every
reader (the budget's label, explain's measured-or-assumed, the calibration's CUDA total). Split from `gpus`, whose
tables it reads."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from kvtop.domain.calibration.gpu_totals import CUDA_TOTAL_FITS, cuda_total_estimate
from kvtop.domain.errors import InputError
from kvtop.domain.gpus import GPU_TOTAL_MIB, gpu_key, gpu_total_bytes, is_larger_variant, is_unified
from kvtop.domain.wording import gib


class GpuTotalOrigin(str, Enum):
    """Where a GPU total came from, said where the total is chosen (`plan`'s --gpu / --gpu-memory, a live node's
    NVML), never read back from its bytes: an operator's --gpu-memory of 81559MiB on an H100 equals the table's
    figure and is still the operator's."""

    TABLE = "table"  # --gpu's table: `GPU_TOTAL_MIB` (nvidia-smi's) or `UNIFIED_TOTAL_MIB` (CUDA's on unified memory)
    GIVEN = "given"  # the operator's --gpu-memory: the total the engine sees (CUDA's)
    # the operator's --gpu-memory above the named card's table figure (`is_larger_variant`): nvidia-smi's total of a
    # larger memory variant of that card, whose CUDA total the calibration estimates as it does the table's
    VARIANT = "variant"
    NVML = "nvml"  # read on the node from NVML (nvidia-smi's figure of this very GPU): the live and demo predictions
    # the card's whole memory (--gpu's table, a larger variant's --gpu-memory, or NVML's) on a WSL2 host, where it is
    # CUDA's total too: Windows' display driver (WDDM) owns the card and no Linux kernel driver keeps a reserve from
    # it (`calibration.gpu_totals.wsl2_total_estimate`, its sources); `plan --wsl2`, or a node that shows WSL2
    WSL2 = "wsl2"

    @property
    def is_engines_total(self) -> bool:
        """Whether a total of this origin stands as the one the engine sizes from (CUDA's): the operator's
        --gpu-memory, or a live node's NVML (its engine-visible total where the driver's reserved was read); not a
        table's or a variant's nvidia-smi total, from which the calibration estimates CUDA's."""
        return self in (GpuTotalOrigin.GIVEN, GpuTotalOrigin.NVML)


def given_total_origin(name: str | None, total_bytes: int) -> GpuTotalOrigin:
    """What a total the operator gives (`--gpu-memory`) for the card `name` is, decided here once for plan, explain
    and the planner: nvidia-smi's total of a larger memory variant of the card (VARIANT) where it is one
    (`is_larger_variant`), else the total the engine sees (GIVEN)."""
    return GpuTotalOrigin.VARIANT if is_larger_variant(name, total_bytes) else GpuTotalOrigin.GIVEN


def wsl2_total_origin(name: str | None, origin: GpuTotalOrigin) -> GpuTotalOrigin:
    """What a total of `origin` for the card `name` is on a WSL2 host: nvidia-smi's figure of the card (the table's, a
    larger variant's, NVML's) is then CUDA's whole-card total (WSL2); the operator's --gpu-memory (already the total
    the engine sees) and a unified device's (no WDDM card) keep their origin."""
    if is_unified(name) or origin is GpuTotalOrigin.GIVEN or origin is GpuTotalOrigin.WSL2:
        return origin
    return GpuTotalOrigin.WSL2


def engine_visible_total(total_bytes: int | None, reserved_bytes: int | None) -> int | None:
    """THE total the engines size from (`cudaMemGetInfo`'s), measured on a live GPU: NVML v2's total less what the
    driver reserves. On one H200 (driver 580.159.04, CUDA 13.0) `torch.cuda.mem_get_info()` said 150,109,880,320 B
    of NVML's 150,754,820,096 with 644,939,776 reserved, to the byte (tests/data/samples/nvidia_smi/
    h200-device-run-*). None where it was not measured: NVML v1 (no reserved figure) or a reserved of 0 (a
    driver that does not split it): the per-model fit stands in (`calibration.gpu_totals`)."""
    if total_bytes is None or not reserved_bytes or reserved_bytes >= total_bytes:
        return None
    return total_bytes - reserved_bytes


def whole_card_floor(name: str, table_bytes: int) -> int:
    """The least CUDA total a whole card of the model `name` (nvidia-smi's total `table_bytes`) is taken to report:
    CUDA's total of it (`calibration.gpu_totals.cuda_total_estimate`: the model's fit of its logged totals, else the
    table less the fitted gap) less the driver's reserve that estimate measures (nvidia-smi's less CUDA's) once more.
    The H100's: 79.18 − 0.46 = 78.72 GiB; every whole card's total the corpus's logs printed lies above its floor
    (the A100 80GB's least, 79.14 GiB, of 78.41; the H200's, 139.72, of 139.31). A --gpu-memory below it is not the
    card named (`smi_total`)."""
    cuda = cuda_total_estimate(name, table_bytes, CUDA_TOTAL_FITS).bytes
    return cuda - max(table_bytes - cuda, 0)


@dataclass(frozen=True)
class SmiTotal:
    """nvidia-smi's total of a card (`smi_total`), and why it is assumed where it is (None: the table's or the
    total given itself, nvidia-smi's)."""

    bytes: int
    assumed_why: str | None = None


def smi_total(name: str | None, total_bytes: int, origin: GpuTotalOrigin) -> SmiTotal:
    """nvidia-smi's total of the card whose total of `origin` is `total_bytes` (what SGLang's automatic fraction and
    its multimodal 60 GiB line read, `get_nvgpu_memory_capacity`). One rule: a total other than the operator's
    --gpu-memory is nvidia-smi's already; a --gpu-memory (GIVEN: CUDA's total) of a card the table holds is the whole
    card where it lies at or above the card's `whole_card_floor` (nvidia-smi's figure is then the table's), else a part
    of it (a MIG slice, a vGPU, a memory limit such as HAMi's) whose nvidia-smi figure kvtop cannot know: the figure
    given, assumed (a MIG slice's nvidia-smi prints no total and SGLang reads CUDA's, utils/common.py
    `get_nvgpu_memory_capacity`'s fallback; HAMi reports its limit to both, tests/data/calibration/sglang.jsonl
    markat1-course-assistant-*-hami38000; a vGPU's profile is a little above CUDA's). A card the table lacks, a MIG
    slice named as one or a unified device keeps the total given."""
    if origin is not GpuTotalOrigin.GIVEN or not name or is_unified(name):
        return SmiTotal(total_bytes)
    try:
        table = gpu_total_bytes(name)
    except InputError:  # an unlisted board or a MIG slice: no whole card's figure to read
        return SmiTotal(total_bytes)
    if total_bytes >= table:
        return SmiTotal(total_bytes)
    floor = whole_card_floor(name, table)
    if total_bytes >= floor:
        return SmiTotal(table)
    return SmiTotal(total_bytes, (
        f"--gpu-memory {gib(total_bytes)} is below what a whole {name} reports to CUDA (at least {gib(floor)}; "
        f"nvidia-smi's {gib(table)}): planned as a part of the card (a MIG slice, a vGPU, a memory limit), whose "
        f"nvidia-smi total (SGLang's automatic fraction reads it) is assumed the {gib(total_bytes)} given"
    ))


def smi_total_bytes(name: str | None, total_bytes: int, origin: GpuTotalOrigin) -> int:
    """nvidia-smi's total of the card whose total of `origin` is `total_bytes` (`smi_total`'s bytes)."""
    return smi_total(name, total_bytes, origin).bytes


def smi_total_note(name: str | None, total_bytes: int, origin: GpuTotalOrigin | None) -> str | None:
    """Why nvidia-smi's total of the card is assumed (`smi_total`), for the plan's notes; None where it is known."""
    return None if origin is None else smi_total(name, total_bytes, origin).assumed_why


def total_said(name: str | None, origin: GpuTotalOrigin) -> str:
    """What a GPU total shown beside the GPU's name is, for `plan`'s header ('1× H100 (79.65 GiB, nvidia-smi's
    total)'): the table's figure for the model named (`GPU_TOTAL_MIB`, nvidia-smi's; on a unified-memory device the
    host's memory as CUDA reports it, `UNIFIED_TOTAL_MIB`), else a total given for it ('--gpu-memory'). Said because
    it is not the total the engines size from: CUDA reports less than nvidia-smi (79.19 against 79.65 GiB on an
    H100), which a plan estimates as its own row, 'GPU memory as CUDA reports it' (docs/calibration.md)."""
    if origin in (GpuTotalOrigin.GIVEN, GpuTotalOrigin.VARIANT):
        return "--gpu-memory"
    if origin is GpuTotalOrigin.NVML:
        return "NVML's total"
    if origin is GpuTotalOrigin.WSL2:
        return "the card's whole memory, CUDA's total under WSL2"
    return "CUDA's total on unified memory" if is_unified(name) else "nvidia-smi's total"


def memory_variant_note(name: str | None, origin: GpuTotalOrigin | None) -> str | None:
    """Where --gpu names a card that comes in memory sizes by its bare name ('A100': the table's 80 GB card, beside
    'A100-40GB'), the one it took and how to name the others, in one line; None where the name is one size's, or the
    total was not the table's (--gpu-memory, NVML)."""
    key = gpu_key(name)
    if origin is not GpuTotalOrigin.TABLE or key not in GPU_TOTAL_MIB:
        return None
    sized = [k for k in GPU_TOTAL_MIB if k.startswith(f"{key}-") and k.endswith("GB") and k[len(key) + 1 : -2].isdigit()]
    others = [k for k in sized if GPU_TOTAL_MIB[k] != GPU_TOTAL_MIB[key]]
    if not others:
        return None
    mib = GPU_TOTAL_MIB[key]
    same = next((k for k in sized if GPU_TOTAL_MIB[k] == mib), None)
    took = f"the {same}" if same else f"the {round(mib / 1024)} GB card"
    return (f"--gpu {name} is taken as {took} ({mib:,} MiB, nvidia-smi's total); for the other size give "
            + " or ".join(f"--gpu {k}" for k in others))


def total_origin(name: str | None, total_bytes: int, said: GpuTotalOrigin | None) -> GpuTotalOrigin:
    """What a GPU total of `total_bytes` for the card `name` is, decided here once for every reader (the budget's
    label, explain's measured-or-assumed, the calibration's CUDA total): the origin its chooser said, else the one
    `inferred_total_origin` reads from its bytes. Whether it is the engine's own (CUDA's) or nvidia-smi's is then
    `GpuTotalOrigin.is_engines_total`."""
    return said if said is not None else inferred_total_origin(name, total_bytes)


def inferred_total_origin(name: str | None, total_bytes: int) -> GpuTotalOrigin:
    """The origin of a total whose caller did not say it (the TUI's planner, the demos, explain without --gpu or
    --gpu-memory): the table's where the named model's table figure is these bytes, else given (`given_total_origin`:
    a larger memory variant's above the card's figure). A fallback only, read through `total_origin`:
    `plan` and `explain` say the origin they chose (`MeasuredInputs.gpu_total_origin`)."""
    try:
        table = gpu_total_bytes(name) if name else None
    except InputError:  # a name the tables do not know: its total was given
        table = None
    return GpuTotalOrigin.TABLE if table == total_bytes else given_total_origin(name, total_bytes)
