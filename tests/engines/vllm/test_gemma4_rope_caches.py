"""Gemma-4's two rotary caches (kvtop/domain/rope_cache.py): `get_rope` keys its module by the head size, and the
global layers' `Gemma4RotaryEmbedding` keeps a cache the whole 512-wide head wide (vLLM 0.19.0
model_executor/models/gemma4.py:365, rotary_embedding/gemma4_rope.py:47-54), beside the sliding layers' 256-wide one.

Expected values: the arithmetic of those files (262,144 positions × (256 + 512) values × 2 B), and the load vLLM
0.19.0 logged for Gemma-4-26B-A4B on an A100 ('Model loading took 48.5 GiB', myoceane.fr, the corpus record
myoceane-gemma-4-26b-a4b-a100).
"""

from __future__ import annotations

from benchmarks.calibration.corpus import load
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.vllm import calibration as vllm
from kvtop.domain.rope_cache import other_head_sizes, rope_cache_bytes
from kvtop.sources.hub import load_model
from kvtop.units import GIB
from tests.data_paths import CONFIGS

RECORDS = {record.id: record for record in load("vllm")}


def test_the_global_layers_build_their_own_cache() -> None:
    model = load_model(str(CONFIGS / "heldout" / "wave5" / "google--gemma-4-31B-it.json"))
    assert other_head_sizes(model) == (512,)
    found = rope_cache_bytes(model, 2, "rotary_embedding/base.py")
    assert found is not None and found[0] == 262_144 * (256 + 512) * 2  # 384 MiB on every rank
    assert "(256 + 512)" in found[1]


def test_a_model_of_one_head_size_keeps_one_cache() -> None:
    model = load_model(str(CONFIGS / "google--gemma-3-27b-it.json"))
    assert other_head_sizes(model) == ()


def test_gemma4_26b_loads_what_vllm_logged() -> None:
    """48.5 GiB logged; one cache planned 48.22 (−0.6 %), both 48.47."""
    weights = {term.term: term for term in vllm.terms(RECORDS["myoceane-gemma-4-26b-a4b-a100"].inputs())}[Term.WEIGHTS]
    assert abs(weights.bytes / GIB / 48.5 - 1) < 0.002
