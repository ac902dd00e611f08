"""The plan's weights are one figure: the pre-start term and the budget's line read the same bytes, labelled by
where they come from.

Before, `kvtop plan --model llama-3.1-8b --engine vllm --gpu H100 --free-after-load 60GiB` labelled the weights
"measured … exact" at 14.99 GiB (the book and the rope's cos/sin cache) while its budget charged 14.96 GiB (the book
alone): vLLM never reads the free memory after the load (its pool is total × gpu_memory_utilization less the
weights and its profile, gpu_worker.py determine_available_memory), so that flag measures none of its terms.
Expected bytes by hand from the config (tests/data/configs/meta-llama--Llama-3.1-8B-Instruct.json: hidden 4096,
32 layers, 8 KV heads of 128, intermediate 14336, vocab 128256, max_position_embeddings 131072, bf16).
"""

from __future__ import annotations

from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.wording import GIB
from tests.domain.test_calibration import vllm_plan

# parameters: embedding and lm_head 128256 × 4096 each = 525,336,576; per layer attention 4096 × (4096 + 2 × 1024 +
# 4096) = 33,554,432 and MLP 3 × 4096 × 14336 = 176,160,768 and two norms 8,192; × 32 layers, + the final norm 4,096:
# 8,030,261,248 parameters × 2 B = 16,060,522,496 B
BOOK = 16_060_522_496
ROPE_CACHE = 131_072 * 128 * 2  # rotary_embedding/base.py: max positions × rotary dim (cos and sin halves) × 2 B
WEIGHTS = BOOK + ROPE_CACHE  # 16,094,076,928 B = 14.99 GiB


def test_free_after_load_leaves_vllm_s_weights_calibrated_and_one_figure() -> None:
    plain = vllm_plan()
    given = vllm_plan(measured=MeasuredInputs(free_after_load_bytes=60 * GIB))
    for plan in (plain, given):
        weights = plan.estimate.term(Term.WEIGHTS)
        assert weights is not None and weights.source == "calibrated" and weights.error_bytes > 0
        assert weights.bytes == WEIGHTS
        assert plan.ledger.weights_bytes == WEIGHTS  # the budget's "− weights" line (the calibrated ledger)
    assert given.ledger.token_capacity == plain.ledger.token_capacity  # the flag moves nothing vLLM reads
