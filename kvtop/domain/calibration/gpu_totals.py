"""The memory CUDA reports for each GPU model, which is what the engines size from.

nvidia-smi's total (kvtop's GPU table, `kvtop/domain/gpus.py`) is not what `cudaMemGetInfo` says: an
H100 80GB shows 81,559 MiB to nvidia-smi and about 81,090 MiB to CUDA, the driver keeping the rest.
vLLM multiplies CUDA's total by `--gpu-memory-utilization`; SGLang, TensorRT-LLM and LMDeploy start
from CUDA's free memory. Each GPU model's figure is a fit (`cuda_total.<GPU>`: the mean of the totals
the corpus's logs printed, docs/calibration.md); a GPU without one takes nvidia-smi's total less the gap
of those that have one, fitted as a constant plus a part per 100 GiB of nvidia-smi's total (`cuda_total.gap`):
the driver keeps more of a larger card (0.08 GiB of a GTX 1080, 0.46 of an H100, 0.71 of a B200, 0.90 of a B300,
1.05 of a GB300 as torch prints their totals), and a constant gap, each GPU left out in turn, missed the B300 and
GB300 by 0.41 and 0.56 GiB against 0.08 and 0.10 (tests/data/calibration/SOURCES.md, session 54). The gap's error is
what a plan on a GPU no log printed the total of faces: each GPU model left out whole, the gap fitted on the others,
and each total that GPU printed judged against nvidia-smi's less that gap (benchmarks/calibration/evaluate.py
`gap_held_out_error_gib`). Judged at the
GPU's mean total instead it left out the spread of one GPU's own totals (ECC, driver), and held an A40's printed
44.35 GiB 0.03 GiB outside (44.54 ± 0.16, session 56). On a unified-memory device (GB10, Jetson) the table's figure is CUDA's own total,
the host's memory as the engines' logs printed it (what the host holds of it: `host_memory.py`).
Under WSL2 the card belongs to Windows' display driver (WDDM) and CUDA reaches it through the DirectX kernel's
paravirtualised GPU (`/dev/dxg`), with no Linux kernel driver: CUDA's total is the card's whole memory, nvidia-smi's
figure, with no driver's reserve taken from it (`wsl2_total_estimate`; the total's origin `GpuTotalOrigin.WSL2`).
"""

from __future__ import annotations

from collections.abc import Mapping

from kvtop.domain.calibration.linear import LinearTerm
from kvtop.domain.calibration.terms import Term, TermEstimate, TermSource
from kvtop.domain.gpu_variants import is_mig_slice
from kvtop.domain.gpus import (
    SLICE_RESERVED_BYTES,
    gpu_model_key,
    is_larger_variant,
    is_listed_card,
    is_unified,
    unlisted_board,
)
from kvtop.domain.wording import GIB, gib

KEY_PREFIX = "cuda_total."
FALLBACK_KEY = "cuda_total.gap"  # nvidia-smi's total less CUDA's, for a GPU without a fit of its own
GAP_FEATURES = ("1 GiB", "100 GiB of nvidia-smi's total")  # the gap's features: a constant, a part of the total
# A unified device's total is the host's memory less what its firmware and kernel keep, which moves with the OS
# release: GB10 starts printed 119.70 GiB (TensorRT-LLM 1.1.0rc3, vLLM), two DGX OS 7.5 GB10 hosts state 121.63 and
# 121.69 GiB (MiaAI-Lab/DeepSeek-v4-Flash-One-DGX-Spark#4, MiaAI-Lab/GLM-5.3-Flash-EXL3-2x-DGX-Sparks#204), and vLLM
# starts on kernel 6.17 hosts print 121.69 (`(114.54/121.69 GiB)` at 0.27.1, search-index id 69198182448; #47 on drivers
# 580.173.02 and 610.43.02): two OS eras, both inside 119.70 ± 2 GiB (session 68: docs/engines/vllm.md, unified memory)
UNIFIED_TOTAL_ERROR_BYTES = 2 * GIB
# Under WSL2 CUDA's total is the card's whole memory, nvidia-smi's figure: four WSL2 starts printed it (vLLM's
# 'total_gpu_memory (12.00GiB)' of an RTX 2060 12 GB's 12,288 MiB, driver 561.09 under Docker Desktop, search-index id
# 40791855483; '(8.00GiB)' of an RTX 4060's 8,188 MiB, vllm-project/vllm#13882; 'Free memory on device (3.21/4.0
# GiB)' of an RTX 3050 laptop's 4,096 MiB, search-index id 68393499563; an RTX 5080's '15.92 GiB' of 16,303 MiB,
# search-index id 59827454839), as did an RTX 4090's '(22.45/23.99 GiB)' of 24,564 MiB (search-index id 61815222665)
# and RTX 5090s' '(30.2/31.84 GiB)' of 32,607 MiB under WSL2 or Windows (search-index ids 57678521127, 60827304595,
# 53100052126, 58303971575, 60293000203) where Linux 5090 hosts print 31.36; native Linux desktops keep the driver's
# gap (GTX 1080: 7.92 of 8,192 MiB; RTX 3060 Ti: 7.65 of 8,192). The mechanism: under WSL2 the only driver is Windows' (NVIDIA's CUDA on WSL User Guide,
# https://docs.nvidia.com/cuda/wsl-user-guide/index.html and its 11.4.4 archive: CUDA reaches GeForce and Quadro cards
# in WDDM mode through GPU paravirtualisation, the Windows driver mapped into WSL 2, no Linux GPU driver installed
# there); under WDDM Windows allocates and manages the device's memory (NVML's nvmlDeviceGetMemoryInfo reference:
# 'Under WDDM most device memory is allocated and managed on startup by Windows'), so the Linux kernel driver's
# framebuffer reserve (NVML v2's `reserved`, the gap above) is not taken from what CUDA reports.
# The error: the logs' two decimals (0.005 GiB), and no start seen below the card's figure by more
WSL2_TOTAL_ERROR_BYTES = GIB // 100

# BEGIN FITTED by `python benchmarks/calibration/run.py --write` from tests/data/calibration/ (docs/calibration.md)
CUDA_TOTAL_ERROR_BYTES = 130042066  # the error the fits below share (named where theirs is it)
CUDA_TOTAL_FITS: dict[str, LinearTerm] = {
    'cuda_total.A10': LinearTerm(
        key='cuda_total.A10', features=('1 GiB',),
        coefficients=(22.065,), error_bytes=CUDA_TOTAL_ERROR_BYTES, records=2,
        sources=2, gpus=('A10',),
        novel_error_bytes=CUDA_TOTAL_ERROR_BYTES, feature_sources=(2,),
    ),
    'cuda_total.A100-40GB': LinearTerm(
        key='cuda_total.A100-40GB', features=('1 GiB',),
        coefficients=(39.4425,), error_bytes=CUDA_TOTAL_ERROR_BYTES, records=4,
        sources=4, gpus=('A100-40GB',),
        novel_error_bytes=CUDA_TOTAL_ERROR_BYTES, feature_sources=(4,),
    ),
    'cuda_total.A100-80GB': LinearTerm(
        key='cuda_total.A100-80GB', features=('1 GiB',),
        coefficients=(79.205714,), error_bytes=CUDA_TOTAL_ERROR_BYTES, records=7,
        sources=7, gpus=('A100-80GB',),
        novel_error_bytes=CUDA_TOTAL_ERROR_BYTES, feature_sources=(7,),
    ),
    'cuda_total.A10G': LinearTerm(
        key='cuda_total.A10G', features=('1 GiB',),
        coefficients=(22.06,), error_bytes=CUDA_TOTAL_ERROR_BYTES, records=1,
        sources=1, gpus=('A10G',),
        novel_error_bytes=CUDA_TOTAL_ERROR_BYTES, feature_sources=(1,),
    ),
    'cuda_total.A30': LinearTerm(
        key='cuda_total.A30', features=('1 GiB',),
        coefficients=(23.5,), error_bytes=CUDA_TOTAL_ERROR_BYTES, records=1,
        sources=1, gpus=('A30',),
        novel_error_bytes=CUDA_TOTAL_ERROR_BYTES, feature_sources=(1,),
    ),
    'cuda_total.A40': LinearTerm(
        key='cuda_total.A40', features=('1 GiB',),
        coefficients=(44.35,), error_bytes=CUDA_TOTAL_ERROR_BYTES, records=1,
        sources=1, gpus=('A40',),
        novel_error_bytes=CUDA_TOTAL_ERROR_BYTES, feature_sources=(1,),
    ),
    'cuda_total.B200': LinearTerm(
        key='cuda_total.B200', features=('1 GiB',),
        coefficients=(178.352,), error_bytes=CUDA_TOTAL_ERROR_BYTES, records=5,
        sources=5, gpus=('B200',),
        novel_error_bytes=CUDA_TOTAL_ERROR_BYTES, feature_sources=(5,),
    ),
    'cuda_total.B300': LinearTerm(
        key='cuda_total.B300', features=('1 GiB',),
        coefficients=(267.689635,), error_bytes=CUDA_TOTAL_ERROR_BYTES, records=3,
        sources=3, gpus=('B300',),
        novel_error_bytes=CUDA_TOTAL_ERROR_BYTES, feature_sources=(3,),
    ),
    'cuda_total.GB10': LinearTerm(
        key='cuda_total.GB10', features=('1 GiB',),
        coefficients=(121.484,), error_bytes=CUDA_TOTAL_ERROR_BYTES, records=10,
        sources=2, gpus=('GB10',),
        novel_error_bytes=2211908286, feature_sources=(2,),
    ),
    'cuda_total.GB200': LinearTerm(
        key='cuda_total.GB200', features=('1 GiB',),
        coefficients=(184.31,), error_bytes=CUDA_TOTAL_ERROR_BYTES, records=2,
        sources=2, gpus=('GB200',),
        novel_error_bytes=CUDA_TOTAL_ERROR_BYTES, feature_sources=(2,),
    ),
    'cuda_total.GB300': LinearTerm(
        key='cuda_total.GB300', features=('1 GiB',),
        coefficients=(276.5,), error_bytes=CUDA_TOTAL_ERROR_BYTES, records=2,
        sources=2, gpus=('GB300',),
        novel_error_bytes=CUDA_TOTAL_ERROR_BYTES, feature_sources=(2,),
    ),
    'cuda_total.GTX1080': LinearTerm(
        key='cuda_total.GTX1080', features=('1 GiB',),
        coefficients=(7.92,), error_bytes=CUDA_TOTAL_ERROR_BYTES, records=4,
        sources=3, gpus=('GTX1080',),
        novel_error_bytes=CUDA_TOTAL_ERROR_BYTES, feature_sources=(3,),
    ),
    'cuda_total.H100': LinearTerm(
        key='cuda_total.H100', features=('1 GiB',),
        coefficients=(79.184189,), error_bytes=CUDA_TOTAL_ERROR_BYTES, records=74,
        sources=19, gpus=('H100',),
        novel_error_bytes=CUDA_TOTAL_ERROR_BYTES, feature_sources=(19,),
    ),
    'cuda_total.H100-NVL': LinearTerm(
        key='cuda_total.H100-NVL', features=('1 GiB',),
        coefficients=(93.093333,), error_bytes=CUDA_TOTAL_ERROR_BYTES, records=3,
        sources=2, gpus=('H100-NVL',),
        novel_error_bytes=CUDA_TOTAL_ERROR_BYTES, feature_sources=(2,),
    ),
    'cuda_total.H100-PCIE': LinearTerm(
        key='cuda_total.H100-PCIE', features=('1 GiB',),
        coefficients=(79.19,), error_bytes=CUDA_TOTAL_ERROR_BYTES, records=4,
        sources=1, gpus=('H100-PCIE',),
        novel_error_bytes=CUDA_TOTAL_ERROR_BYTES, feature_sources=(1,),
    ),
    'cuda_total.H200': LinearTerm(
        key='cuda_total.H200', features=('1 GiB',),
        coefficients=(139.846634,), error_bytes=CUDA_TOTAL_ERROR_BYTES, records=6,
        sources=6, gpus=('H200',),
        novel_error_bytes=274919880, feature_sources=(6,),
    ),
    'cuda_total.L4': LinearTerm(
        key='cuda_total.L4', features=('1 GiB',),
        coefficients=(22.058333,), error_bytes=CUDA_TOTAL_ERROR_BYTES, records=6,
        sources=6, gpus=('L4',),
        novel_error_bytes=143881409, feature_sources=(6,),
    ),
    'cuda_total.L40': LinearTerm(
        key='cuda_total.L40', features=('1 GiB',),
        coefficients=(44.39,), error_bytes=CUDA_TOTAL_ERROR_BYTES, records=1,
        sources=1, gpus=('L40',),
        novel_error_bytes=CUDA_TOTAL_ERROR_BYTES, feature_sources=(1,),
    ),
    'cuda_total.L40S': LinearTerm(
        key='cuda_total.L40S', features=('1 GiB',),
        coefficients=(44.413077,), error_bytes=CUDA_TOTAL_ERROR_BYTES, records=13,
        sources=6, gpus=('L40S',),
        novel_error_bytes=136007302, feature_sources=(6,),
    ),
    'cuda_total.RTX3060': LinearTerm(
        key='cuda_total.RTX3060', features=('1 GiB',),
        coefficients=(11.63,), error_bytes=CUDA_TOTAL_ERROR_BYTES, records=2,
        sources=1, gpus=('RTX3060',),
        novel_error_bytes=CUDA_TOTAL_ERROR_BYTES, feature_sources=(1,),
    ),
    'cuda_total.RTX3060-TI': LinearTerm(
        key='cuda_total.RTX3060-TI', features=('1 GiB',),
        coefficients=(7.65,), error_bytes=CUDA_TOTAL_ERROR_BYTES, records=1,
        sources=1, gpus=('RTX3060-TI',),
        novel_error_bytes=CUDA_TOTAL_ERROR_BYTES, feature_sources=(1,),
    ),
    'cuda_total.RTX3090': LinearTerm(
        key='cuda_total.RTX3090', features=('1 GiB',),
        coefficients=(23.56625,), error_bytes=CUDA_TOTAL_ERROR_BYTES, records=8,
        sources=3, gpus=('RTX3090',),
        novel_error_bytes=CUDA_TOTAL_ERROR_BYTES, feature_sources=(3,),
    ),
    'cuda_total.RTX4090': LinearTerm(
        key='cuda_total.RTX4090', features=('1 GiB',),
        coefficients=(23.5875,), error_bytes=CUDA_TOTAL_ERROR_BYTES, records=4,
        sources=3, gpus=('RTX4090',),
        novel_error_bytes=134217741, feature_sources=(3,),
    ),
    'cuda_total.RTX5060-TI': LinearTerm(
        key='cuda_total.RTX5060-TI', features=('1 GiB',),
        coefficients=(15.485,), error_bytes=CUDA_TOTAL_ERROR_BYTES, records=2,
        sources=2, gpus=('RTX5060-TI',),
        novel_error_bytes=CUDA_TOTAL_ERROR_BYTES, feature_sources=(2,),
    ),
    'cuda_total.RTX5090': LinearTerm(
        key='cuda_total.RTX5090', features=('1 GiB',),
        coefficients=(31.408,), error_bytes=CUDA_TOTAL_ERROR_BYTES, records=10,
        sources=6, gpus=('RTX5090',),
        novel_error_bytes=515396079, feature_sources=(6,),
    ),
    'cuda_total.RTX6000-ADA': LinearTerm(
        key='cuda_total.RTX6000-ADA', features=('1 GiB',),
        coefficients=(47.435,), error_bytes=CUDA_TOTAL_ERROR_BYTES, records=2,
        sources=2, gpus=('RTX6000-ADA',),
        novel_error_bytes=139586488, feature_sources=(2,),
    ),
    'cuda_total.RTXPRO4500': LinearTerm(
        key='cuda_total.RTXPRO4500', features=('1 GiB',),
        coefficients=(31.38,), error_bytes=CUDA_TOTAL_ERROR_BYTES, records=1,
        sources=1, gpus=('RTXPRO4500',),
        novel_error_bytes=CUDA_TOTAL_ERROR_BYTES, feature_sources=(1,),
    ),
    'cuda_total.RTXPRO6000': LinearTerm(
        key='cuda_total.RTXPRO6000', features=('1 GiB',),
        coefficients=(95.002,), error_bytes=CUDA_TOTAL_ERROR_BYTES, records=5,
        sources=3, gpus=('RTXPRO6000',),
        novel_error_bytes=CUDA_TOTAL_ERROR_BYTES, feature_sources=(3,),
    ),
    'cuda_total.T4': LinearTerm(
        key='cuda_total.T4', features=('1 GiB',),
        coefficients=(14.669,), error_bytes=CUDA_TOTAL_ERROR_BYTES, records=10,
        sources=10, gpus=('T4',),
        novel_error_bytes=CUDA_TOTAL_ERROR_BYTES, feature_sources=(10,),
    ),
    'cuda_total.V100': LinearTerm(
        key='cuda_total.V100', features=('1 GiB',),
        coefficients=(15.77,), error_bytes=CUDA_TOTAL_ERROR_BYTES, records=1,
        sources=1, gpus=('V100',),
        novel_error_bytes=CUDA_TOTAL_ERROR_BYTES, feature_sources=(1,),
    ),
    'cuda_total.V100-32GB': LinearTerm(
        key='cuda_total.V100-32GB', features=('1 GiB',),
        coefficients=(31.74,), error_bytes=CUDA_TOTAL_ERROR_BYTES, records=3,
        sources=3, gpus=('V100-32GB',),
        novel_error_bytes=CUDA_TOTAL_ERROR_BYTES, feature_sources=(3,),
    ),
    'cuda_total.gap': LinearTerm(
        key='cuda_total.gap', features=('1 GiB', "100 GiB of nvidia-smi's total"),
        coefficients=(0.360835, 0.220126), error_bytes=198827719, records=30,
        sources=30, gpus=(),
        novel_error_bytes=339433753, feature_sources=(30, 30),
    ),
}  # fmt: skip
# END FITTED


def cuda_total_key(gpu_name: str | None) -> str:
    return KEY_PREFIX + gpu_model_key(gpu_name)


def gap_features(smi_total_bytes: int) -> tuple[float, float]:
    """The gap's feature values for a card of this nvidia-smi total (`GAP_FEATURES`)."""
    return (1.0, smi_total_bytes / GIB / 100)


def _total(value: int, error: int, source: TermSource, basis: str) -> TermEstimate:
    return TermEstimate(term=Term.CUDA_TOTAL, label="GPU memory as CUDA reports it", bytes=value, error_bytes=error,
                        source=source, basis=basis, more_is_more_kv=True)  # fmt: skip


def wsl2_total_estimate(gpu_total_bytes: int) -> TermEstimate:
    """CUDA's total on a WSL2 host: the card's whole memory (nvidia-smi's `gpu_total_bytes`), no Linux driver's
    reserve taken from it (`WSL2_TOTAL_ERROR_BYTES`' sources)."""
    return _total(gpu_total_bytes, WSL2_TOTAL_ERROR_BYTES, "calibrated",
                  "the card's whole memory, nvidia-smi's total: under WSL2 Windows' driver (WDDM) gives CUDA the whole "
                  "card, with no Linux driver's reserve (WSL2 starts on six card models printed it; ± 0.01 GiB)")  # fmt: skip


def cuda_total_estimate(
    gpu_name: str | None, gpu_total_bytes: int, fits: Mapping[str, LinearTerm], *, wsl2: bool = False
) -> TermEstimate:
    """CUDA's total for this GPU model of nvidia-smi's total `gpu_total_bytes` (the table's, or one given for it: a
    memory variant): its fit, else nvidia-smi's total less the usual gap, else (no fit at all) nvidia-smi's total,
    said to be assumed. On a WSL2 host (`wsl2`: `MeasuredInputs.wsl2`) the whole card (`wsl2_total_estimate`),
    whatever the fits; a unified device keeps its own; a MIG slice's NVML total is CUDA's
    (`gpu_variants.is_mig_slice`)."""
    if wsl2 and not is_unified(gpu_name):
        return wsl2_total_estimate(gpu_total_bytes)
    if is_mig_slice(gpu_name):  # a part of a card: its total is CUDA's own, as a limiter's slice (`SLICE_RESERVED_BYTES`)
        return _total(gpu_total_bytes - SLICE_RESERVED_BYTES, WSL2_TOTAL_ERROR_BYTES, "calibrated",
                      f"the MIG slice's own total ({unlisted_board(gpu_name) or gpu_name}): CUDA's total on a MIG slice is its "
                      "NVML total, no driver reserve taken from it (PyTorch's '39.25 GiB total capacity' on a 3g.40gb "
                      "slice nvidia-smi sized 40,192 MiB, search-index id 67654601249; ± 0.01 GiB)")  # fmt: skip
    if is_unified(gpu_name):  # the table's figure is CUDA's own total there (the host's memory, as logs printed it)
        return _total(gpu_total_bytes, UNIFIED_TOTAL_ERROR_BYTES, "calibrated",
                      f"the host's memory as CUDA reports it on the {gpu_model_key(gpu_name)} (unified memory; "
                      "the engines' logs, kvtop/domain/gpus.py; ± 2 GiB: it moves with the OS release)")  # fmt: skip
    # a model's fit holds for its table's card; a larger memory variant of it (`is_larger_variant`) takes the gap below
    fit = fits.get(cuda_total_key(gpu_name)) if gpu_name and not is_larger_variant(gpu_name, gpu_total_bytes) else None
    if fit is not None:
        return _total(fit.predict((1.0,)), fit.error_bytes, "calibrated",
                      f"the mean of {fit.records} logged totals of the {gpu_model_key(gpu_name)}")  # fmt: skip
    gap = fits.get(FALLBACK_KEY)
    if gap is not None:
        features = gap_features(gpu_total_bytes)
        gap_bytes, gap_gib = gap.predict(features), gap.predict_gib(features)
        if is_listed_card(gpu_name):
            which = ("a larger memory variant of the " + gpu_model_key(gpu_name) if is_larger_variant(gpu_name, gpu_total_bytes)
                     else "no log of this GPU in the corpus")  # fmt: skip
            return _total(gpu_total_bytes - gap_bytes, gap.error_bytes, "calibrated",
                          f"nvidia-smi's total less {gib(gap_gib * GIB)} (the gap fitted over {gap.records} GPU models, "
                          f"growing with the total; {which}; ± the miss of each total a GPU model printed, that model "
                          "left out of the gap's fit)")  # fmt: skip
        # no card named, or one the table lacks (named where it is an unlisted board of a listed model: a laptop card):
        # a bare card's gap, or none on a limiter's slice (gpus.py `SLICE_RESERVED_BYTES`): from the gap up to the total
        board = unlisted_board(gpu_name)
        card = f"the {gpu_name} is {board}, which kvtop has no row of" if board else "a card kvtop has no model of"
        return _total(gpu_total_bytes - gap_bytes, max(gap.error_bytes, gap_bytes - SLICE_RESERVED_BYTES), "calibrated",
                      f"the total given less {gib(gap_gib * GIB)} (the gap fitted over {gap.records} GPU models); ± that "
                      f"gap: {card}; it may be a slice whose limiter reports its limit as CUDA's total too (no driver "
                      "reserve)")  # fmt: skip
    return _total(gpu_total_bytes, GIB // 2, "assumed", "nvidia-smi's total (no calibration)")
