"""The boards a card's model number also names (laptop cards, Max-Q designs, other memory sizes, MIG slices): their own
rows where kvtop holds them, else a named refusal, never the whole or desktop card's row read through the name's prefix.
Why: NVML's 'NVIDIA GeForce RTX 5090 Laptop GPU' (24 GB, GB203) read as the 32 GB desktop RTX 5090 planned 37 % too
much KV (#27, session 63). Split from `gpus`, whose tables merge these rows.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

# The laptop cards kvtop holds, by nvidia-smi's total (MiB), as `gpus.GPU_TOTAL_MIB` keys them
LAPTOP_TOTAL_MIB: dict[str, int] = {
    # session 58: the 4 GB RTX 3050 laptop card (GA107; NVML's 'NVIDIA GeForce RTX 3050 Laptop GPU', no size in the
    # name): 'NVIDIA GeForce RTX 3050 Laptop GPU, 4096 MiB' (nvidia-smi --query-gpu; search-index ids 66301028439,
    # 70940246336, 69398712653, 58578691390, 57442593401). Not the desktop RTX 3050 (8 GB, GA106), nor the 3050 Ti
    # laptop card (20 SMs), nor the '6GB Laptop GPU' (RTX3050-6GB): each stays its own name
    "RTX3050-LAPTOP": 4096,
    # session 63: the 8 GB RTX 4070 laptop card (AD106; NVML 'NVIDIA GeForce RTX 4070 Laptop GPU'): '8,188 MiB reported by
    # `nvidia-smi`' (search-index id 63151070773), 'vram_total_mb' 8188 (Sanssssssssssssssss/vllm-infra-lab's rows)
    "RTX4070-LAPTOP": 8188,
    # session 63: the 12 GB RTX 4080 laptop card (AD104): 'NVIDIA GeForce RTX 4080 Laptop, 12,282 MiB' (a vLLM study's
    # environment table, search-index ids 69415599131 / 69701526975) and vLLM's 'Free memory on device cuda:0
    # (10.79/11.99 GiB)' there under WSL2 (the whole card: 12,282 MiB = 11.99 GiB)
    "RTX4080-LAPTOP": 12282,
    # session 63: the 24 GB RTX 5090 laptop card (GB203): nvidia-smi's 'NVIDIA GeForce RTX 5090 ... | 766MiB / 24463MiB'
    # under 'GPU Info: Nvidia 5090 laptop' beside a vLLM 0.18.1.dev0 start on a Lenovo Legion (search-index id 67306615881)
    "RTX5090-LAPTOP": 24463,
}

# Other boards of a data-centre model number, by nvidia-smi's total (MiB). The H20-3e is the H20's 141 GB HBM3e board (the
# H20 row is the 96 GB HBM3 one, 97,871 MiB): nvidia-smi's 'NVIDIA H20-3e, 143771 MiB, 590.48.01' (search-index id
# 56324297938), 'NVIDIA H20-3e, 143771 MiB, driver 570.133.20' (61437380984), '8 x NVIDIA H20-3e, 143771 MiB each |
# ... SM90a, 78 SM per GPU' (60976242793)
OTHER_TOTAL_MIB: dict[str, int] = {"H20-3E": 143771}
# Its capability and SMs: 'SM90a, 78 SM per GPU' (60976242793), '"device": "NVIDIA H20-3e", "compute_capability": (9, 0),
# "sm_count": 78' (65832400105): the H20's GH100 with its 78 SMs
OTHER_CAPABILITY: dict[str, tuple[int, int]] = {"H20-3E": (9, 0)}
OTHER_SMS: dict[str, int] = {"H20-3E": 78}

# Their compute capability (NVIDIA's CUDA GPU list: GA10x 8.6, Ada 8.9, consumer Blackwell 12.0) as printouts state it
LAPTOP_CAPABILITY: dict[str, tuple[int, int]] = {
    # 'NVIDIA GeForce RTX 3050 Laptop GPU (16 SMs, compute capability 8.6)' (search-index id 54700343983)
    "RTX3050-LAPTOP": (8, 6),
    # 'NVIDIA GeForce RTX 4070 Laptop GPU, compute capability 8.9' (search-index ids 63151070773, 68711858341)
    "RTX4070-LAPTOP": (8, 9),
    # the RTX 4080 laptop card's FP8 GEMM 'cutlass::Kernel2<enable_sm89_to_sm90<…>>' (vLLM 0.23.0's sm89 kernels,
    # search-index id 69415599131); the RTX 5090 laptop card's GB203 is consumer Blackwell, 12.0 (NVIDIA's CUDA GPU list)
    "RTX4080-LAPTOP": (8, 9), "RTX5090-LAPTOP": (12, 0),
}  # fmt: skip

# Their SMs as CUDA's device properties print them; a card left out is unknown (what scales with SMs is not counted)
LAPTOP_SMS: dict[str, int] = {
    # 'NVIDIA GeForce RTX 3050 Laptop GPU (16 SMs, 4.0 GiB)' (search-index ids 68998871265, 69331096017), '(16 SMs,
    # compute capability 8.6)' (54700343983); its 2,048 CUDA cores are 16 SMs of 128 (a spec listing of the GA107
    # laptop card, https://bithardware.top/nvidia-rtx-3050-mobile-its-specifications-revealed/)
    "RTX3050-LAPTOP": 16,
    "RTX4070-LAPTOP": 36,  # 'RTX 4070 Laptop GPU (36 SMs, sm_89)' (search-index id 60826839834)
}

# The laptop cards as operators and spec pages write them ('RTX 3050 Mobile', 'RTX 3050 4GB Laptop GPU'), read to
# their keys (regex on the model token, as `gpus._WORKSTATION_SPELLINGS`); the '6GB Laptop GPU' (its size first) and
# the 'RTX 3050 Ti Laptop GPU' (20 SMs) match nothing here and keep their own names
LAPTOP_SPELLINGS: tuple[tuple[str, str], ...] = (
    (r"^RTX3050-(4GB-)?(LAPTOP|MOBILE)(?=-|$)", "RTX3050-LAPTOP"),
    (r"^RTX4070-(8GB-)?(LAPTOP|MOBILE)(?=-|$)", "RTX4070-LAPTOP"),  # not the desktop RTX 4070 (12 GB, 46 SMs)
    (r"^RTX4080-(12GB-)?(LAPTOP|MOBILE)(?=-|$)", "RTX4080-LAPTOP"),  # not the desktop RTX 4080 (16 GB, 76 SMs)
    (r"^RTX5090-(24GB-)?(LAPTOP|MOBILE)(?=-|$)", "RTX5090-LAPTOP"),  # not the desktop RTX 5090 (32 GB, 170 SMs)
)  # fmt: skip

# Words after a model number that name another board of it: NVML's 'Laptop GPU', the spec pages' 'Mobile', the
# 'with Max-Q Design' of NVML's Turing laptop names ('NVIDIA GeForce RTX 2080 with Max-Q Design')
_VARIANT_WORD = re.compile(r"-(LAPTOP|MOBILE|MAX-?Q)(?=-|$)")
# NVML's name of a MIG device is its card's name and its profile: 'NVIDIA A100-SXM4-40GB MIG 3g.20gb', 'NVIDIA H100 80GB
# HBM3 MIG 1g.10gb' (nvmlDeviceGetName on a MIG handle; search-index ids 7892059270, 61752392095). A slice has its own
# memory (NVML's total on the MIG handle, `sources.nvml` `MigInstance`) and a part of the card's SMs: neither is the row's
_MIG = re.compile(r"-MIG(?:-([^-]+))?(?=-|$)")
# A model number's Ti and SUPER are other cards with rows of their own ('RTX2080-SUPER': 48 SMs to the RTX 2080's 46,
# `gpus.GPU_SMS`): a name whose card has no row ('RTX 2080 Super Max-Q', 'RTX 5080 Super') is never the plain number's
_NUMBER_VARIANT = re.compile(r"^(TI|SUPER)(?=-|$)")
# A memory size in a name ('A800-SXM4-40GB'), against the row's total: one card's sizes differ from its nvidia-smi
# total by its marketing GB (< 10 %), a variant's by 1.5× or more
_SIZE = re.compile(r"-(\d+)GB(?=-|$)")
_SAME_SIZE = (0.8, 1.25)

# Variants a row holds, by its source: the RTX PRO 6000 Blackwell Max-Q Workstation Edition prints the same 97,887 MiB
# (search-index ids 56138566301, 65890345886) on the same 188-SM GB202; the RTX 3050 '6GB Laptop GPU' is the 6 GB row
# (search-index id 67621234058); the RTX 2080's laptop boards are its TU104 with all 46 SMs (2,944 CUDA cores) and 8 GB
# (NVIDIA's GeForce RTX 20-series laptop specifications; lmdeploy#3950's 'GeForce RTX 2080 Max-Q 8 GB (laptop)')
ROW_HOLDS: dict[str, frozenset[str]] = {
    "RTXPRO6000": frozenset({"MAX-Q", "MAXQ"}), "RTX3050-6GB": frozenset({"LAPTOP"}),
    "RTX2080": frozenset({"MAX-Q", "MAXQ", "LAPTOP", "MOBILE"}),
}  # fmt: skip
# Sizes a name carries that are not the GPU's memory: NVML's 'NVIDIA GH200 480GB' and Isambard-AI's 'NVIDIA GH200 120GB'
# are the Grace CPU's LPDDR5X beside the Hopper's 96 GB (nvidia-smi's 97,871 MiB: search-index ids 66196318461,
# 63088167599; tests/data/cases/vllm/isambard-v0101dev-qwen3-30b-a3b-pp2-tp4-gh200)
SIZE_NOT_THE_GPUS: dict[str, frozenset[int]] = {"GH200": frozenset({120, 480})}


def other_board(rest: str, model: str, rows: Mapping[str, int]) -> str | None:
    """What in a name's token after `model` ('LAPTOP-GPU' after 'RTX5090') names another board than the row's: a Ti
    or SUPER card, a variant word the row does not hold ('Laptop', 'Mobile', 'Max-Q') or a memory size far from its
    total in `rows` (nvidia-smi's MiB: '40GB' on the 80 GB A800) that is no row of its own ('RTX4060-TI-16GB' is one,
    of the same chip); None where the name is the row's card. A MIG profile ('MIG-3G.20GB') is a slice of it, said
    first."""
    mig = _MIG.search("-" + rest)
    if mig:
        return f"MIG {mig.group(1).lower()} slice" if mig.group(1) else "MIG slice"
    number = _NUMBER_VARIANT.match(rest)
    if number:
        return f"{number.group(1).title()} card"
    held = ROW_HOLDS.get(model, frozenset())
    words = sorted({match.group(1) for match in _VARIANT_WORD.finditer("-" + rest)} - held)
    if words:
        return ("Max-Q" if words[0].startswith("MAX") else words[0].title()) + " board"
    listed = rows.get(model)
    for size in (int(match.group(1)) for match in _SIZE.finditer("-" + rest)):
        ratio = size * 1024 / listed if listed else 1.0
        known = f"{model}-{size}GB" in rows or size in SIZE_NOT_THE_GPUS.get(model, frozenset())
        if not known and not _SAME_SIZE[0] <= ratio <= _SAME_SIZE[1]:
            return f"{size} GB board"
    return None


def without_board(token: str) -> str:
    """A token less its board words, sizes and MIG profile ('RTX5090-LAPTOP-GPU' → 'RTX5090-GPU'): the model number,
    whose compute capability every board and slice of it shares (one architecture per model number: a laptop card's
    chip is of its desktop's generation)."""
    card = _MIG.sub("", token)  # a MIG slice's card is the whole name before 'MIG' ('A100-SXM4-40GB', the 40 GB row)
    return card if card != token else _SIZE.sub("", _VARIANT_WORD.sub("", token))


def is_mig_slice(name: str | None) -> bool:
    """Whether a GPU name is NVML's name of a MIG device ('NVIDIA A100-SXM4-40GB MIG 3g.20gb'): a part of its card,
    whose total is CUDA's own (as a limiter's slice, `gpus.SLICE_RESERVED_BYTES`), never the card's row."""
    return bool(name) and _MIG.search("-" + (name or "").upper().replace(" ", "-").replace("_", "-")) is not None
