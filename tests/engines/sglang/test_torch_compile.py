"""`--enable-torch-compile` and `--cuda-graph-bs` at SGLang 0.5.10 … 0.5.13. Torch compile: the prefill (piecewise) CUDA graphs off before the automatic
fraction is sized (torch_compile.py; 0.5.12 server_args.py:1315 then :920), nothing compiled before the pool.

Expected from the engine's own log: huanchen-stack/sglang at 98c6bfb8 (tests/data/calibration/sglang.jsonl
`huanchen-rollout-r1-distill-qwen-7b-a100-tp1-bs128`, a 0.5.12.post1-era fork, A100 80GB, TP 1, chunked prefill 8,192,
`--cuda-graph-max-bs 128 --enable-torch-compile`) prints 'Disable piecewise CUDA graph because
--disable-piecewise-cuda-graph is set' and mem_fraction_static=0.839; by SGLang's arithmetic (0.5.12 :1541-1590)
512 + 1.5 × 8,192 + 2 × 128 + 1/8 × 1,024 = 13,184 MiB, round((81,920 − 13,184) / 81,920, 3) = 0.839; with the 58
prefill sizes (8 × 58 = 464 MiB) it would be 0.833.
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.base import EngineResult
from kvtop.domain.errors import InputError
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA

QWEN25_7B = DATA / "configs" / "Qwen--Qwen2.5-7B.json"
A100_80GB = 81920 << 20
LAUNCH = ["--tp-size", "1", "--dtype", "bfloat16", "--max-running-requests", "128", "--cuda-graph-max-bs", "128",
          "--context-length", "35000", "--attention-backend", "triton"]  # fmt: skip


def _engine(version: str, flags: list[str]) -> EngineResult:
    model = model_from_config(json.loads(QWEN25_7B.read_text()), source=QWEN25_7B.name)
    settings = parse_flags("sglang", [*LAUNCH, *flags]).model_copy(update={"engine_version": version})
    return predict(model, settings, gpu_total_bytes=A100_80GB, gpu_name="A100-80GB").engine


def test_torch_compile_drops_the_prefill_graph_reserve_as_the_log_says() -> None:
    compiled = _engine("0.5.12.post1", ["--enable-torch-compile", "--torch-compile-max-bs", "128"])
    assert compiled.memory_fraction == 0.839
    assert "off for --enable-torch-compile" in compiled.memory_fraction_source
    assert _engine("0.5.12.post1", []).memory_fraction == 0.833


@pytest.mark.parametrize("version", ["0.5.9", "0.5.14", "0.5.16"])
def test_torch_compile_is_refused_where_its_effect_was_not_read(version: str) -> None:
    with pytest.raises(InputError, match="0.5.10 … 0.5.13"):
        _engine(version, ["--enable-torch-compile"])


# `--cuda-graph-bs` (cuda_graph_bs.py): 0.5.12 server_args.py:1495 `cuda_graph_max_bs = max(cuda_graph_bs)` over a typed
# `--cuda-graph-max-bs`, before the reserve's 2 MiB a size (:1550). By hand, with torch compile (no prefill graphs):
# the sizes up to 256 → 512 + 12,288 + 512 + 128 = 13,440 → round(68,480 / 81,920, 3) = round(0.83594, 3) = 0.836;
# the huanchen launch's own `--cuda-graph-bs 128` → 13,184 → 0.839 (its log).
@pytest.mark.parametrize(("sizes", "expected"), [(["128"], 0.839), (["1", "2", "4", "8", "256"], 0.836)])
def test_the_largest_cuda_graph_bs_is_the_reserves_decode_size(sizes: list[str], expected: float) -> None:
    flags = ["--enable-torch-compile", "--cuda-graph-bs", *sizes]
    assert _engine("0.5.12.post1", flags).memory_fraction == expected


@pytest.mark.parametrize("version", ["0.5.9", "0.5.14"])
def test_cuda_graph_bs_is_refused_where_its_effect_was_not_read(version: str) -> None:
    with pytest.raises(InputError, match="0.5.10 … 0.5.13"):
        _engine(version, ["--cuda-graph-bs", "8", "16"])
