"""vLLM v0.8.0–v0.10.1.1 run V0 below compute capability 8.0 (v0_charge.V0_FALLBACK_ERAS): such a start is planned
(and fitted) with V0's fits, and judged here by fits that left its source out (`evaluate.fit_all(leave_out=…)`), so
the log's figures are no row of the fit that plans them.

The start: Qwen3-30B-A3B at TP 4 on four RTX 2080 Ti 22 GB with `vllm/vllm-openai:v0.8.5` (search-index id
39687024550, tests/data/calibration/SOURCES.md). Its log prints V0's worker.py lines, 'model weights take 14.25GiB;
non_torch_memory takes 0.20GiB; PyTorch activation peak memory takes 1.40GiB; the rest of the memory reserved for KV
Cache is 4.30GiB': V1 at v0.8.5 prints neither line and charges the CUDA context and NCCL inside its non-torch figure
(v0_charge.py). The expected figures are the log's (the RTX 2060 start: tests/engines/vllm/test_v0_fallback_engine.py).
"""

from __future__ import annotations

import json

import pytest

from benchmarks.calibration.evaluate import blind
from kvtop.cli import main
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.batching import default_max_num_seqs
from kvtop.domain.wording import GIB
from tests.calibration_fits import CORPUS, ONE_WORKER, corpus_fits
from tests.conftest import CONFIGS

pytestmark = ONE_WORKER  # its fits are tests/calibration_fits.py's: made once per run

RECORDS = {record.id: record for records in CORPUS.values() for record in records}
TP4_32K = RECORDS["file38730122894-qwen3-30b-a3b-32k-4x2080ti22g-tp4-v085"]
QWEN3_30B = str(CONFIGS / "Qwen--Qwen3-30B-A3B.json")
LAUNCH = ("vllm serve /qwen/qwen3-30b-a3b --served-model-name coder --tensor-parallel-size 4 --dtype half "
          "--max-model-len 32768 --max-num-batched-tokens 4096 --gpu-memory-utilization 0.93 --block-size 32 "
          "--enable-chunked-prefill --swap-space 16 --tokenizer-pool-size 56 --disable-custom-all-reduce")  # fmt: skip
LOGGED_KV_GIB = 4.30  # 'the rest of the memory reserved for KV Cache is 4.30GiB'


def _plan(capsys: pytest.CaptureFixture[str], gpu: str) -> dict:  # type: ignore[type-arg]
    args = ["plan", "--json", "--no-calibration-store", "--model", QWEN3_30B, "--engine", "vllm",
            "--engine-version", "0.8.5", "--gpu", gpu, "--cmd", LAUNCH]  # fmt: skip
    assert main(args) == 0
    return json.loads(capsys.readouterr().out)


def _term(out: dict, name: str) -> dict:  # type: ignore[type-arg]
    return next(term for term in out["terms"] if term["term"] == name)


def test_a_turing_start_at_v085_reads_v0s_fits(capsys: pytest.CaptureFixture[str]) -> None:
    out = _plan(capsys, "RTX2080TI")
    assert _term(out, "activation")["basis"].startswith("vllm.activation.v0")
    assert _term(out, "non_torch")["fit_key"] == "vllm.non_torch.v0"


def test_the_turing_tp4_start_judged_without_its_source_lands_on_its_log() -> None:
    """Blind, as the judge plans it (the weights book, V0's fits without this source): 4.35 GiB of KV, +1.2 %."""
    judged = blind(TP4_32K, corpus_fits(TP4_32K.source), weights_logged=False)
    assert judged is not None and judged.kind == "KV GiB"
    assert abs(judged.predicted - LOGGED_KV_GIB) / LOGGED_KV_GIB < 0.05
    assert judged.low <= LOGGED_KV_GIB <= judged.high


def test_the_fallbacks_256_seqs_cite_set_default_args_v0() -> None:
    """V0's 256 seqs: EngineArgs' default in V0's own releases; `_set_default_args_v0` where a V1-era release runs V0
    (v0.10.2 engine/arg_utils.py:1611-1613 'Set max_num_seqs to 256 for VLLM_V0')."""
    assert default_max_num_seqs(12 * GIB, "RTX2060", ResolvedVersion(text="0.8.5"))[1].count("_set_default_args_v0")
    assert "EngineArgs.max_num_seqs" in default_max_num_seqs(12 * GIB, "RTX2060", ResolvedVersion(text="0.7.3"))[1]


def test_the_same_launch_on_ampere_keeps_v1s_charge(capsys: pytest.CaptureFixture[str]) -> None:
    """An A100 runs V1 at v0.8.5: its non-torch figure holds the CUDA context and NCCL (v0_charge.py), far above
    the 0.20 GiB of growth the Turing start's V0 printed."""
    out = _plan(capsys, "A100-40GB")
    assert _term(out, "activation")["basis"].startswith("vllm.activation.v1")
    assert _term(out, "non_torch")["bytes"] > 1 * GIB
