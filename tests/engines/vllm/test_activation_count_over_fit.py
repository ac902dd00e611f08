"""From v0.17.0 on the native sampler path, vLLM's profiled activation peak is the code's count, not the fit's figure
(calibration_activation._sampler_floor): the count needs no log of the launch's kind, so a fit made on few logs (the
v17 fit with llm-d-planner's sweep left out: six logs for four features) no longer sets the peak.

The figures are llm-d-planner's v0.19.0 starts on one H100 at `vllm serve`'s defaults (8,192 tokens, 1,024 seqs;
tests/data/calibration/vllm.jsonl, accuracy/results/v0.19.0/results_raw.csv at 56dc5b7): `PyTorch activation peak`
1.21 GiB for Mixtral-8x7B at TP 2 and 2.03 for Mistral-Small-3.1-24B, each printed to 0.01 GiB. The expected bytes
are vLLM 0.19.0's arithmetic (sampler_peak.py): 3.5 copies of seqs × vocab × 4 B, the Triton kernel's rows (an H100's
132 SMs × vocab × 4 B), the hidden states ((tokens + seqs) × hidden × 2 B) and an unquantized MoE's two expert
workspaces (M × topk × max(I, K) and M × topk × max(2I, K), 2 B).
"""

from __future__ import annotations

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.terms import Term, TermEstimate
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.engines.vllm import calibration
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_config_file
from tests.data_paths import CONFIGS, DATA

MIXTRAL = load_config_file(CONFIGS / "mistralai--Mixtral-8x7B-v0.1.json")
MISTRAL_SMALL = load_config_file(DATA / "calibration" / "configs" / "mistralai--Mistral-Small-3.1-24B-Instruct-2503.json")
TOKENS, SEQS, SMS = 8192, 1024, 132
PRINTED = 0.005 * GIB

# Mixtral at TP 2: vocabulary 32,000, hidden 4,096, 2 of 8 experts, intermediate 14,336 ÷ 2
MIXTRAL_COUNT = (round(3.5 * SEQS * 32_000 * 4) + SMS * 32_000 * 4 + (TOKENS + SEQS) * 4_096 * 2
                 + TOKENS * 2 * (7_168 + 14_336) * 2)  # fmt: skip
# Mistral-Small-3.1: vocabulary 131,072, hidden 5,120; the encoder profile keeps 2 Pixtral items through the text
# run (encoder_profile.py: outputs 2 × 3,025 × 5,120 and pixels 2 × 7,114,800, 2 B each)
MISTRAL_COUNT = (round(3.5 * SEQS * 131_072 * 4) + SMS * 131_072 * 4 + (TOKENS + SEQS) * 5_120 * 2
                 + 2 * 3_025 * 5_120 * 2 + 2 * 7_114_800 * 2)  # fmt: skip


def _activation(model: ModelSpec, tp: int, fits: dict[str, object] | None = None) -> TermEstimate:
    version = ResolvedVersion(text="0.19.0", source=VersionSource.FLAG, detail="--engine-version 0.19.0")
    settings = parse_flags("vllm", ["--engine-version", "0.19.0", "--max-model-len", "8192",
                                    "--gpu-memory-utilization", "0.95", "--tensor-parallel-size", str(tp)])  # fmt: skip
    inputs = CalibrationInputs(model=model, settings=settings, layout=ParallelLayout(tp=tp), gpu_name="H100",
                               gpu_total_bytes=gpu_total_bytes("H100"), version=version, weights_bytes=0,
                               context_length=8192)  # fmt: skip
    return next(t for t in calibration.terms(inputs, fits) if t.term is Term.ACTIVATION)  # type: ignore[arg-type]


def _doubled_fit() -> dict[str, object]:
    """The committed fits with the v17 fit's coefficients doubled: a fit that charges twice what it should."""
    fits = dict(calibration._committed())
    v17 = fits["vllm.activation.v17"]
    fits["vllm.activation.v17"] = v17.model_copy(update={"coefficients": tuple(2 * c for c in v17.coefficients)})
    return fits  # type: ignore[return-value]


def test_the_peak_is_the_count_whatever_the_fit() -> None:
    for model, tp, count, logged in ((MIXTRAL, 2, MIXTRAL_COUNT, 1.21), (MISTRAL_SMALL, 1, MISTRAL_COUNT, 2.03)):
        committed, doubled = _activation(model, tp), _activation(model, tp, _doubled_fit())
        assert committed.bytes == doubled.bytes == count
        assert abs(count - logged * GIB) < 0.05 * GIB + PRINTED  # the log, to its printing and 50 MiB


def test_the_fit_keeps_its_error() -> None:
    """The fit is read for its interval: Mixtral's (a text model, fitted) keeps the v17 fit's held-out error."""
    v17 = calibration.FITS["vllm.activation.v17"]
    activation = _activation(MIXTRAL, 2)
    assert activation.source == "calibrated"
    assert activation.error_bytes == v17.error_bytes
