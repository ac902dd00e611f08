"""vLLM's explain solves at CUDA's calibrated total where plan's terms made the non-KV estimate, read from the
estimate's typed origin (`EstimatedInput.origin`), never from its basis's words or its source: at v0.3.0 the estimate
is plan's terms whose weakest source is "assumed" (the growth of the device-wide non-torch charge, beside the
calibrated activation peak), and a fallback whose words equal plan's basis is still the fallback."""

from __future__ import annotations

import json

from kvtop.domain.explain_estimate import EstimateRun, runtime_estimate
from kvtop.domain.explanation import EstimateOrigin
from kvtop.domain.launch import parse_flags
from kvtop.domain.model_config import model_from_config
from tests.data_paths import CONFIGS

LLAMA = CONFIGS / "meta-llama--Llama-3.1-8B.json"
ASSUMED = (1 << 30, 2 << 30, 3 << 30)


def _run(*flags: str) -> EstimateRun:
    model = model_from_config(json.loads(LLAMA.read_text()))
    settings = parse_flags("vllm", ["--engine-version", "0.3.0", "--max-model-len", "8192", *flags])
    return EstimateRun(model, settings, 24 << 30, "RTX3090", False)


def test_plans_terms_are_said_by_origin_whatever_their_source() -> None:
    planned = runtime_estimate(_run(), "non-KV", ASSUMED, "the fallback")
    assert (planned.origin, planned.source) == (EstimateOrigin.PLAN_TERMS, "assumed")
    assert "calibrated: vllm.activation" in planned.basis


def test_a_fallback_worded_as_plans_basis_is_still_the_fallback() -> None:
    """A launch plan cannot solve (a yarn rope without its original length: an InputError in the plan's rules)
    falls back to the engine's assumption, here given plan's very basis text."""
    planned = runtime_estimate(_run(), "non-KV", ASSUMED, "the fallback")
    unplannable = _run("--rope-scaling", '{"rope_type":"yarn","factor":4}')
    fallback = runtime_estimate(unplannable, "non-KV", ASSUMED, planned.basis)
    assert (fallback.origin, fallback.value_bytes, fallback.basis) == (EstimateOrigin.ASSUMPTION, 2 << 30, planned.basis)
