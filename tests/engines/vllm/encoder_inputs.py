"""The calibration inputs the vLLM encoder tests plan from: a config file on an H100 at a release and context (one
builder for test_encoder_forward.py and test_encoder_profile.py)."""

from __future__ import annotations

from pathlib import Path

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.layout import ParallelLayout
from kvtop.sources.hub import load_config_file


def encoder_inputs(config: Path, version: str, context: int, *flags: str, tp: int = 1) -> CalibrationInputs:
    """`config` launched by vLLM `version` with --max-model-len `context` and `flags`, weights not charged."""
    model = load_config_file(config)
    settings = parse_flags("vllm", ["--max-model-len", str(context), *flags])
    return CalibrationInputs(
        model=model, settings=settings, layout=ParallelLayout(tp=tp), gpu_name="H100",
        gpu_total_bytes=gpu_total_bytes("H100"), version=ResolvedVersion(text=version), weights_bytes=0,
        context_length=context,
    )  # fmt: skip
