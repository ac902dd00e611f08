"""A hybrid's state pool too small for one running request (engines/sglang/mamba_slots.py `too_small_note`).

SGLang's rule, read in its code: from v0.5.13 it raises when K = max_mamba_cache_size ≤ 0 ('Not enough GPU memory for
hybrid (mamba/linear-attention) state cache', 0.5.13 model_runner_kv_cache_mixin.py:167, 0.5.23
mem_cache/kv_cache_configurator.py:3392) and when K // ratio ≤ 0 ('… too small to serve any requests', 0.5.13 :895,
0.5.23 :3152). Before this fix kvtop planned such launches as fitting, 48 requests with K negative (its negative state
bytes handed back to the KV budget).

Expected figures: SGLang's 0.5.23 joint solve worked by hand (kv_cache_configurator.py:3359-3377). A request's state as
in test_mamba_spec.py: 153,944,064 B; EAGLE top-1, 3 steps: D = 4; 5 slots a request.
"""

from __future__ import annotations

import json

from kvtop.domain.engines.sglang.mamba_slots import mamba_slots, too_small_note
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA

PER_REQ = 153_944_064
EAGLE = ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
         "--speculative-num-draft-tokens", "4"]  # fmt: skip
V0523 = ResolvedVersion(text="0.5.23")


def test_a_negative_k_charges_no_negative_state() -> None:
    """A rest of 0.5 GiB: share 0.5 × 0.9 ÷ 1.9 GiB = 254,313,418 B; K = (254,313,418 − 153,944,064 × 5) //
    (153,944,064 × 1.8) = −2, which SGLang refuses. kvtop counts 0 slots and the padding slot alone, never −1 slot."""
    solved = mamba_slots(0.5, PER_REQ, parse_flags("sglang", [*EAGLE, "--max-running-requests", "4"]), 1, V0523, 5)
    assert (solved.slots, solved.state_bytes) == (0, PER_REQ)
    assert too_small_note(solved.slots, 5, V0523) is not None


def test_fewer_slots_than_one_request_serves_none() -> None:
    """K // ratio: 4 // 5 = 0 requests (refused), 5 // 5 = 1 (served)."""
    assert too_small_note(4, 5, V0523) is not None
    assert too_small_note(5, 5, V0523) is None


def test_the_plan_does_not_fit() -> None:
    """Qwen3-Next-80B at TP 4 on an H100, --mem-fraction-static 0.49 (80 GiB), EAGLE: a few GiB of rest leaves fewer state
    slots than the 5 a request takes; the plan says it does not fit and why, with no request served. Was 0.475 (2 slots)
    until the checkpoint's one unstated `mtp.*` layer was counted (Qwen3-Next `mtp_unstated=1`, 107fded7: the EAGLE
    draft's MTP layer, +840,459,264 B of weights a rank), which left 0.475 a negative budget (−785,200,422 B) and no
    state pool at all; 0.49 puts 0.015 × 80 GiB back: 3 slots."""
    path = DATA / "configs" / "Qwen--Qwen3-Next-80B-A3B-Thinking.json"
    model = model_from_config(json.loads(path.read_text()), source=path.name)
    settings = parse_flags("sglang", ["--tp", "4", "--mem-fraction-static", "0.49", *EAGLE]).model_copy(
        update={"engine_version": "0.5.23"}
    )
    engine = predict(model, settings, gpu_total_bytes=80 << 30, gpu_name="H100").engine
    assert 0 < engine.state_slots < 5
    assert not engine.fits and engine.max_running_requests == 0
    assert engine.shortfall_bytes > 0
    assert any("serves no request" in note for note in engine.notes)
