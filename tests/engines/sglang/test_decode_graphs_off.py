"""The automatic fraction's decode CUDA-graph reserve by release (decode_graphs_off.py): skipped from SGLang 0.5.15 on a
PD prefill node and under `--disable-cuda-graph`, kept to 0.5.14.

Expected values by SGLang's own arithmetic (not kvtop's): Qwen2.5-7B on an A100 80GB (81,920 MiB, the 60–90 GiB class:
chunked prefill 8,192, decode max_bs 256 at TP < 4; 0.5.23 arg_groups/memory_hook.py:134-145), TP 1:
512 + 1.5 × 8,192 + 2 × 256 (decode graphs) + 1/8 × 1,024 + 8 × 58 (prefill sizes to 8,192) = 13,904 MiB →
round(68,016 / 81,920, 3) = 0.830. A prefill node (0.5.23 memory_hook.py:364-368 `disaggregation_mode != "prefill"`;
0.5.15 server_args.py:3638-3643) drops the 512: 13,392 → round(68,528 / 81,920, 3) = 0.837. `--disable-cuda-graph`
disables both phases' backends (0.5.15 server_args.py:3214-3216; 0.5.23 cuda_graph_hook.py:55-57), dropping the prefill
sizes too (0.5.23 memory_hook.py:380-383): 12,928 → round(68,992 / 81,920, 3) = 0.842.
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.base import EngineResult
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA

QWEN25_7B = DATA / "configs" / "Qwen--Qwen2.5-7B.json"
A100_80GB = 81920 << 20


def _engine(version: str, flags: list[str]) -> EngineResult:
    model = model_from_config(json.loads(QWEN25_7B.read_text()), source=QWEN25_7B.name)
    settings = parse_flags("sglang", ["--tp-size", "1", *flags]).model_copy(update={"engine_version": version})
    return predict(model, settings, gpu_total_bytes=A100_80GB, gpu_name="A100-80GB").engine


@pytest.mark.parametrize("version", ["0.5.15", "0.5.19", "0.5.23"])
def test_a_prefill_node_reserves_no_decode_graphs_from_0_5_15(version: str) -> None:
    assert _engine(version, []).memory_fraction == 0.830
    prefill = _engine(version, ["--disaggregation-mode", "prefill"])
    assert prefill.memory_fraction == 0.837
    assert "no decode graphs (off for a PD prefill node)" in prefill.memory_fraction_source


@pytest.mark.parametrize("version", ["0.5.15", "0.5.23"])
def test_disable_cuda_graph_reserves_neither_phase_from_0_5_15(version: str) -> None:
    off = _engine(version, ["--disable-cuda-graph"])
    assert off.memory_fraction == 0.842
    assert "no decode graphs (off for --disable-cuda-graph)" in off.memory_fraction_source


def test_0_5_14_keeps_the_decode_graphs_without_cuda_graphs() -> None:
    # 0.5.14 server_args.py:3285 adds max_bs × 2 unguarded; its prefill term is guarded by the backend (:3300), which
    # --disable-cuda-graph disables (:2942-2944): 512 + 12,288 + 512 + 128 = 13,440 → round(68,480 / 81,920, 3) = 0.836
    off = _engine("0.5.14", ["--disable-cuda-graph"])
    assert off.memory_fraction == 0.836
    assert "no decode graphs" not in off.memory_fraction_source
    assert "no prefill graphs (off for --disable-cuda-graph)" in off.memory_fraction_source


# From 0.5.22 the class's decode max_bs above a typed --max-running-requests becomes it (0.5.22 and 0.5.23
# arg_groups/memory_hook.py:83 `decode_max_bs_is_default`, :182-188; 0.5.21 has no such lines): at 32 the reserve's
# decode graphs are 2 × 32 = 64 MiB, not 512: 13,904 − 448 = 13,456 → round(68,464 / 81,920, 3) = 0.836.
@pytest.mark.parametrize(("version", "expected"), [("0.5.21", 0.830), ("0.5.22", 0.836), ("0.5.23", 0.836)])
def test_max_running_requests_cuts_the_class_decode_size_from_0_5_22(version: str, expected: float) -> None:
    engine = _engine(version, ["--max-running-requests", "32"])
    assert engine.memory_fraction == expected
    assert ("decode graphs to --max-running-requests 32" in engine.memory_fraction_source) == (expected == 0.836)


def test_a_typed_decode_size_is_not_cut() -> None:
    # `decode_max_bs_is_default` is False once --cuda-graph-max-bs-decode is typed (:83): 2 × 256 stays → 0.830
    assert _engine("0.5.23", ["--max-running-requests", "32", "--cuda-graph-max-bs-decode", "256"]).memory_fraction == 0.830


# Qwen3-VL on Hopper with 60 GiB or more (model_overrides/qwen3_vl.py:20-31): an untyped decode max_bs below a typed
# --max-running-requests ≤ 512 is raised to it (:34-62, 0.5.22 and 0.5.23): H200's class size 256 → 384; an A100 is
# not Hopper (`is_sm90_supported`).
@pytest.mark.parametrize(("version", "gpu", "raised"), [("0.5.23", "H200", True), ("0.5.21", "H200", False),
                                                        ("0.5.23", "A100-80GB", False)])  # fmt: skip
def test_qwen3_vl_on_hopper_raises_the_decode_size_to_max_running_requests(version: str, gpu: str, raised: bool) -> None:
    path = DATA / "configs" / "heldout" / "Qwen--Qwen3-VL-8B-Instruct.json"
    model = model_from_config(json.loads(path.read_text()), source=path.name)
    settings = parse_flags("sglang", ["--max-running-requests", "384"]).model_copy(update={"engine_version": version})
    total = (143771 if gpu == "H200" else 81920) << 20
    source = predict(model, settings, gpu_total_bytes=total, gpu_name=gpu).engine.memory_fraction_source
    assert ("Qwen3-VL's decode graphs up to --max-running-requests 384" in source) == raised


# A PD decode node from 0.5.15 sizes its activation slack to the decode batch (0.5.15 server_args.py:3626-3633; 0.5.23
# arg_groups/memory_hook.py:297-303): max(256 × 1, 2048) × 1.5 = 3,072 MiB for the chunked 12,288; no prefill graphs
# on a decode node (:380-381): 512 + 3,072 + 512 + 128 = 4,224 MiB, under the 10 GiB floor above 60 GiB (:314-315) →
# round(71,680 / 81,920, 3) = 0.875. At 0.5.14 the chunked prefill's 12,288 stays (:3280-3283): 13,440 → 0.836.
@pytest.mark.parametrize(("version", "expected"), [("0.5.14", 0.836), ("0.5.15", 0.875), ("0.5.23", 0.875)])
def test_a_decode_node_sizes_its_activations_to_the_decode_batch_from_0_5_15(version: str, expected: float) -> None:
    assert _engine(version, ["--disaggregation-mode", "decode"]).memory_fraction == expected


def test_a_decode_node_above_the_floor_on_a_large_batch() -> None:
    # --max-running-requests 4096 (the graphs cut to it from 0.5.22 stay at the class's 256): max(4,096, 2,048) × 1.5 =
    # 6,144; 512 + 6,144 + 512 + 128 = 7,296 < 10,240 → 0.875 still; with 8 draft tokens 32,768 × 1.5 = 49,152:
    # 512 + 49,152 + 512 + 128 = 50,304 → round(31,616 / 81,920, 3) = 0.386
    flags = ["--disaggregation-mode", "decode", "--max-running-requests", "4096"]
    assert _engine("0.5.23", flags).memory_fraction == 0.875
    spec = [*flags, "--speculative-algorithm", "NGRAM", "--speculative-num-draft-tokens", "8"]
    assert _engine("0.5.23", spec).memory_fraction == 0.386


# `--disable-decode-cuda-graph` / `--cuda-graph-backend-decode disabled` (0.5.14 server_args.py:1925, :1963, folded into
# the decode backend at :2949-2956) skip the decode graphs' 2 × 256 from 0.5.15 but keep the prefill sizes:
# 13,904 − 512 = 13,392 → 0.837 (the prefill node's figure above); at 0.5.14 the term is unguarded (:3285): 0.830.
@pytest.mark.parametrize("flags", [["--disable-decode-cuda-graph"], ["--cuda-graph-backend-decode", "disabled"]])
@pytest.mark.parametrize(("version", "expected"), [("0.5.14", 0.830), ("0.5.15", 0.837), ("0.5.23", 0.837)])
def test_the_decode_switch_offs_drop_the_decode_graphs_from_0_5_15(flags: list[str], version: str, expected: float) -> None:
    assert _engine(version, flags).memory_fraction == expected


@pytest.mark.parametrize("phase", ["decode", "prefill"])  # one check for both phases (graph_phase_flags.py)
def test_another_backend_and_an_early_release_are_refused(phase: str) -> None:
    with pytest.raises(UnsupportedModelError, match=f"forces a {phase} CUDA-graph backend whose reserve"):
        _engine("0.5.23", [f"--cuda-graph-backend-{phase}", "full"])
    with pytest.raises(InputError, match=f"has no --disable-{phase}-cuda-graph"):
        _engine("0.5.13", [f"--disable-{phase}-cuda-graph"])
