"""SGLang's linear-attention state slots under speculative decoding, by release (engines/sglang/mamba_slots.py;
docs/engines/sglang.md §4.2).

Expected figures: SGLang's own arithmetic worked by hand from its code (0.5.12/0.5.14
model_runner_kv_cache_mixin.py `handle_max_mamba_cache`, 0.5.17 mem_cache/kv_cache_configurator.py
`_handle_max_mamba_cache`) and the token count the engine reported (tests/data/calibration/sglang.jsonl). Never
kvtop's own figures.

Qwen3.6-27B at TP 1, a request's state (configs/mamba_utils.py): 48 Gated-DeltaNet layers × (conv (2 × 16 × 128 +
48 × 128) channels × 3 × 2 B + temporal 48 × 128 × 128 × 4 B) = 48 × 3,207,168 = 153,944,064 B. A rest of 57 GiB
gives the Mamba share 57 × 0.9 ÷ 1.9 = 27 GiB = 28,991,029,248 B (--mamba-full-memory-ratio 0.9); EAGLE with 3 steps
at top-1 drafts D = 4 tokens; --max-running-requests 4; extra_buffer with the overlap schedule: 5 slots a request.
"""

from __future__ import annotations

import pytest

from benchmarks.calibration.corpus import load
from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.sglang.mamba_slots import mamba_slots
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.gpus import gpu_key
from kvtop.domain.launch import parse_flags

PER_REQ = 153_944_064
EAGLE = ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
         "--speculative-num-draft-tokens", "4", "--max-running-requests", "4"]  # fmt: skip
OXCART = "file67494338468-qwen3.6-27b-fp8-rtxpro6000maxq-eagle-nightly"


@pytest.mark.parametrize(
    ("release", "slots", "state", "spec"),
    [
        # rest −= 153,944,064 × 4 × 4 = 2,463,105,024 B first; share (57 GiB − that) × 0.9 ÷ 1.9 // per_req = 180
        ("0.5.12", 180, 180 * PER_REQ, 2_463_105_024),
        # K = 28,991,029,248 // (per_req × (1 + 4 ÷ 5)) = 104; intermediates min(4, 104 // 5) × 4 × per_req
        ("0.5.14", 104, 104 * PER_REQ, 2_463_105_024),
        # K = (share − per_req × 5) // (per_req × 1.8) = 101, charged 102; intermediates (min(4, 20) + 1) × 4
        ("0.5.17", 101, 102 * PER_REQ, 3_078_881_280),
    ],
)
def test_the_joint_solve_by_release(release: str, slots: int, state: int, spec: int) -> None:
    settings = parse_flags("sglang", EAGLE)
    solved = mamba_slots(57.0, PER_REQ, settings, 1, ResolvedVersion(text=release), 5)
    assert solved.slots == slots
    assert solved.state_bytes == state
    assert solved.spec_bytes == spec


def test_without_speculation_the_slots_fill_the_share() -> None:
    """0.5.14, no draft: K = 28,991,029,248 // 153,944,064 = 188, no intermediates."""
    solved = mamba_slots(57.0, PER_REQ, parse_flags("sglang", []), 1, ResolvedVersion(text="0.5.14"), 5)
    assert (solved.slots, solved.spec_bytes) == (188, 0)


def test_radix_off_takes_max_running_requests_and_their_intermediates() -> None:
    """0.5.14 with --disable-radix-cache: K = --max-running-requests 4; intermediates 4 × 4 × per_req."""
    settings = parse_flags("sglang", [*EAGLE, "--disable-radix-cache"])
    solved = mamba_slots(57.0, PER_REQ, settings, 1, ResolvedVersion(text="0.5.14"), 1)
    assert solved.slots == 4
    assert solved.spec_bytes == 16 * PER_REQ


def test_top1_eagle_drafts_steps_plus_one() -> None:
    """SGLang sets D = steps + 1 at top-1 (0.5.14 arg_groups/speculative_hook.py:383-390): 5 steps → D 6, whatever
    --speculative-num-draft-tokens says; min(4, 104 // 5 …) requests × 6 intermediates."""
    flags = [*EAGLE[:3], "5", *EAGLE[4:]]
    solved = mamba_slots(57.0, PER_REQ, parse_flags("sglang", flags), 1, ResolvedVersion(text="0.5.14"), 5)
    # K = 28,991,029,248 // (per_req × (1 + 6 ÷ 5)) = 85; intermediates min(4, 17) × 6 × per_req
    assert solved.slots == 85
    assert solved.spec_bytes == 24 * PER_REQ


def test_draft_tokens_sglang_picks_are_refused() -> None:
    settings = parse_flags("sglang", ["--speculative-algorithm", "EAGLE"])
    with pytest.raises(UnsupportedModelError, match="speculative-num-draft-tokens"):
        mamba_slots(57.0, PER_REQ, settings, 1, ResolvedVersion(text="0.5.14"), 5)


def test_the_oxcart_eagle_start_lands_near_its_log() -> None:
    """Qwen3.6-27B-FP8 on an RTX PRO 6000 Max-Q with EAGLE (0.5.14 stands for the nightly): SGLang reported
    1,206,208 tokens. Planned blind, kvtop had 939,648 (−22.1 %) while it sized 191 slots and no intermediates."""
    record = next(r for r in load("sglang") if r.id == OXCART)
    assert record.model is not None and record.gpu_total_bytes is not None
    plan = planned_capacity(record.model, record.settings, gpu_total_bytes=record.gpu_total_bytes,
                            gpu_name=gpu_key(record.gpu), measured=MeasuredInputs())  # fmt: skip
    assert abs(plan.ledger.token_capacity / 1_206_208 - 1) < 0.05


def test_ngram_drafts_twelve_when_not_typed() -> None:
    """NGRAM's default D = 12 (0.5.14 arg_groups/speculative_hook.py:420-421): K = 28,991,029,248 // (per_req × (1 +
    12 ÷ 5)) = 55; intermediates min(4, 11) × 12 × per_req."""
    settings = parse_flags("sglang", ["--speculative-algorithm", "NGRAM", "--max-running-requests", "4"])
    solved = mamba_slots(57.0, PER_REQ, settings, 1, ResolvedVersion(text="0.5.14"), 5)
    assert solved.slots == 55
    assert solved.spec_bytes == 48 * PER_REQ


def test_radix_off_under_speculation_takes_the_default_48() -> None:
    """With no --max-running-requests, the speculative hook sets 48 (0.5.14 arg_groups/speculative_hook.py:270-271)
    before the pool is sized, so --disable-radix-cache takes 48 slots, 48 × 4 intermediates (0.5.14 :151-166)."""
    settings = parse_flags("sglang", [*EAGLE[:-2], "--disable-radix-cache"])  # EAGLE less its 4 requests
    solved = mamba_slots(57.0, PER_REQ, settings, 1, ResolvedVersion(text="0.5.14"), 1)
    assert solved.slots == 48
    assert solved.spec_bytes == 48 * 4 * PER_REQ


def test_057_charges_the_intermediates_in_the_auto_branch_alone() -> None:
    """0.5.7 model_runner_kv_cache_mixin.py:163-177: the auto branch takes per_req × mrr × D (mrr not ÷ attn_dp) off
    the rest first: at attn_dp 2, 153,944,064 × 4 × 4 = 2,463,105,024 B, then (57 GiB − that) × 0.9 ÷ 1.9 //
    per_req = 180 slots; the radix-off branch (:150-162) takes mrr 4 as the slots and charges no intermediates."""
    version = ResolvedVersion(text="0.5.7")
    auto = mamba_slots(57.0, PER_REQ, parse_flags("sglang", EAGLE), 2, version, 3)
    assert (auto.slots, auto.spec_bytes) == (180, 2_463_105_024)
    radix_off = mamba_slots(57.0, PER_REQ, parse_flags("sglang", [*EAGLE, "--disable-radix-cache"]), 1, version, 1)
    assert (radix_off.slots, radix_off.spec_bytes) == (4, 0)


def test_before_057_the_per_slot_charge_is_refused() -> None:
    """0.5.5 model_runner.py:1330-1372 sizes each slot with its D intermediates inside (per_req × (1 + D)): not
    modelled, refused by name."""
    with pytest.raises(UnsupportedModelError, match="intermediate states inside each"):
        mamba_slots(57.0, PER_REQ, parse_flags("sglang", EAGLE), 1, ResolvedVersion(text="0.5.5"), 3)


def test_a_pd_prefill_rank_keeps_no_intermediates_at_0523() -> None:
    """0.5.23 kv_cache_configurator.py:172-181, :3294-3298: a prefill rank (`--disaggregation-mode prefill`) reserves no
    speculative state, so its slots are sized as without a draft: (28,991,029,248 − 153,944,064) // 153,944,064 = 187;
    0.5.17 (:1870-1872, :1930) reserves them there too (K = 101, as on a decode rank); 0.5.20 is not read: refused."""
    settings = parse_flags("sglang", [*EAGLE, "--disaggregation-mode", "prefill"])
    solved = mamba_slots(57.0, PER_REQ, settings, 1, ResolvedVersion(text="0.5.23"), 5)
    assert (solved.slots, solved.spec_bytes) == (187, 0)
    assert mamba_slots(57.0, PER_REQ, settings, 1, ResolvedVersion(text="0.5.17"), 5).slots == 101
    with pytest.raises(UnsupportedModelError, match="PD prefill"):
        mamba_slots(57.0, PER_REQ, settings, 1, ResolvedVersion(text="0.5.20"), 5)
