"""vLLM's profile counts the rejection sampler's dummy run when speculative decoding is on (#27, session 57).

Expected values from vLLM v0.17.1's code and a start's log, not from kvtop: `_dummy_sampler_run` (gpu_model_runner.py)
calls the rejection sampler after the plain sampler with one draft token a request; it holds 4 more copies of
seqs × vocab × 4 B than the plain sampler in a 16-bit model (rejection_sampler.py's docstring lists them). Qwen2.5-3B-
Instruct on a T4 (search-index id 58099879597), `--speculative-config '{"method": "ngram", "num_speculative_tokens": 5,
…}' --dtype half --gpu-memory-utilization 0.90 --max-model-len 4096`: 'Available KV cache memory: 6.15 GiB'; the same
launch without the rejection sampler's count left 6.81 GiB, 0.66 GiB more than the log.
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.calibration.estimate import calibrated_ledger
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.engines.vllm.rejection_sampler import rejection_extra_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.wording import GIB
from tests.data_paths import CONFIGS

NGRAM = '{"method": "ngram", "num_speculative_tokens": 5, "prompt_lookup_max": 4, "prompt_lookup_min": 2}'
BASE = [
    "--dtype",
    "half",
    "--gpu-memory-utilization",
    "0.90",
    "--max-model-len",
    "4096",
    "--engine-version",
    "0.17.1",
]
LOGGED_KV_GIB = 6.15
# vllm serve's defaults on a T4 at v0.17.1: 256 seqs; the vocabulary of Qwen2.5-3B's config
SEQS, VOCAB = 256, 151_936


def _qwen() -> ModelSpec:
    path = CONFIGS / "heldout" / "mlc--qwen2.5_3b.json"
    return model_from_config(json.loads(path.read_text()), source="Qwen2.5-3B")


def _version(text: str) -> ResolvedVersion:
    return ResolvedVersion(text=text, source=VersionSource.FLAG)


def test_four_copies_of_the_logits_in_a_16_bit_model() -> None:
    expected = 4 * SEQS * VOCAB * 4  # randn 2 rows × 2 B, bonus rows 2 B, … − the plain sampler's 3.5 copies
    assert (
        rejection_extra_bytes(_qwen(), _version("0.17.1"), SEQS, speculative=True) == expected == 622_329_856
    )


@pytest.mark.parametrize("version", ["0.18.0", "0.20.0", "0.26.0", "0.33.0"])
def test_the_same_copies_in_each_release_read_since(version: str) -> None:
    """v0.18.0-v0.33.0's `_dummy_sampler_run` and rejection sampler hold the same tensors at the defaults (read in
    each wheel, session 58): the v0.17.1 count."""
    assert rejection_extra_bytes(_qwen(), _version(version), SEQS, speculative=True) == 4 * SEQS * VOCAB * 4


@pytest.mark.parametrize(("version", "speculative"), [("0.17.1", False), ("0.16.0", True), ("0.33.0", False)])
def test_nothing_without_a_method_or_outside_the_read_releases(version: str, speculative: bool) -> None:
    assert rejection_extra_bytes(_qwen(), _version(version), SEQS, speculative=speculative) == 0


def test_the_ngram_start_on_a_t4_lands_on_its_logged_kv() -> None:
    model = _qwen()
    plain = calibrated_ledger(
        model, parse_flags("vllm", BASE), gpu_total_bytes=int(14.68 * GIB), gpu_name="T4"
    )
    spec = calibrated_ledger(model, parse_flags("vllm", ["--speculative-config", NGRAM, *BASE]),
                             gpu_total_bytes=int(14.68 * GIB), gpu_name="T4")  # fmt: skip
    grown = plain.ranks[0].kv_pool_bytes - spec.ranks[0].kv_pool_bytes
    assert (
        abs(grown - 4 * SEQS * VOCAB * 4) < 2 * 2**20
    )  # the count alone moves the budget (sampler above the fit)
    # the log's 6.15 GiB (printed to 0.01) against the plan on the T4's calibrated 14.68 GiB total
    assert abs(spec.ranks[0].kv_pool_bytes / GIB - LOGGED_KV_GIB) < 0.12
    assert plain.ranks[0].kv_pool_bytes / GIB - LOGGED_KV_GIB > 0.5
