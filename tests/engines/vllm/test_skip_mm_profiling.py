"""vLLM's `--skip-mm-profiling`: the profile run leaves the encoder out (kvtop/domain/engines/vllm/skip_mm_profiling.py).

Expected figures from vLLM's code and a start's own log, never from the function under test. The code: the runner's
`profile_run` (v1/worker/gpu_model_runner.py:2569 at v0.10.1, :5892 at v0.21.0, :6076 at v0.33.0) runs the encoder on
its dummy batch, and keeps its cache through the text run, only where `skip_mm_profiling` is unset. Gemma-3's dummy
batch at 8,192 batched tokens is 31 images of 896² px, 256 embeddings of 5,376 each (gemma3_mm.py; the same figure
test_encoder_profile.py checks): 31 × 256 × 5,376 × 2 B of outputs and 31 × 3 × 896² × 2 B of pixels kept. The log:
William-Huang274/FIN_Insight_Agent's Qwen3.5-9B through `vllm.LLM` 0.21.0 on an RTX 5090 (search-index id 56620156840,
tests/data/calibration/SOURCES.md session 66 helper A), `language_model_only` and `skip_mm_profiling` both set, logged
342,528 KV tokens.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvtop.domain.calibration.estimate import CapacityPlan, planned_capacity
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.skip_mm_profiling import skips_encoder
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.sources.hub import load_config_file
from tests.data_paths import CONFIGS

GEMMA3_27B = CONFIGS / "google--gemma-3-27b-it.json"
LLAMA_8B = CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"
QWEN35_9B = CONFIGS.parent / "calibration" / "configs" / "Qwen--Qwen3.5-9B.RECONSTRUCTED.json"
GEMMA3_KEPT = 31 * 256 * 5376 * 2 + 31 * 3 * 896**2 * 2  # the encoder outputs and pixels the profile keeps
FIN_INSIGHT_LOGGED = 342_528
FIN_INSIGHT = ["--llm-class", "--dtype", "float16", "--max-model-len", "65536", "--max-num-seqs", "1",
               "--gpu-memory-utilization", "0.92", "--enforce-eager", "--language-model-only"]  # fmt: skip


def _plan(config: Path, gpu: str, *flags: str) -> CapacityPlan:
    settings = parse_flags("vllm", list(flags))
    return planned_capacity(
        load_config_file(config), settings, gpu_total_bytes=gpu_total_bytes(gpu), gpu_name=gpu
    )


def test_the_skipped_profile_keeps_no_encoder_cache_through_the_text_run() -> None:
    base = ["--engine-version", "0.19.0", "--max-model-len", "8192"]
    profiled, skipped = (
        _plan(GEMMA3_27B, "H100", *base),
        _plan(GEMMA3_27B, "H100", *base, "--skip-mm-profiling"),
    )
    with_encoder, without = profiled.estimate.term(Term.ACTIVATION), skipped.estimate.term(Term.ACTIVATION)
    assert with_encoder is not None and without is not None
    # the same text run, less the 31 images' outputs and pixels the encoder profile would have kept
    assert with_encoder.bytes - without.bytes == GEMMA3_KEPT
    assert "encoder profile" not in without.basis
    assert skipped.ledger.engine.token_capacity > profiled.ledger.engine.token_capacity
    terms = {term.label: term for term in skipped.ledger.ranks[0].terms}
    assert terms["vision tower profile skipped"].modelled
    assert terms["vision tower profile skipped"].setting == "--skip-mm-profiling"


def test_the_fin_insight_start_served_text_only_plans_as_without_the_flag() -> None:
    # `--language-model-only` builds no tower, so nothing is profiled to skip: the same plan, within 5 % of its log
    lm_only = _plan(QWEN35_9B, "RTX5090", "--engine-version", "0.21.0", *FIN_INSIGHT)
    both = _plan(QWEN35_9B, "RTX5090", "--engine-version", "0.21.0", *FIN_INSIGHT, "--skip-mm-profiling")
    assert both.ledger.engine.token_capacity == lm_only.ledger.engine.token_capacity
    assert (both.token_capacity_min, both.token_capacity_max) == (
        lm_only.token_capacity_min,
        lm_only.token_capacity_max,
    )
    assert abs(both.ledger.engine.token_capacity / FIN_INSIGHT_LOGGED - 1) < 0.05
    assert both.token_capacity_min <= FIN_INSIGHT_LOGGED <= both.token_capacity_max


def test_a_text_model_plans_as_without_the_flag() -> None:
    base = ["--engine-version", "0.21.0", "--max-model-len", "8192"]
    plain, flagged = _plan(LLAMA_8B, "H100", *base), _plan(LLAMA_8B, "H100", *base, "--skip-mm-profiling")
    assert flagged.ledger.engine.token_capacity == plain.ledger.engine.token_capacity
    assert flagged.estimate.term(Term.ACTIVATION) == plain.estimate.term(Term.ACTIVATION)


def test_a_release_without_the_flag_refuses_it() -> None:
    with pytest.raises((InputError, UnsupportedModelError), match="skip-mm-profiling"):
        _plan(
            GEMMA3_27B, "H100", "--engine-version", "0.10.0", "--max-model-len", "8192", "--skip-mm-profiling"
        )


@pytest.mark.parametrize(("release", "gpu", "skips"), [
    ("0.10.1", "H100", True),   # V1: gpu_model_runner.py:2569
    ("0.10.1", "T4", False),    # below compute capability 8.0 v0.10.1 falls back to V0, whose runner never reads it
    ("0.10.2", "T4", True),     # v0.10.2's V1 takes every capability
    ("0.33.0", "H100", True),
])  # fmt: skip
def test_the_v1_runner_reads_the_flag_v0_does_not(release: str, gpu: str, skips: bool) -> None:
    version = ResolvedVersion(text=release)
    assert skips_encoder(version, gpu, parse_flags("vllm", ["--skip-mm-profiling"])) is skips
    assert not skips_encoder(version, gpu, parse_flags("vllm", []))


@pytest.mark.parametrize("unset", [["--no-skip-mm-profiling"], ["--skip-mm-profiling", "false"]])
def test_the_switch_unset_profiles_the_encoder(unset: list[str]) -> None:
    """A bool field of MultiModalConfig: argparse's BooleanOptionalAction takes `--no-skip-mm-profiling`
    (engine/arg_utils.py get_kwargs :195-197 at v0.10.1), and `LLM(skip_mm_profiling=False)` leaves it unset."""
    base = ["--engine-version", "0.19.0", "--max-model-len", "8192"]
    profiled, unset_plan = _plan(GEMMA3_27B, "H100", *base), _plan(GEMMA3_27B, "H100", *base, *unset)
    assert unset_plan.estimate.term(Term.ACTIVATION) == profiled.estimate.term(Term.ACTIVATION)
    assert unset_plan.ledger.engine.token_capacity == profiled.ledger.engine.token_capacity
