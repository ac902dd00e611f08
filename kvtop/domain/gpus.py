"""Memory of common GPUs as the driver reports it (MiB), for plans made away from the GPU.

Figures are `nvidia-smi` totals (nvidia-smi samples in tests/data/samples/nvidia_smi/), not the marketing sizes:
an "80 GB" H100 reports 81,559 MiB = 79.65 GiB.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from kvtop.domain import gpu_variants as variants
from kvtop.domain.errors import InputError
from kvtop.domain.redact import quoted
from kvtop.domain.wording import MIB, gib

GPU_TOTAL_MIB: dict[str, int] = {
    "H100": 81559, "H100-SXM": 81559, "H100-PCIE": 81559, "H100-NVL": 95830,
    "H200": 143771, "H20": 97871, "B200": 183359, "GB200": 189471, "A100-80GB": 81920, "A100": 81920, "A100-40GB": 40960,
    "L40S": 46068, "L40": 46068, "A10": 23028, "L4": 23034, "T4": 15360,
    "RTX4090": 24564, "RTX3090": 24576, "RTX5090": 32607, "V100": 16384, "V100-32GB": 32768,
    # Added in session 49 from public nvidia-smi outputs (`name, memory.total` as NVML names the card; search-index
    # ids of the public files that print it, several per card):
    # 'NVIDIA B300 SXM6 AC, 275040 MiB' (63137115739, 71609078484, 59793277385, 69077680576)
    "B300": 275040,
    # 'NVIDIA GB300, 284208 MiB' on a 4-GPU GB300 NVL72 compute tray (61984871060: '4× NVIDIA GB300, 284208 MiB
    # each, aarch64 Grace host, driver 580.173.02'). NVML names the DGX Station's GB300 the same, 'NVIDIA GB300', but
    # its total is 256,703 MiB (61363111305, 68464188747, 58760980110, 58605965929): a name cannot tell the two
    # apart, so 'GB300' is the rack's and the station is its own key
    "GB300": 284208, "GB300-DGX-STATION": 256703,
    # 'NVIDIA RTX PRO 6000 Blackwell Server Edition, 97887 MiB' (59217273470, 68957989941, 67160152436), the
    # Workstation Edition's (59921022363, 69614756766, 60149069719) and the Max-Q's (56138566301, 65890345886)
    "RTXPRO6000": 97887,
    # 'NVIDIA GH200 480GB, 97871 MiB' (66196318461, 63088167599): the Hopper's own HBM3, not the host's memory
    "GH200": 97871,
    # 'NVIDIA H800, 81559 MiB' (69541153581, 70364788613, 71303046155); 'NVIDIA A800-SXM4-80GB, 81920 MiB'
    # (65942411591, 53255403010, 70380769235, 60651791858)
    "H800": 81559, "A800": 81920, "A800-80GB": 81920,
    # 'NVIDIA L20, 46068 MiB' (68825294295, 68405860367, 58118598918, 55538768276; one host printed 49140 MiB,
    # 52988418300: the card's total without ECC, as the RTX cards below print it by default)
    "L20": 46068,
    # 'NVIDIA RTX A6000, 49140 MiB' (63251812615, 55117514964, 62139467065); 'NVIDIA RTX 6000 Ada Generation,
    # 49140 MiB' (55474634482, 69477610237, 71394619598); 'NVIDIA GeForce RTX 5080' 16303 MiB (47444754202)
    "RTXA6000": 49140, "RTX6000-ADA": 49140, "RTX5080": 16303,
    # Added in session 52 (consumer and workstation cards; `nvidia-smi --query-gpu=name,memory.total` as public files
    # print it, search-index ids; every row in tests/data/samples/nvidia_smi/nvml-names-totals-session52.csv).
    # GeForce and RTX A-series cards print their total without ECC. NVML gives a card's memory variants one name:
    # 'NVIDIA GeForce RTX 3080' is 10,240 MiB (38734978362) or 12,288 (54943028613), 'NVIDIA GeForce RTX 4060 Ti'
    # 8,188 (70128357367) or 16,380 (69389945897): the name reads to the first, the other is its own '-12GB'/'-16GB' key
    "GTX1070": 8192, "GTX1080": 8192, "GTX1080-TI": 11264, "GTX1660-SUPER": 6144,
    "RTX2060": 6144, "RTX2060-SUPER": 8192, "RTX2080": 8192, "RTX2080-SUPER": 8192, "RTX2080-TI": 11264,
    "RTX3060": 12288, "RTX3060-TI": 8192, "RTX3070": 8192, "RTX3080": 10240, "RTX3080-12GB": 12288,
    "RTX3080-TI": 12288, "RTX3090-TI": 24564,
    "RTX4060": 8188, "RTX4060-TI": 8188, "RTX4060-TI-16GB": 16380, "RTX4070": 12282, "RTX4070-SUPER": 12282,
    "RTX4070-TI": 12282, "RTX4070-TI-SUPER": 16376, "RTX4080": 16376, "RTX4080-SUPER": 16376,
    "RTX5060-TI": 16311, "RTX5060-TI-16GB": 16311, "RTX5070": 12227, "RTX5070-TI": 16303,
    "RTXA4000": 16376, "RTXA4500": 20470, "RTXA5000": 24564, "A40": 46068, "A30": 24576,
    # session 55: 'NVIDIA RTX PRO 4500 Blackwell, 32623 MiB' (0xSero/local-ai-registry#56, a RunPod pod) and the
    # Server Edition's 'nvidia-smi reports 32623 MiB' (vllm-project/vllm#51590, a comment of 2026-09-21 on 8 cards)
    "RTXPRO4500": 32623,
    # session 61: 'NVIDIA RTX PRO 4000 Blackwell, 24467 MiB' (nvidia-smi --query-gpu; search-index ids 58724219395,
    # 69887719960, 69530223407, 70333623464, and 59744527679 a RunPod pod). Its SM count is printed nowhere read:
    # `GPU_SMS` leaves it out (the context term that reads SMs is assumed on it)
    "RTXPRO4000": 24467,
    # session 62: 'NVIDIA GeForce GTX 1650, 4096MiB' (torch's device line, search-index id 7073759465), 'GPU: NVIDIA
    # GeForce GTX 1650, 4096 MiB' (63085462638, 56118351903); under WSL2 vLLM read it whole ('Free memory (3.22/4.0
    # GiB)', 59255398861)
    "GTX1650": 4096,
    # session 56: 'NVIDIA RTX 2000 Ada Generation, 16,380 MiB' (nvidia-smi --query-gpu; search-index ids 68330442097,
    # 63453334174, 59906991275, 69106999003; '16380' in 60274483331's fixture of a live printout)
    "RTX2000-ADA": 16380,
    # session 56: the 6 GB RTX 3050 (desktop GA107 and the '6GB Laptop GPU'): 'NVIDIA GeForce RTX 3050 6GB Laptop GPU ·
    # total VRAM 6,144 MB' (search-index id 67621234058), vLLM's 'Free memory on device (5.2/6.0 GiB)' on one
    # (65736513334)
    "RTX3050-6GB": 6144,
    # session 57: AWS's A10G (g5 instances; GA102 like the A10, with 80 SMs): 'NVIDIA A10G, 23028 MiB' (nvidia-smi
    # --query-gpu; search-index ids 27636968701, 57510727102, 66686965076, 62036504885, 71642959660) and a vLLM host's
    # 'GPU: 21,291 MiB / 23,028 MiB' (59672764378)
    "A10G": 23028,
    # session 61: 'NVIDIA TITAN RTX, 24576 MiB, 580.126.16' (nvidia-smi --query-gpu; search-index id 57512902144),
    # '24576MiB' in nvidia-smi's table (61675337436) and 'four NVIDIA TITAN RTX, 24,576 MiB each, compute capability
    # 7.5' (61502112780, driver 570). Drivers of 2019 – 2020 printed 24,189 – 24,219 MiB (18725637244, 850572632,
    # 22462677821) and torch then 'total_memory=24190MB' (6695979587): the table is today's drivers', as the RTX 2080
    # Ti's 11,264 is. NVML's 'NVIDIA TITAN RTX' is the token 'TITAN-RTX'
    "TITAN-RTX": 24576,
    # session 61: the China-market Blackwell 'NVIDIA RTX 6000D, 85651 MiB, 12.0, 595.71.05' (nvidia-smi --query-gpu;
    # search-index id 69755146969), 'NVIDIA RTX 6000D, 85651 MiB, compute_cap 12.0 (sm_120)' (54533173895) and
    # '1× NVIDIA RTX 6000D, 85,651 MiB' (69692609481, vllm.jsonl's 6000D start). Its SM count is printed nowhere
    # read: `GPU_SMS` leaves it out (the context term that reads SMs is assumed on it)
    "RTX6000D": 85651,
    **variants.LAPTOP_TOTAL_MIB, **variants.OTHER_TOTAL_MIB,  # the laptop cards, the H20-3e (`gpu_variants`)
}  # fmt: skip


# Unified-memory devices (integrated GPUs: the GPU's memory is the host's RAM, `is_integrated` in CUDA's device
# properties). There nvidia-smi prints no memory ("Not Supported"), and what CUDA reports as the total is the host's
# memory: the figure here is that total as the engines' logs printed it (MiB; docs/engines/architectures.md
# "Unified-memory hosts"); None where kvtop holds no such log (the plan asks for --gpu-memory). GH200 is not one: its
# Hopper has its own 96 GB of HBM3, which CUDA reports (`is_integrated` false), so it stays a discrete GPU here.
UNIFIED_TOTAL_MIB: dict[str, int | None] = {
    # TensorRT-LLM 1.1.0rc3's `device total memory 119.70 GiB` (case-trtllm-dgxspark-gpt-oss-120b) and vLLM's
    # `Free memory on device (…/119.7 GiB)` on GB10 hosts (search-index ids 51928222181, 54322664375)
    "GB10": 122573, "DGX-SPARK": 122573,
    # vLLM's `Free memory on device (…/122.82 GiB)` on a Jetson host (jtop; search-index ids 18644846838,
    # 19444610832): the 128 GB Jetson AGX Thor, the only Jetson of that size
    "JETSON-THOR": 125768, "JETSON-AGX-THOR": 125768, "THOR": 125768,  # torch's and NVML's name: "NVIDIA Thor"
    "JETSON-AGX-ORIN-64GB": None, "JETSON-AGX-ORIN-32GB": None, "ORIN": None,  # torch's name: "Orin"
    # the Orin boards named without their memory size, and the smaller Orins (the same SM 8.7 integrated GPU)
    "JETSON-AGX-ORIN": None, "JETSON-ORIN-NX": None, "JETSON-ORIN-NANO": None,
}  # fmt: skip


def gpu_total_bytes(name: str) -> int:
    """The driver-reported memory of a GPU model, e.g. 'H100' → 81,559 MiB in bytes; on a unified-memory device,
    the host's memory as CUDA reports it there (`UNIFIED_TOTAL_MIB`)."""
    key = gpu_key(name)
    if key not in GPU_TOTAL_MIB and key not in UNIFIED_TOTAL_MIB:
        # a name by its model token too, as NVML prints it ('NVIDIA B300 SXM6 AC' is the 'B300', 'Jetson Orin NX 16GB'
        # the 'JETSON-ORIN-NX'), as `gpu_model_key` and `is_unified` read it
        key = _known_model(_model_token(name), (*GPU_TOTAL_MIB, *UNIFIED_TOTAL_MIB)) or key
    unified_key = key if key in UNIFIED_TOTAL_MIB else None
    if unified_key is not None:
        unified = UNIFIED_TOTAL_MIB[unified_key]
        if unified is None:
            raise InputError(
                f"{name!r} is a unified-memory device whose total kvtop has no log of: give --gpu-memory SIZE "
                "(the host's memory as CUDA reports it, e.g. vLLM's 'Free memory on device (F/T GiB)' T)",
                field="--gpu",
            )
        return unified * MIB
    if key not in GPU_TOTAL_MIB:
        board = unlisted_board(name)
        if board is not None:
            raise InputError(f"no row for {quoted(name, 48)}: {board}; give --gpu-memory SIZE (CUDA's total of this "
                             f"{'slice' if variants.is_mig_slice(name) else 'card'}: an engine log's 'Free memory on device (F/T GiB)' T)", field="--gpu")  # fmt: skip
        ask = f"did you mean {', '.join(near)}? " if (near := nearest_gpus(name)) else ""  # none near: no guess
        raise InputError(f"unknown GPU {quoted(name)} ({ask}`{LIST_GPUS}` lists the {len(known_gpus())} "
                         "kvtop knows; or give --gpu-memory SIZE)", field="--gpu")  # fmt: skip
    return GPU_TOTAL_MIB[key] * MIB


def unlisted_board(name: str | None) -> str | None:
    """What a name is where it names a board of a listed model that kvtop has no row for ('RTX 4090 Laptop GPU': 'a
    Laptop board of the RTX4090, not its row's 24,564 MiB card'), said by name in place of that row; None otherwise."""
    token = _model_token(name or "")
    if not name or _known_model(token, (*GPU_TOTAL_MIB, *UNIFIED_TOTAL_MIB)) is not None:
        return None
    model = _known_model(variants.without_board(token), GPU_TOTAL_MIB)
    board = variants.other_board(token[len(model) + 1 :], model, GPU_TOTAL_MIB) if model else None
    if model is None or board is None:
        return variants.unknown_word_said(name, token, GPU_TOTAL_MIB)  # 'RTX 4090 Laptp': the word it cannot read
    return f"a {board} of the {model}, not its row's {GPU_TOTAL_MIB[model]:,} MiB card"


LIST_GPUS = "kvtop plan --list-gpus"  # the command that prints `known_gpus` (kvtop/commands/common.py)


def known_gpus() -> tuple[str, ...]:
    """Every name `--gpu` takes, discrete cards first, then unified-memory devices."""
    return (*GPU_TOTAL_MIB, *UNIFIED_TOTAL_MIB)


def nearest_gpus(name: str, count: int = 3) -> tuple[str, ...]:
    """The known names nearest an unknown one: those holding the number typed ('RTX 6000' may be the RTX PRO 6000,
    RTX A6000 or RTX 6000 Ada), else up to `count` close spellings (difflib's ratio ≥ 0.5; none where none is near)."""
    known = known_gpus()
    number = _model_token(name).removeprefix("RTX")
    near = [model for model in known if number and number in model]
    if near:
        return tuple(near)
    return tuple(difflib.get_close_matches(gpu_key(name), known, n=count, cutoff=0.5))


def gpu_listing() -> str:
    """`--list-gpus`: each name `--gpu` takes with the total kvtop plans it with (nvidia-smi's MiB; GiB beside)."""
    rows = [f"  {name:<24} {mib:>9,} MiB  ({gib(mib * MIB)})" for name, mib in GPU_TOTAL_MIB.items()]
    unified = [f"  {name:<24} {mib:>9,} MiB  ({gib(mib * MIB)}, the host's memory as CUDA reports it)"
               if mib is not None else f"  {name:<24} {'':>13}  (unified memory: give --gpu-memory SIZE)"
               for name, mib in UNIFIED_TOTAL_MIB.items()]  # fmt: skip
    return "\n".join(["GPUs kvtop knows (--gpu NAME; nvidia-smi's total):", *rows,
                      "Unified-memory devices:", *unified])  # fmt: skip


# A total kvtop has no card of (no --gpu, or a model the table lacks: `is_listed_card`) may be a slice of a card that
# a software limiter shares out, as the Kubernetes vGPU schedulers do: HAMi-core (github.com/Project-HAMi/HAMi-core)
# reports its limit as NVML's total (src/nvml/hook.c `_nvmlDeviceGetMemoryInfo`: `total = limit`) and as CUDA's
# (src/cuda/memory.c `cuMemGetInfo_v2`: `total = min(limit, the card's)`), so there nvidia-smi's total IS CUDA's:
# the driver's reserve is outside the slice. LMDeploy v0.1.0 on such a slice ('A100 (1/4)', 20,470 MiB to vgpu-smi)
# sized 159 blocks from CUDA's total, which puts that total in [20,352, 20,480) MiB: at most 118 MiB under vgpu-smi's
# (tests/data/cases/lmdeploy/lmdeploy-tutorial-v010-internlm-chat-7b-vgpu)
SLICE_RESERVED_BYTES = 0


@lru_cache(maxsize=1024)
def is_listed_card(name: str | None) -> bool:
    """Whether a name is a whole card of `GPU_TOTAL_MIB` (nvidia-smi's total of a bare card, the driver's reserve
    inside it); False without a name or for one the table lacks, whose total may be a slice's (`SLICE_RESERVED_BYTES`)."""
    token = _model_token(name or "")
    unhyphened = {model.replace("-", "") for model in GPU_TOTAL_MIB}  # 'RTX6000ADA' is the 'RTX6000-ADA'
    return bool(name) and (_known_model(token, GPU_TOTAL_MIB) is not None or token.replace("-", "") in unhyphened)


# A total given for a named card above its table figure by more than this part is a larger memory variant of the model
# (an RTX 2060 of 12 GB against the table's 6, a memory-modified 22 GB RTX 2080 Ti against 11): variants differ by a
# factor of 1.5 or more, one card's totals by its ECC or a typed unit (< 5 %). A smaller total is not read as one: a
# slice (MIG, a vGPU, a limiter) is smaller than its card too, and reports its limit as CUDA's total
VARIANT_TOLERANCE = 0.05


def is_larger_variant(name: str | None, total_bytes: int) -> bool:
    """Whether `total_bytes` names a larger memory variant of the card `name` than the table's (`GPU_TOTAL_MIB`): above
    its figure by more than `VARIANT_TOLERANCE`, which no slice of it can be. False for a name the table lacks."""
    listed = GPU_TOTAL_MIB.get(gpu_model_key(name)) if name else None
    return listed is not None and total_bytes > (1 + VARIANT_TOLERANCE) * listed * MIB


@lru_cache(maxsize=1024)
def is_unified(name: str | None) -> bool:
    """Whether a GPU model shares the host's memory (a unified-memory device: GB10, Jetson), by name or NVML name
    (cached as `gpu_model_key` is)."""
    return bool(name) and _known_model(_model_token(name or ""), UNIFIED_TOTAL_MIB) is not None


@dataclass(frozen=True)
class CapabilityFamily:
    """GPUs by CUDA compute-capability major, as an engine's own check reads `torch.cuda.get_device_capability()`
    (never a list of card names: 'NVIDIA B300 SXM6 AC' and 'GB300-DGX-STATION' are read through `GPU_CAPABILITY`).
    Majors `first_major` … `last_major`, or every newer one where `last_major` is None."""

    label: str
    first_major: int
    last_major: int | None

    def holds(self, gpu_name: str | None) -> bool:
        """Whether the GPU is of this family; False for a GPU whose capability kvtop does not know."""
        capability = compute_capability(gpu_name)
        if capability is None:
            return False
        return capability[0] >= self.first_major and (self.last_major is None or capability[0] <= self.last_major)

    @classmethod
    def none(cls) -> CapabilityFamily:
        """The family that holds no GPU (its first major above its last): a GPU-gated rule off on every GPU."""
        return cls("no GPU", 1, 0)

    @classmethod
    def below(cls, major: int) -> CapabilityFamily:
        """The GPUs of a compute-capability major below `major` (sm80: Pascal, Volta, Turing, no bf16); none at 0."""
        return cls(f"below SM{major}0", 0, major - 1) if major > 0 else cls.none()

    @classmethod
    def of_majors(cls, majors: frozenset[int]) -> CapabilityFamily:
        """The GPUs of these consecutive compute-capability majors ({9}: SM90, Hopper); none where the set is empty."""
        if not majors:
            return cls.none()
        first, last = min(majors), max(majors)
        if len(majors) != last - first + 1:
            raise ValueError(f"not consecutive capability majors: {sorted(majors)}")
        return cls(f"SM{first}0" if first == last else f"SM{first}0–SM{last}0", first, last)


# Capability major 10 (B200, GB200: 10.0; B300, GB300, the DGX Station's GB300: 10.3), not SM120 (RTX PRO 6000,
# RTX 5090): SGLang's `is_sm100_supported` (python/sglang/srt/utils/common.py:177-182 at v0.5.3, :244-249 at v0.5.6,
# :258-262 at v0.5.9; `get_platform().is_sm100`, :309-313 at v0.5.23), which its SM100 defaults read
SM100 = CapabilityFamily("SM100", 10, 10)
# Capability major 9 and newer (Hopper, Blackwell's SM100 and SM120): LMDeploy's `flash_mla_available`, FlashMLA
# where installed (lmdeploy/pytorch/configurations/utils.py: `torch.cuda.get_device_properties(0).major >= 9`)
SM90_AND_NEWER = CapabilityFamily("SM90+", 9, None)
NO_GPU = CapabilityFamily.none()  # holds no GPU: a rule off on every GPU

# Capability major 10 and newer (SM100, SM103, SM120 and SM121 alike): SGLang's `auto` KV for a DeepSeek DSA model reads
# `torch.cuda.get_device_capability()` as `fp8_e4m3 if major >= 10 else "bfloat16"` (server_args.py inline at the
# first DSA releases, `_set_default_nsa_kv_cache_dtype` later, the arg_groups DSA view at 0.5.2x)
SM100_AND_NEWER = CapabilityFamily("SM100+", 10, None)

# GPU models whose servers join the GPUs with NVLink (SXM boards; the A100 names are taken as SXM4): the
# engines' custom all-reduce maps peer buffers on each rank there, and not across more than two PCIe cards nor
# GeForce ones (no peer access, or not every pair linked), so what a start takes before its weights grows with TP
# there (two PCIe data-centre cards, 2 x L40S, run it without that growth: vllm calibration_non_torch.py).
# a Grace-Blackwell NVL72 compute tray holds 4 GPUs: one node to NCCL / get_node_count (the engines' all-reduce
# workspaces are per node); kvtop assumes it where the launch does not say
GRACE_TRAY_GPUS: dict[str, int] = {"GB200": 4, "GB300": 4}
NVLINK_GPUS = frozenset({
    "H100", "H100-SXM", "H200", "H20", "H800", "GH200", "A100", "A100-80GB", "A100-40GB", "A800",
    "B200", "GB200", "B300", "GB300", "H20-3E",
})  # fmt: skip

# CUDA compute capability (major, minor) of GPU models by name: engines choose attention kernels, KV formats
# and weight kernels by it (vLLM: `current_platform.get_device_capability()`). Names as `--gpu` takes them;
# an NVML name ("NVIDIA H100 80GB HBM3", "NVIDIA GeForce RTX 4090") is read by its model token.
GPU_CAPABILITY: dict[str, tuple[int, int]] = {
    "V100": (7, 0), "T4": (7, 5), "A100": (8, 0), "A10": (8, 6), "RTX3090": (8, 6),
    "L40S": (8, 9), "L40": (8, 9), "L4": (8, 9), "RTX4090": (8, 9),
    "H100": (9, 0), "H200": (9, 0), "H20": (9, 0), "H800": (9, 0), "GH200": (9, 0),
    "B200": (10, 0), "GB200": (10, 0), "B300": (10, 3), "GB300": (10, 3), "RTX5090": (12, 0),
    # session 49, from public printouts (search-index ids): B300 'NVIDIA B300 SXM6 AC, 275040 MiB, 10.3' (59793277385),
    # GB300 'NVIDIA GB300, capability (10, 3)' (66710795876) and the DGX Station's 'compute capability 10.3'
    # (61363111305, the 'GB300-DGX-STATION' by its prefix), RTX PRO 6000 Blackwell '97887 MiB, compute cap 12.0'
    # (69692196936, 57912918456), RTX 6000 Ada 'compute capability (8,9)' (71394619598); the A800 is the A100's
    # GA100 (8.0), the L20 and RTX A6000 as NVIDIA's CUDA GPU list has them (Ada 8.9, GA102 8.6), the RTX 5080 12.0
    "RTXPRO6000": (12, 0), "RTX5080": (12, 0), "A800": (8, 0), "L20": (8, 9), "RTXA6000": (8, 6), "RTX6000-ADA": (8, 9),
    # session 52: as NVIDIA's CUDA GPU list has them (Pascal GP10x 6.1, Turing TU10x 7.5, GA102/GA104/GA106 8.6, GA100
    # 8.0, Ada AD10x 8.9, Blackwell GB20x 12.0) and as the session-52 printouts state them where they print one
    "GTX1070": (6, 1), "GTX1080": (6, 1), "GTX1080-TI": (6, 1), "GTX1660-SUPER": (7, 5), "RTX2060": (7, 5),
    "RTX2060-SUPER": (7, 5), "RTX2080": (7, 5), "RTX2080-SUPER": (7, 5), "RTX2080-TI": (7, 5), "RTX3060": (8, 6),
    "RTX3060-TI": (8, 6), "RTX3070": (8, 6), "RTX3080": (8, 6), "RTX3080-TI": (8, 6), "RTX3090-TI": (8, 6),
    "RTX4060": (8, 9), "RTX4060-TI": (8, 9), "RTX4070": (8, 9), "RTX4070-SUPER": (8, 9), "RTX4070-TI": (8, 9),
    "RTX4070-TI-SUPER": (8, 9), "RTX4080": (8, 9), "RTX4080-SUPER": (8, 9), "RTX5060-TI": (12, 0),
    "RTX5070": (12, 0), "RTX5070-TI": (12, 0), "RTXA4000": (8, 6), "RTXA4500": (8, 6), "RTXA5000": (8, 6),
    "A40": (8, 6), "A30": (8, 0),
    # session 55: the RTX PRO 4500 Blackwell Server Edition's 'compute capability 12.0' (vllm-project/vllm#51590)
    "RTXPRO4500": (12, 0),
    # session 61: the RTX PRO 4000 Blackwell's 'compute capability 12.0' (69887719960) and '12.0 (`sm_120`)' (69530223407)
    "RTXPRO4000": (12, 0),
    # session 62: the GTX 1650's 'TU117, compute capability 7.5, no tensor cores' (search-index id 66719803893)
    "GTX1650": (7, 5),
    # session 61: the TITAN RTX's 'compute capability 7.5' (61502112780), the RTX 6000D's '12.0' (69755146969)
    "TITAN-RTX": (7, 5), "RTX6000D": (12, 0),
    # session 56: the RTX 2000 Ada's 'NVIDIA RTX 2000 Ada Generation (sm_89)' (search-index id 57504630391); AD107, as
    # NVIDIA's CUDA GPU list has the Ada cards (8.9)
    "RTX2000-ADA": (8, 9),
    # session 56: GA107, 'NVIDIA GeForce RTX 3050 6GB Laptop GPU (`sm_86`)' (search-index id 70416756008)
    "RTX3050-6GB": (8, 6),
    # session 57: the A10G's 'A10G (80 SMs, sm_86)' (search-index id 53246938969): GA102, as NVIDIA's CUDA GPU list has it
    "A10G": (8, 6),
    # unified-memory devices, as vLLM v0.13.0's `MemorySnapshot.measure` lists them (Orin, Thor, Spark)
    "JETSON-AGX-ORIN-64GB": (8, 7), "JETSON-AGX-ORIN-32GB": (8, 7), "JETSON-AGX-ORIN": (8, 7),
    "JETSON-ORIN-NX": (8, 7), "JETSON-ORIN-NANO": (8, 7), "JETSON-THOR": (11, 0),
    "JETSON-AGX-THOR": (11, 0), "THOR": (11, 0), "ORIN": (8, 7), "GB10": (12, 1), "DGX-SPARK": (12, 1),
    **variants.LAPTOP_CAPABILITY, **variants.OTHER_CAPABILITY,  # the laptop cards, the H20-3e (`gpu_variants`)
}  # fmt: skip


# Streaming multiprocessors per GPU model (NVIDIA's datasheets and whitepapers; the H100 names are the SXM5 board's
# 132, the PCIe board's 114): engines size per-SM buffers by it (vLLM: `num_compute_units`, torch's
# `multi_processor_count`). A model left out here is unknown: what scales with it is not counted.
GPU_SMS: dict[str, int] = {
    "V100": 80, "V100-32GB": 80, "T4": 40, "A100": 108, "A100-80GB": 108, "A100-40GB": 108, "A800": 108,
    "A10": 72, "RTX3090": 82, "L40S": 142, "L40": 142, "L4": 58, "RTX4090": 128,
    "H100": 132, "H100-SXM": 132, "H100-PCIE": 114, "H100-NVL": 132, "H200": 132, "H800": 132, "GH200": 132,
    "H20": 78, "B200": 148, "GB200": 148, "RTX5090": 170,
    # session 49: B300 '(148 SMs, sm_103a)' from cudaGetDeviceProperties (66621682701, 66517663417), GB300 '(148 SMs)'
    # in an ncu run (55045193635; the DGX Station's count is not known: no 'GB300-DGX-STATION' here, it reads as
    # the GB300's by prefix), RTX PRO 6000 Blackwell '188 SMs per GPU, cc 12.0' (60105129015, 60789444590), RTX 6000
    # Ada '142 SMs ... CC 8.9' (41092802240); the RTX A6000's 10,752 and RTX 5080's 10,752 CUDA cores are 84 SMs of
    # 128 (NVIDIA's datasheets)
    "B300": 148, "GB300": 148, "RTXPRO6000": 188, "RTX6000-ADA": 142, "RTXA6000": 84, "RTX5080": 84,
    # session 52: NVIDIA's spec pages' CUDA cores ÷ the cores of one SM (128 on Pascal GP10x, Ampere GA10x, Ada and
    # Blackwell; 64 on Turing and on GA100's FP32 count), checked against printouts where they state SMs (RTX 4060
    # '24 SM', 60397801870; RTX 4060 Ti '34 multiprocessors', 71436958038; RTX 4070 SUPER '56 SMs (7168 cores / 128)',
    # 54952659262). A memory variant keyed apart is the same chip (by prefix) except the 3080 12GB (8,960 cores)
    "GTX1070": 15, "GTX1080": 20, "GTX1080-TI": 28, "GTX1660-SUPER": 22, "RTX2060": 30, "RTX2060-SUPER": 34,
    "GTX1650": 14,  # session 62: NVIDIA's spec page's 896 CUDA cores ÷ 64 (Turing)
    "RTX2080": 46, "RTX2080-SUPER": 48, "RTX2080-TI": 68, "RTX3060": 28, "RTX3060-TI": 38, "RTX3070": 46,
    "RTX3080": 68, "RTX3080-12GB": 70, "RTX3080-TI": 80, "RTX3090-TI": 84, "RTX4060": 24, "RTX4060-TI": 34,
    "RTX4070": 46, "RTX4070-SUPER": 56, "RTX4070-TI": 60, "RTX4070-TI-SUPER": 66, "RTX4080": 76, "RTX4080-SUPER": 80,
    "RTX5060-TI": 36, "RTX5070": 48, "RTX5070-TI": 70, "RTXA4000": 48, "RTXA4500": 56, "RTXA5000": 64, "A40": 84,
    "A30": 56,
    # session 56: the RTX 2000 Ada's 2,816 CUDA cores (NVIDIA's datasheet) are 22 SMs of 128
    "RTX2000-ADA": 22,
    # session 57: 'A10G (80 SMs, 23.7 GiB) = the SAME GA102/80-SM arch' and 'A10G (80 SMs, sm_86)' (search-index ids
    # 55444537300, 53246938969, 57680581757)
    "A10G": 80,
    # session 61: 'Titan RTX (72 SMs, 24 GB, 672 GB/s)' and 'Full TU102 = 72 SMs' (search-index id 58289094730); its
    # 4,608 CUDA cores (a TU102 table, 49011248483) are 72 SMs of Turing's 64
    "TITAN-RTX": 72,
    **variants.LAPTOP_SMS, **variants.OTHER_SMS,  # the laptop cards, the H20-3e (`gpu_variants`)
}  # fmt: skip


# The most threads one SM holds resident, by compute capability (CUDA C++ Programming Guide, "Technical Specifications
# per Compute Capability", row "Maximum number of resident threads per SM"; torch's `max_threads_per_multi_processor`):
# 2048 on the data-centre chips (and Pascal, Volta), 1536 on GA10x, Ada and consumer Blackwell, 1024 on Turing. A CUDA
# context reserves every resident thread's stack (`resident_threads`). A capability left out is unknown (Orin's 8.7,
# Thor's 11.0: unified-memory devices, whose SMs `GPU_SMS` does not hold either).
MAX_THREADS_PER_SM: dict[tuple[int, int], int] = {
    (6, 0): 2048, (6, 1): 2048, (7, 0): 2048, (7, 5): 1024, (8, 0): 2048, (8, 6): 1536, (8, 9): 1536,
    (9, 0): 2048, (10, 0): 2048, (10, 3): 2048, (12, 0): 1536, (12, 1): 1536,
}  # fmt: skip

# The workstation cards as operators and public threads write them, read to the table's keys (regex on the model
# token, first match wins; `(?=-|$)` ends the number, so 'PRO 6000D', an 84 GB China card, is not the RTX PRO 6000). Sources
# (URL or search-index id): 'Quadro A4000(16GB VRAM)' (NVIDIA/TensorRT-LLM#1188, trtllm.jsonl's 'A4000'); 'My GPU is
# A6000' with torch's '47.53 GiB total capacity' (allenai/open-instruct#163); '2x A5000 (SM 8.6)' (55895336877); 'A6000
# Ada' (1390724130, 32669552730), 'RTX A6000 Ada' (58593744030), 'NVIDIA RTX A6000 ADA' (9942704176) and a name map's
# '"A6000 Ada": "RTX 6000Ada"' (24622200256): the Ada card, not the Ampere RTX A6000 (8.6, 84 SMs against 8.9, 142);
# vllm.jsonl's 'RTX6000Ada'; 'RTX 6000 PRO Blackwell' (7254390752), 'RTX 6000 Pro Blackwell' (66425332922), 'NVIDIA
# RTX 6000 Pro' (44065675637). A bare '6000' or 'RTX 6000' (also the Turing Quadro RTX 6000) is none of them.
_WORKSTATION_SPELLINGS: tuple[tuple[str, str], ...] = (
    (r"^(RTX)?A?6000-?ADA(?=-|$)", "RTX6000-ADA"),  # 'A6000 Ada', 'RTX A6000 Ada', '6000 Ada', 'RTX6000Ada'
    (r"^(RTX)?(PRO-?6000|6000-?PRO)(?=-|$)", "RTXPRO6000"),  # 'PRO 6000', 'RTX 6000 Pro'
    (r"^A(4000|4500|5000|6000)(?=-|$)", r"RTXA\1"),  # 'A4000', 'Quadro A5000', 'A6000'
    # NVML's 'NVIDIA RTX 6000D' and the 'RTX PRO 6000D' operators write (70206916871, 68498160715): one 84 GB card
    (r"^(RTX)?(PRO-?)?6000D(?=-|$)", "RTX6000D"),
)


# Cached (here and below): a pure function of a name (a str, hashable) and this module's constant tables, asked per
# plan by every term that reads the GPU (≈ 25,000 times in a calibration judgement, each scanning a table).
@lru_cache(maxsize=1024)
def _model_token(name: str) -> str:
    """A name's model token: 'NVIDIA GeForce RTX 4090' → 'RTX4090', 'NVIDIA RTX PRO 6000 Blackwell Server Edition'
    → 'RTXPRO6000-BLACKWELL-SERVER-EDITION' (the 'RTXPRO6000' by its prefix), 'A6000' → 'RTXA6000',
    'V100 32 GB' → 'V100-32GB'."""
    key = name.upper().replace(" ", "-").replace("_", "-")
    for prefix in ("NVIDIA-", "TESLA-", "GEFORCE-", "QUADRO-"):
        key = key.removeprefix(prefix)
    key = key.replace("RTX-PRO-", "RTXPRO").replace("RTX-", "RTX").replace("GTX-", "GTX")
    # a memory size as people write it, '32 GB' or '80G', is the tables' '32GB': read as a board word, 'V100 32 GB'
    # was the 16 GB V100 and 'A100-40G' the 80 GB A100 (lmdeploy cases '4x V100 32 GB', '8 x A800-80G')
    key = re.sub(r"(?<=-)(\d+)-?G(B)?(?=-|$)", r"\1GB", key)
    for spelling, model in (*_WORKSTATION_SPELLINGS, *variants.SPELLINGS):
        key = re.sub(spelling, model, key)
    # a variant written onto the number ('RTX5060Ti', '4070TiSuper', as records and operators write it): NVML's words
    return re.sub(
        r"(?<=\d)(TI)?(SUPER)?(?=-|$)", lambda m: "".join(f"-{part}" for part in m.groups() if part), key
    )


def _names_model(key: str, model: str) -> bool:
    """Whether a name's token stands for a model of the tables: the model itself, the model with board words after it
    ('H100-SXM5'), or a sized model with them between ('A100-SXM4-80GB' is the 'A100-80GB'); never through words of
    another board or unknown ones ('RTX5090-LAPTOP-GPU', 'RTX4090-LAPTP': `gpu_variants.other_board`, `unknown_word`)."""
    if key == model:
        return True
    if key.startswith(model + "-"):
        return variants.other_board(key[len(model) + 1 :], model, GPU_TOTAL_MIB) is None
    base, _, size = model.rpartition("-")
    between = key.startswith(base + "-") and key.endswith("-" + size) and key[len(base) + 1 : -len(size) - 1]
    return bool(base) and size.endswith("GB") and bool(between) and variants.unknown_word(str(between)) is None


def _known_model(key: str, known: Iterable[str]) -> str | None:
    found = [model for model in known if _names_model(key, model)]
    return max(found, key=len) if found else None


@lru_cache(maxsize=1024)  # pure and cached, as `_model_token`
def compute_capability(name: str | None) -> tuple[int, int] | None:
    """The compute capability of a GPU model by name ('A100-80GB' → (8, 0)); None when the name is unknown."""
    if not name:
        return None
    token = _model_token(name)
    # an unlisted board of a model number ('RTX 4090 Laptop GPU') is of its architecture: read less its board words
    known = _known_model(token, GPU_CAPABILITY) or _known_model(variants.without_board(token), GPU_CAPABILITY)
    return GPU_CAPABILITY[known] if known else None


@lru_cache(maxsize=1024)
def gpu_model_key(name: str | None) -> str:
    """The GPU model a name stands for, as kvtop's tables key it: an NVML name ('NVIDIA H100 80GB HBM3',
    'NVIDIA GeForce RTX 4090') by its model token ('H100', 'RTX4090'); a name no table knows as `gpu_key`.
    Cached: a pure function of the name and this module's constant tables, which a calibration judgement asks
    ≈ 100,000 times (each scanning every table)."""
    if not name:
        return ""
    token = _model_token(name)
    return _known_model(token, (*GPU_TOTAL_MIB, *UNIFIED_TOTAL_MIB, *GPU_CAPABILITY)) or gpu_key(name)


@lru_cache(maxsize=1024)  # pure and cached, as `_model_token`
def gpu_key(name: str | None) -> str:
    """A GPU name as the tables above spell it: 'b200' → 'B200', 'H100 SXM' → 'H100-SXM'; a whole name that is
    another spelling of a listed card, its key ('A4000' → 'RTXA4000', 'RTX6000Ada' → 'RTX6000-ADA', 'NVIDIA B200'
    → 'B200'), so that a lookup by key reads it as `gpu_total_bytes` does. No prefix reading: 'H100 80GB HBM3' stays
    itself (`gpu_model_key` reads it)."""
    token = _model_token(name or "")
    if token in GPU_TOTAL_MIB or token in UNIFIED_TOTAL_MIB:
        return token
    return (name or "").upper().replace(" ", "-").replace("_", "-")


def gpu_capability(name: str | None) -> int | None:
    """The compute capability as engines compare it with a format's minimum (major × 10 + minor:
    H100 → 90, B200 → 100), from `compute_capability`; None for a name kvtop does not know."""
    found = compute_capability(name)
    return None if found is None else found[0] * 10 + found[1]


@lru_cache(maxsize=1024)  # pure and cached, as `_model_token`
def sm_count(name: str | None) -> int | None:
    """The streaming multiprocessors of a GPU model by name (`GPU_SMS`: 'H100' → 132); None when unknown."""
    if not name:
        return None
    known = _known_model(_model_token(name), GPU_SMS)
    return GPU_SMS[known] if known else None


@lru_cache(maxsize=1024)  # pure and cached, as `_model_token`: read per plan by the context terms
def resident_threads(name: str | None) -> int | None:
    """The threads a GPU model holds resident at once: its SMs × the most threads one SM holds (`MAX_THREADS_PER_SM`
    by its compute capability): 'H100' → 132 × 2048 = 270,336, 'L40S' → 142 × 1536 = 218,112. What a CUDA context
    reserves for the threads' stacks grows with it (CUDA driver API, cuCtxSetLimit CU_LIMIT_STACK_SIZE: the stack
    of each GPU thread). None where the SM count or the capability is unknown."""
    sms, capability = sm_count(name), compute_capability(name)
    per_sm = MAX_THREADS_PER_SM.get(capability) if capability is not None else None
    return None if sms is None or per_sm is None else sms * per_sm
