"""SGLang's automatic `mem_fraction_static` reads nvidia-smi's total (`get_nvgpu_memory_capacity`: `nvidia-smi
--query-gpu=memory.total`, the least over the GPUs; 0.5.9 utils/common.py:1724-1755, falling back to CUDA's total only
where nvidia-smi prints none, a MIG slice), so a launch planned with `--gpu-memory` (CUDA's total, the engine's: 79.19 GiB
= 85,029,615,043 B on an H100) must size the fraction from the H100's nvidia-smi total (81,559 MiB), as the same launch
planned from `--gpu H100`'s table does.

Expected by SGLang 0.5.9's arithmetic (server_args.py `_handle_gpu_memory_settings`, :911-1050) for Llama-3-70B at TP 8
on an H100 (60 GiB ≤ 81,559 MiB < 90 GiB: chunked prefill 8,192, decode graphs to 512 at TP ≥ 4): reserved =
512 + 1.5 × 8,192 + 2 × 512 + 8 × 1 ÷ 8 × 1,024 = 14,848 MiB (above the 10 GiB floor), and the fraction
round((81,559 − 14,848) ÷ 81,559, 3) = 0.818; from CUDA's 81,090 MiB it would be round(66,242 ÷ 81,090, 3) = 0.817.
"""

from __future__ import annotations

import json

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.gpu_total_origin import GpuTotalOrigin
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA

H100_SMI = 81559 << 20  # nvidia-smi's total (kvtop/domain/gpus.py)
H100_CUDA = 85_029_615_043  # CUDA's total, as SGLang's and vLLM's H100 logs print it (79.19 GiB)
RESERVED_MIB = 512 + 1.5 * 8192 + 2 * 512 + 8 * 1 / 8 * 1024


def _fraction(total: int, name: str | None, measured: MeasuredInputs) -> tuple[float, str]:
    path = DATA / "configs" / "meta-llama--Meta-Llama-3-70B.json"
    model = model_from_config(json.loads(path.read_text()), source=path.name)
    settings = parse_flags("sglang", ["--tp", "8", "--context-length", "8192"]).model_copy(
        update={"engine_version": "0.5.9"}
    )
    engine = predict(model, settings, gpu_total_bytes=total, gpu_name=name, measured=measured).engine
    return engine.memory_fraction, engine.memory_fraction_source


def test_the_tables_total_is_nvidia_smis() -> None:
    fraction, source = _fraction(H100_SMI, "H100", MeasuredInputs())
    assert RESERVED_MIB == 14848
    assert fraction == round((81559 - RESERVED_MIB) / 81559, 3) == 0.818
    assert "81559 − 14848 MiB reserve" in source


def test_a_given_cuda_total_of_a_named_card_sizes_from_the_cards_nvidia_smi_total() -> None:
    given = MeasuredInputs(gpu_total_bytes=H100_CUDA, gpu_total_origin=GpuTotalOrigin.GIVEN)
    fraction, source = _fraction(H100_CUDA, "H100", given)
    assert fraction == round((81559 - RESERVED_MIB) / 81559, 3)
    assert "81559 − 14848 MiB reserve" in source and "81090" not in source


def test_a_given_total_of_no_card_named_is_the_one_figure_there_is() -> None:
    given = MeasuredInputs(gpu_total_bytes=H100_CUDA, gpu_total_origin=GpuTotalOrigin.GIVEN)
    fraction, source = _fraction(H100_CUDA, None, given)
    assert H100_CUDA >> 20 == 81090
    assert fraction == round((81090 - RESERVED_MIB) / 81090, 3) == 0.817
    assert "81090 − 14848 MiB reserve" in source


def test_a_given_total_far_below_the_named_card_is_a_part_of_it_not_the_card() -> None:
    """`--gpu H100 --gpu-memory 40GiB` was sized from the H100's 81,559 MiB, as though the 40 GiB were the whole card's
    CUDA total. A total below what a whole H100 reports to CUDA (the corpus's 76 H100 logs printed 79.10 – 79.22 GiB)
    is a part of it: a MIG slice (nvidia-smi prints no total, SGLang reads CUDA's), a HAMi limit (reported to
    nvidia-smi and CUDA alike: the corpus's 38,000 MiB slices of an H100), a vGPU. SGLang 0.5.9 on 40,960 MiB (below
    60 GiB: chunked prefill 4,096, decode graphs to 160 at TP ≥ 4): reserved = 512 + 1.5 × 4,096 + 8 ÷ 8 × 1,024 +
    2 × 160 = 8,000 MiB (no 10 GiB floor at or below 60 GiB), the fraction round(32,960 ÷ 40,960, 3) = 0.805."""
    forty = 40 << 30
    given = MeasuredInputs(gpu_total_bytes=forty, gpu_total_origin=GpuTotalOrigin.GIVEN)
    fraction, source = _fraction(forty, "H100", given)
    assert fraction == round((40960 - 8000) / 40960, 3) == 0.805
    assert "40960 − 8000 MiB reserve" in source and "81559" not in source
