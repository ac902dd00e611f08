"""--mamba-full-memory-ratio, --max-mamba-cache-size and the 48 requests speculative decoding sets, by release
(engines/sglang/mamba_slots.py, spec_requests.py; docs/engines/sglang.md §4.2, §7).

Expected figures: SGLang's arithmetic worked by hand from its code (0.5.12/0.5.14 model_runner_kv_cache_mixin.py
`handle_max_mamba_cache`, 0.5.17 mem_cache/kv_cache_configurator.py `_handle_max_mamba_cache`, server_args.py /
arg_groups/speculative_hook.py for the 48), never kvtop's own figures. A request's state as in test_mamba_spec.py:
Qwen3.6-27B at TP 1, 48 × 3,207,168 = 153,944,064 B; EAGLE at top-1 with 3 steps drafts D = 4; 5 slots a request.
"""

from __future__ import annotations

import pytest

from benchmarks.calibration.corpus import load
from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.sglang.mamba_slots import mamba_slots
from kvtop.domain.engines.sglang.spec_requests import spec_default_requests
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.gpus import gpu_key
from kvtop.domain.launch import parse_flags

PER_REQ = 153_944_064
EAGLE = ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
         "--speculative-num-draft-tokens", "4", "--max-running-requests", "4"]  # fmt: skip
SIZE = ["--max-mamba-cache-size", "64"]


def test_the_ratio_sets_the_share() -> None:
    """0.5.14, no draft, --mamba-full-memory-ratio 0.5: share 57 GiB × 0.5 ÷ 1.5 = 20,401,094,656 B; K = that //
    153,944,064 = 132 (0.5.14 model_runner_kv_cache_mixin.py:190-199)."""
    settings = parse_flags("sglang", ["--mamba-full-memory-ratio", "0.5"])
    solved = mamba_slots(57.0, PER_REQ, settings, 1, ResolvedVersion(text="0.5.14"), 5)
    assert (solved.slots, solved.state_bytes, solved.spec_bytes) == (132, 132 * PER_REQ, 0)


@pytest.mark.parametrize(
    ("release", "attn_dp", "slots", "state", "spec"),
    [
        # 0.5.12 :83-105: rest −= per_req × (4 ÷ 1) × 4 first; K = 64 (not solved from the share)
        ("0.5.12", 1, 64, 64 * PER_REQ, 16 * PER_REQ),
        # 0.5.13 :92-110: K = 64; intermediates min(4, 64 // 5 = 12) × 4
        ("0.5.14", 1, 64, 64 * PER_REQ, 16 * PER_REQ),
        # attention DP 2: K = 64 // 2 = 32; min(4 // 2, 32 // 5) = 2 requests × 4
        ("0.5.14", 2, 32, 32 * PER_REQ, 8 * PER_REQ),
        # 0.5.17 :1874-1895: K = 64 charged 65; intermediates (min(4, 12) + 1) × 4
        ("0.5.17", 1, 64, 65 * PER_REQ, 20 * PER_REQ),
    ],
)
def test_a_typed_cache_size_sets_the_slots(release: str, attn_dp: int, slots: int, state: int, spec: int) -> None:
    solved = mamba_slots(57.0, PER_REQ, parse_flags("sglang", [*EAGLE, *SIZE]), attn_dp, ResolvedVersion(text=release), 5)
    assert (solved.slots, solved.state_bytes, solved.spec_bytes) == (slots, state, spec)


def test_a_typed_cache_size_before_057_is_refused() -> None:
    """0.5.5 model_runner.py:1325-1343 reads M only with the radix cache off, its auto branch overwrites it."""
    with pytest.raises(UnsupportedModelError, match="max-mamba-cache-size"):
        mamba_slots(57.0, PER_REQ, parse_flags("sglang", SIZE), 1, ResolvedVersion(text="0.5.5"), 3)


def test_the_ratio_at_a_release_without_it_is_refused() -> None:
    """--mamba-full-memory-ratio's first release read is 0.5.4 (srt/arg_groups/fields/schedule.py:220 at 0.5.23)."""
    with pytest.raises(InputError, match="mamba-full-memory-ratio"):
        mamba_slots(57.0, PER_REQ, parse_flags("sglang", ["--mamba-full-memory-ratio", "0.5"]), 1,
                    ResolvedVersion(text="0.5.2"), 3)  # fmt: skip


@pytest.mark.parametrize(
    ("release", "method", "expected"),
    [
        ("0.4.3.post2", "EAGLE", None),  # server_args.py:266: EAGLE sets no count
        ("0.4.3.post3", "EAGLE", 32),  # server_args.py:279-284
        ("0.4.4", "EAGLE", 32),  # server_args.py:280-282
        ("0.4.4.post4", "EAGLE", 48),  # server_args.py:329-334
        ("0.4.5", "EAGLE", 48),  # server_args.py:330-334
        ("0.4.5", "NEXTN", 48),  # read as EAGLE (:325-327)
        ("0.5.1", "STANDALONE", None),  # not in 0.5.1's choices (:1430) nor its hook (:618)
        ("0.5.2", "STANDALONE", 48),  # server_args.py:723-730
        ("0.5.10", "NGRAM", 48),  # server_args.py:3098-3099
        ("0.5.23", "DFLASH", 48),  # arg_groups/speculative_hook.py:438-442
        ("0.5.23", "UNO", None),  # _handle_uno :449 sets none
    ],
)
def test_the_speculative_default_of_48(release: str, method: str, expected: int | None) -> None:
    settings = parse_flags("sglang", ["--speculative-algorithm", method]).model_copy(update={"engine_version": release})
    assert spec_default_requests(settings, ResolvedVersion(text=release)) == expected


def test_a_typed_count_stands_under_speculation() -> None:
    assert spec_default_requests(parse_flags("sglang", EAGLE), ResolvedVersion(text="0.5.23")) is None


def test_req_to_token_takes_the_48() -> None:
    """Qwen3-4B on an H100 at 0.5.18, context 32,768, NGRAM and no --max-running-requests: the hook sets 48, so
    req_to_token is (48 + 1) × (32,768 + 4) × 4 B = 6,423,312 B (before: the automatic 4,096 requests, 537,067,536 B)."""
    record = next(r for r in load("sglang") if r.id == "file63400963934-qwen3-4b-h100")
    assert record.model is not None and record.gpu_total_bytes is not None
    flags = {**record.settings.flags, **parse_flags("sglang", ["--speculative-algorithm", "NGRAM"]).flags}
    settings = record.settings.model_copy(update={"flags": flags})
    plan = planned_capacity(record.model, settings, gpu_total_bytes=record.gpu_total_bytes,
                            gpu_name=gpu_key(record.gpu), measured=MeasuredInputs())  # fmt: skip
    assert plan.ledger.ranks[0].req_to_token_bytes == 49 * 32_772 * 4


@pytest.mark.parametrize(("release", "attn_dp", "slots"), [("0.5.7", 1, 512), ("0.5.8", 2, 256), ("0.5.9", 1, 188)])
def test_radix_off_without_a_count_takes_512_to_058(release: str, attn_dp: int, slots: int) -> None:
    """--disable-radix-cache, no --max-running-requests, no draft: 0.5.7 model_runner_kv_cache_mixin.py:155-162 and
    0.5.8 :173-180 take 512 slots ÷ attn_dp; 0.5.9 (:178-186) asks for the typed count, else the auto branch: the
    57 GiB rest's share 28,991,029,248 // 153,944,064 = 188."""
    settings = parse_flags("sglang", ["--disable-radix-cache"])
    solved = mamba_slots(57.0, PER_REQ, settings, attn_dp, ResolvedVersion(text=release), 1)
    assert (solved.slots, solved.state_bytes) == (slots, slots * PER_REQ)
