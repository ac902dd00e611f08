"""The speculative decoding that keeps vLLM's V1 model runner where the release would run V2 (spec_methods.py).

`VllmConfig.use_v2_model_runner` returns False where `_get_v2_model_runner_unsupported_features` lists something
(config/vllm.py, read in the wheels): at v0.22.0 (:1998-2013) and v0.23.0 (:2007-2022) ngram and ngram_gpu, and any
method but eagle, eagle3, mtp (dflash too), parallel drafting for any method, EAGLE3 at PP > 1; v0.24.0 (:2027-2049)
runs dflash on V2 (and its parallel drafting); at v0.25.0 (:2068-2079), v0.26.0, v0.27.1 and v0.28.0 (:2396-2407) ngram and
ngram_gpu, and any method but eagle, eagle3, mtp, dflash, dspark; v0.29.0 adds extract_hidden_states to V2's; v0.31.0
runs draft_model on V2, v0.32.0 ngram; v0.33.0 keeps suffix and custom_class on V1. EAGLE3 at PP > 1 keeps V1 from
v0.25.0 to v0.29.0 (:2585-2589), not at v0.30.0. The V1 runner's profile makes the rejection sampler's dummy run
(rejection_sampler.py), V2's does not, so an n-gram launch at v0.26.0 gets that count."""

from __future__ import annotations

import pytest

from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.rejection_sampler import rejection_extra_copies
from kvtop.domain.engines.vllm.runner_eras import runs_v2
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import LaunchSettings, parse_flags
from kvtop.sources.hub import load_config_file, load_model
from tests.data_paths import CONFIGS

MISTRAL = load_model(str(CONFIGS / "mistralai--Mistral-7B-v0.1.json"))  # dense: V2 from v0.25.0 without a method
QWEN3_8B = load_model(str(CONFIGS / "Qwen--Qwen3-8B.json"))  # Qwen3ForCausalLM: listed from v0.22.0
QWEN25_7B = load_config_file(CONFIGS / "Qwen--Qwen2.5-7B-Instruct.json")
NGRAM = '{"method": "ngram", "num_speculative_tokens": 5, "prompt_lookup_max": 4}'
DRAFT = '{"model": "Qwen/Qwen2.5-0.5B-Instruct", "num_speculative_tokens": 3}'  # no method: draft_model
EAGLE3 = '{"method": "eagle3", "model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 3}'
MTP = '{"method": "deepseek_mtp", "num_speculative_tokens": 1}'  # runs as "mtp"
SUFFIX = '{"method": "suffix", "num_speculative_tokens": 3}'
DFLASH = '{"method": "dflash", "model": "z-lab/Qwen3-8B-DFlash-b16", "num_speculative_tokens": 7}'
PARALLEL_EAGLE = '{"method": "eagle", "model": "yuhuili/EAGLE-LLaMA3.1-Instruct-8B", "parallel_drafting": true}'


def _launch(spec: str | None, *extra: str) -> LaunchSettings:
    return parse_flags("vllm", [*(("--speculative-config", spec) if spec else ()), *extra])


@pytest.mark.parametrize(("release", "spec", "v2"), [
    ("0.21.0", None, False),  # V1 by default
    ("0.24.0", None, True),  # MistralForCausalLM on the v0.23.0 list (the v2_listed era)
    ("0.25.0", None, True), ("0.25.0", NGRAM, False), ("0.25.0", DRAFT, False), ("0.25.0", EAGLE3, True),
    ("0.26.0", NGRAM, False), ("0.27.1", DRAFT, False), ("0.28.0", NGRAM, False), ("0.28.0", MTP, True),
    ("0.29.0", NGRAM, False), ("0.30.0", DRAFT, False), ("0.30.0", EAGLE3, True),
    ("0.31.0", DRAFT, True), ("0.31.0", NGRAM, False), ("0.32.0", NGRAM, True), ("0.32.0", SUFFIX, False),
    ("0.33.0", SUFFIX, False), ("0.33.0", NGRAM, True),
])  # fmt: skip
def test_the_runner_follows_each_release_s_list(release: str, spec: str | None, v2: bool) -> None:
    assert runs_v2(ResolvedVersion(text=release), MISTRAL, _launch(spec)) is v2


@pytest.mark.parametrize(("release", "spec", "v2"), [
    ("0.22.0", None, True), ("0.22.0", NGRAM, False), ("0.22.0", DRAFT, False), ("0.22.0", EAGLE3, True),
    ("0.22.1", NGRAM, False), ("0.22.1", MTP, True),
    ("0.23.0", None, True), ("0.23.0", NGRAM, False), ("0.23.0", SUFFIX, False), ("0.23.0", DFLASH, False),
    ("0.23.0", PARALLEL_EAGLE, False), ("0.23.0", MTP, True),
    ("0.24.0", NGRAM, False), ("0.24.0", DRAFT, False), ("0.24.0", DFLASH, True), ("0.24.0", PARALLEL_EAGLE, False),
    ("0.24.0", EAGLE3, True),
])  # fmt: skip
def test_the_v2_listed_era_keeps_v1_for_the_methods_its_v2_does_not_run(release: str, spec: str | None, v2: bool) -> None:
    """Qwen3ForCausalLM is on every v2_listed list (v0.22.0 config/vllm.py:69), so only the method decides."""
    assert runs_v2(ResolvedVersion(text=release), QWEN3_8B, _launch(spec)) is v2


def test_eagle3_at_pp_2_keeps_v1_until_v0_30() -> None:
    launch = _launch(EAGLE3, "--pipeline-parallel-size", "2")
    assert not runs_v2(ResolvedVersion(text="0.23.0"), QWEN3_8B, launch)
    assert not runs_v2(ResolvedVersion(text="0.29.0"), MISTRAL, launch)
    assert runs_v2(ResolvedVersion(text="0.30.0"), MISTRAL, launch)


def test_an_ngram_launch_at_v0_26_gets_the_v1_profile_and_its_rejection_count() -> None:
    """On the V1 runner the n-gram launch's peak holds the rejection sampler's dummy run: 2 d + 4 − 1 = 4 copies of
    seqs × vocab × 4 B beyond the plain sampler for BF16 (rejection_sampler.py, read at v0.26.0), where the eagle3
    launch stays on V2's counted profile (v2_profile.py) as the launch without a method."""

    def activation(spec: str | None) -> tuple[int, str]:
        settings = parse_flags("vllm", ["--engine-version", "0.26.0", *(("--speculative-config", spec) if spec else ())])
        plan = planned_capacity(QWEN25_7B, settings, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100")
        term = plan.estimate.term(Term.ACTIVATION)
        assert term is not None
        return term.bytes, term.basis

    plain, eagle, ngram = activation(None), activation(EAGLE3), activation(NGRAM)
    assert "V2 model runner" in plain[1] and eagle == plain
    assert "V2 model runner" not in ngram[1]
    rejection = round(rejection_extra_copies(QWEN25_7B) * 1024 * QWEN25_7B.vocab_size * 4)
    assert rejection_extra_copies(QWEN25_7B) == 4.0
    assert ngram[0] >= rejection + 1024 * QWEN25_7B.vocab_size * 4  # the rejection copies and the logits at least
