"""The boards a card's model number also names (laptop cards, Max-Q designs, D cards, other memory sizes, MIG slices) and
the words after it kvtop knows: their own rows where kvtop holds them, else a named refusal (an unknown word too), never
the whole or desktop card's row read through the name's prefix.
Why: NVML's 'NVIDIA GeForce RTX 5090 Laptop GPU' (24 GB, GB203) read as the 32 GB desktop RTX 5090 planned 37 % too
much KV (#27, session 63). Split from `gpus`, whose tables merge these rows.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping

# The laptop cards kvtop holds, by nvidia-smi's total (MiB), as `gpus.GPU_TOTAL_MIB` keys them
LAPTOP_TOTAL_MIB: dict[str, int] = {
    # session 58: the 4 GB RTX 3050 laptop card (GA107; NVML's 'NVIDIA GeForce RTX 3050 Laptop GPU', no size in the
    # name): 'NVIDIA GeForce RTX 3050 Laptop GPU, 4096 MiB' (nvidia-smi --query-gpu; search-index ids 66301028439,
    # 70940246336, 69398712653, 58578691390, 57442593401). Not the desktop RTX 3050 (8 GB, GA106), nor the 3050 Ti
    # laptop card (20 SMs), nor the '6GB Laptop GPU' (RTX3050-6GB): each stays its own name
    "RTX3050-LAPTOP": 4096,
    # session 68: the 6 GB RTX 3060 laptop card (GA106; NVML 'NVIDIA GeForce RTX 3060 Laptop GPU'): nvidia-smi's '0, NVIDIA
    # GeForce RTX 3060 Laptop GPU, 6144 MiB, 580.178.04, 8.6' (search-index id 71392561199; 6144 MiB also 66625232134,
    # 54188998208). Not the desktop RTX 3060 (12 GB, 28 SMs)
    "RTX3060-LAPTOP": 6144,
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
# The China-market D cards (NVML 'NVIDIA GeForce RTX 4090 D', '... RTX 5090 D', '... RTX 5090 D v2'), by nvidia-smi's totals:
# 'NVIDIA GeForce RTX 4090 D, 24564 MiB' (search-index ids 58195549105, 59730382140, 62204639427, 69390285414), 'NVIDIA
# GeForce RTX 5090 D, 32607 MiB' (55792546225, 68370526251, 66628847283, 62314799480), 'RTX 5090 D v2, 24455 MiB'
# (54662711865, 70525343611): the v2 is a 24 GB card, never the 32 GB RTX 5090's row
OTHER_TOTAL_MIB: dict[str, int] = {"H20-3E": 143771, "RTX4090-D": 24564, "RTX5090-D": 32607, "RTX5090-D-V2": 24455}
# Their capability and SMs: the H20-3e's 'SM90a, 78 SM per GPU' (60976242793), '"device": "NVIDIA H20-3e",
# "compute_capability": (9, 0), "sm_count": 78' (65832400105): the H20's GH100 with its 78 SMs; the RTX 4090 D's '4090D
# (114 SM)' (69448674091, 67239061647) of AD102 (Ada, 8.9, NVIDIA's CUDA GPU list); the 5090 D v2's device query 'NVIDIA
# GeForce RTX 5090 D v2 ... Compute Capability: 12.0 ... SM数量: 170' (68901312139); the 5090 D's GB202 is consumer
# Blackwell, 12.0 ('Blackwell SM 12.x' on it, 57488443734), its SMs printed nowhere read (left out: unknown)
OTHER_CAPABILITY: dict[str, tuple[int, int]] = {
    "H20-3E": (9, 0), "RTX4090-D": (8, 9), "RTX5090-D": (12, 0), "RTX5090-D-V2": (12, 0),
}  # fmt: skip
OTHER_SMS: dict[str, int] = {"H20-3E": 78, "RTX4090-D": 114, "RTX5090-D-V2": 170}

# Their compute capability (NVIDIA's CUDA GPU list: GA10x 8.6, Ada 8.9, consumer Blackwell 12.0) as printouts state it
LAPTOP_CAPABILITY: dict[str, tuple[int, int]] = {
    # 'NVIDIA GeForce RTX 3050 Laptop GPU (16 SMs, compute capability 8.6)' (search-index id 54700343983)
    "RTX3050-LAPTOP": (8, 6),
    "RTX3060-LAPTOP": (8, 6),  # 'GeForce RTX 3060 Laptop GPU, 6144 MiB, compute capability 8.6' (search-index id 67339141386)
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
    "RTX3060-LAPTOP": 30,  # 'an RTX 3060 Laptop GPU (30 SMs, compute capability 8.6, …)' (search-index id 71250705615)
    "RTX4070-LAPTOP": 36,  # 'RTX 4070 Laptop GPU (36 SMs, sm_89)' (search-index id 60826839834)
}

# The laptop and D cards as operators and spec pages write them ('RTX 3050 Mobile', 'RTX 3050 4GB Laptop GPU'), read to
# their keys (regex on the model token, as `gpus._WORKSTATION_SPELLINGS`); the '6GB Laptop GPU' (its size first) and
# the 'RTX 3050 Ti Laptop GPU' (20 SMs) match nothing here and keep their own names
SPELLINGS: tuple[tuple[str, str], ...] = (
    (r"^RTX3050-(4GB-)?(LAPTOP|MOBILE)(?=-|$)", "RTX3050-LAPTOP"),
    (r"^RTX3060-(6GB-)?(LAPTOP|MOBILE)(?=-|$)", "RTX3060-LAPTOP"),  # not the desktop RTX 3060 (12 GB, 28 SMs)
    (r"^RTX4070-(8GB-)?(LAPTOP|MOBILE)(?=-|$)", "RTX4070-LAPTOP"),  # not the desktop RTX 4070 (12 GB, 46 SMs)
    (r"^RTX4080-(12GB-)?(LAPTOP|MOBILE)(?=-|$)", "RTX4080-LAPTOP"),  # not the desktop RTX 4080 (16 GB, 76 SMs)
    (r"^RTX5090-(24GB-)?(LAPTOP|MOBILE)(?=-|$)", "RTX5090-LAPTOP"),  # not the desktop RTX 5090 (32 GB, 170 SMs)
    (r"^RTX(4090|5090)D(?=-|$)", r"RTX\1-D"),  # the D cards as operators write them ('4090D (114 SM)', 69448674091)
)  # fmt: skip

# Words after a model number that name another board of it: NVML's 'Laptop GPU', the spec pages' 'Mobile', the
# 'with Max-Q Design' of NVML's Turing laptop names ('NVIDIA GeForce RTX 2080 with Max-Q Design')
_VARIANT_WORD = re.compile(r"-(LAPTOP|MOBILE|MAX-?Q)(?=-|$)")
# NVML's name of a MIG device is its card's name and its profile: 'NVIDIA A100-SXM4-40GB MIG 3g.20gb', 'NVIDIA H100 80GB
# HBM3 MIG 1g.10gb' (nvmlDeviceGetName on a MIG handle; search-index ids 7892059270, 61752392095). A slice has its own
# memory (NVML's total on the MIG handle, `sources.nvml` `MigInstance`) and a part of the card's SMs: neither is the row's
_MIG = re.compile(r"-MIG(?:-([^-]+))?(?=-|$)")
# A model number's Ti, SUPER and D are other cards with rows of their own ('RTX2080-SUPER': 48 SMs to the RTX 2080's 46,
# `gpus.GPU_SMS`; 'RTX4090-D': 114 to the RTX 4090's 128): a name whose card has no row ('RTX 2080 Super Max-Q', 'RTX 5080
# Super', 'RTX 4080 D') is never the plain number's
_NUMBER_VARIANT = re.compile(r"^(TI|SUPER|D)(?=-|$)")
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


# The other words a name may carry after its model number, each naming no other board (a form factor, a memory type, a
# product word NVML, nvidia-smi and DCGM print), with where it is printed: the words of every GPU name in tests/data. A
# word outside them, the variant words, sizes and MIG profiles is one kvtop cannot read ('RTX 4090 Laptp'): refused by
# name (`unknown_word`), never read as the row's card (#27, session 63: 'RTX 4090 D', 114 SMs, read as the RTX 4090's 128)
BOARD_WORDS: dict[str, str] = {
    "SXM": "the form factor as operators write it ('A100-SXM', 'H100 SXM'; `gpus.NVLINK_GPUS`)",
    "SXM2": "NVML's 'Tesla V100-SXM2-16GB'", "SXM4": "NVML's 'NVIDIA A100-SXM4-80GB', 'NVIDIA A800-SXM4-80GB'",
    "SXM5": "the H100's board as operators write it ('H100 SXM5')", "SXM6": "NVML's 'NVIDIA B300 SXM6 AC'",
    "AC": "NVML's 'NVIDIA B300 SXM6 AC' (the B300 row's 275,040 MiB)",
    "PCIE": "NVML's 'NVIDIA A100-PCIE-40GB', 'NVIDIA H100 PCIe'", "NVL": "NVML's 'NVIDIA H100 NVL', 'NVIDIA H200 NVL'",
    "HBM3": "NVML's 'NVIDIA H100 80GB HBM3'", "HBM3E": "the GH200 144G's memory type ('NVIDIA GH200 144G HBM3e')",
    "GPU": "NVML's 'Laptop GPU' ('NVIDIA GeForce RTX 3050 Laptop GPU')",
    "BLACKWELL": "NVML's 'NVIDIA RTX PRO 6000 Blackwell Server Edition'", "SERVER": "the same",
    "WORKSTATION": "NVML's 'NVIDIA RTX PRO 6000 Blackwell Workstation Edition'", "EDITION": "the same two",
    "GENERATION": "NVML's 'NVIDIA RTX 6000 Ada Generation', 'NVIDIA RTX 2000 Ada Generation'",
    "WITH": "NVML's Turing laptop names ('NVIDIA GeForce RTX 2080 with Max-Q Design')", "DESIGN": "the same",
    "GB10": "the chip after its box ('DGX Spark GB10', case vllm/ngc2608-v0271-qwen3-0.6b-gb10)",
    "DGX": "the DGX Station's own key, 'GB300-DGX-STATION' (a GB300 for capability and SMs)", "STATION": "the same",
    "VGPU": "a case's 'NVIDIA A100-SXM vGPU slice' (lmdeploy tutorial; its record plans from its printed total)",
    "SLICE": "the same",
}  # fmt: skip
_KNOWN_WORDS = (*BOARD_WORDS, "LAPTOP", "MOBILE", "MAX-Q", "TI", "SUPER", "D")
# A chip's revision, no other board: NVML's 'NVIDIA GeForce RTX 2080 Ti Rev. A' (search-index id 37396047020), lspci's
# 'TU102 [GeForce RTX 2080 Ti Rev. A] [10de:1e07]' (3497140311): the TU102-300A bin of the same card, its SMs and memory
_REVISION = re.compile(r"-REV\.?-[A-Z](?=-|$)")


def unknown_word(rest: str) -> str | None:
    """The first word of a name's token after its model ('LAPTP' in 'LAPTP-GPU' after 'RTX4090') that is no board word
    kvtop knows (`BOARD_WORDS`; Ti/SUPER/D, variant words, sizes, a MIG profile are read by `other_board`; a chip's
    revision, 'Rev. A', names the same card); else None.
    An aside ends the name ('A10 (24 GB)', nvidia-smi -L's '(UUID: …)', a CSV's ', 81559 MiB'), as the corpus's cases write it."""
    plain = _SIZE.sub("", _VARIANT_WORD.sub("", _REVISION.sub("", _MIG.sub("", "-" + re.split(r"[(,;]", rest)[0]))))
    plain = re.sub(r"^(-(TI|SUPER|D))+(?=-|$)", "", plain)  # the number's own Ti, SUPER or D card (`other_board`)
    return next((word for word in plain.split("-") if word and word not in BOARD_WORDS), None)


def unknown_word_said(name: str, token: str, rows: Mapping[str, int]) -> str | None:
    """A name that is a listed model and a word kvtop cannot read ('RTX 4090 Laptp'), said with the words nearest it:
    "the RTX4090 and 'Laptp', not a board word kvtop knows (did you mean 'LAPTOP'?)"; None for any other name."""
    model = max((row for row in rows if token.startswith(row + "-")), key=len, default=None)
    word = unknown_word(token[len(model) + 1 :]) if model else None
    if word is None:
        return None
    typed = re.search(rf"(?<![A-Z0-9]){re.escape(word)}(?![A-Z0-9])", name, re.IGNORECASE)
    near = " or ".join(repr(known) for known in difflib.get_close_matches(word, _KNOWN_WORDS, n=3))
    return (f"the {model} and {typed.group(0) if typed else word!r}, not a board word kvtop knows"
            + (f" (did you mean {near}?)" if near else ""))  # fmt: skip


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
    word = unknown_word(rest)
    return None if word is None else f"board named {word!r}, not a board word kvtop knows"


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
