"""vLLM's last budget step where it refuses to start (docs/engines/vllm.md §4.2): the step says why the tokens are 0
and what a shorter --max-model-len gains, in vLLM's own arithmetic.

Pixtral-12B as converted (tests/data/configs/towers): 40 layers, 8 KV heads of 128, bf16, so a 16-token block is
16 × 40 × 2 × 8 × 128 × 2 B = 2,621,440 B, and its 1,024,000-token context needs 1,024,000 ÷ 16 = 64,000 blocks. vLLM
v1 `_check_enough_kv_cache_memory` (vllm/v1/core/kv_cache_planning.py, v0.33.0) raises "To serve at least one request
with the model's max seq len (1024000), …" where those blocks exceed the KV memory, and names "the estimated maximum
model length": the largest L with cdiv(L, 16) blocks within the memory it checks, i.e. the blocks that fit × 16; from
v0.29.0 (PR #47272) it checks the memory less one block (the null block BlockPool keeps: `check_memory` in
`get_kv_cache_configs`), so one block fewer.
"""

from __future__ import annotations

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS

MIB = 1 << 20
H100_BYTES = 81_559 * MIB
BLOCK_BYTES = 16 * 40 * 2 * 8 * 128 * 2
PIXTRAL = "towers/mistral-community--pixtral-12b-as-converted.json"


def test_a_context_whose_request_does_not_fit_says_why_and_what_a_shorter_one_holds() -> None:
    assert BLOCK_BYTES == 2_621_440
    available = 18_716 * BLOCK_BYTES + 1_000  # the KV memory vLLM logged, given: 18,716 whole blocks
    plan = predict(
        load_model(str(CONFIGS / PIXTRAL)), parse_flags("vllm", ["--engine-version", "0.28.0"]),
        gpu_total_bytes=H100_BYTES, gpu_name="H100", measured=MeasuredInputs(available_kv_bytes=available),
    )  # fmt: skip
    engine = plan.engine
    assert not engine.fits and engine.token_capacity == 0 and engine.num_blocks == 18_716
    step = engine.steps[-1]
    assert (step.label, step.value) == ("tokens: one request needs 64,000 blocks", 0)
    assert step.note == (
        "vLLM refuses to start: 'To serve at least one request with the model's max seq len (1024000), …' "
        "(18,716 blocks fit); --max-model-len 299456 or less starts with 299,456 tokens (vLLM's estimated maximum)"
    )
    # the gain, planned: at 18,716 × 16 = 299,456 one request takes every block, int(18,716 ÷ 18,716 × 299,456)
    shorter = predict(
        plan.model, parse_flags("vllm", ["--max-model-len", "299456", "--engine-version", "0.28.0"]),
        gpu_total_bytes=H100_BYTES, gpu_name="H100", measured=MeasuredInputs(available_kv_bytes=available),
    )  # fmt: skip
    assert shorter.engine.fits and shorter.token_capacity == 299_456


def test_from_v0_29_the_check_leaves_the_null_block_out() -> None:
    """The same memory at v0.29.0: the check counts 18,716 − 1 blocks, so the estimate is 18,715 × 16 = 299,440 and a
    request of 18,716 blocks (299,456 tokens) is refused though the pool would hold it."""
    available = 18_716 * BLOCK_BYTES + 1_000
    model = load_model(str(CONFIGS / PIXTRAL))

    def at(*flags: str):  # noqa: ANN202
        return predict(
            model, parse_flags("vllm", [*flags, "--engine-version", "0.29.0"]), gpu_total_bytes=H100_BYTES,
            gpu_name="H100", measured=MeasuredInputs(available_kv_bytes=available),
        ).engine  # fmt: skip

    engine = at()
    assert not engine.fits and engine.num_blocks == 18_716
    assert engine.steps[-1].note.endswith(
        "(18,716 blocks fit); --max-model-len 299440 or less starts (vLLM's estimated maximum: the check leaves 1 of "
        "the 18,716 blocks out, the null block)"
    )
    assert not at("--max-model-len", "299456").fits
    longest = at("--max-model-len", "299440")  # 18,715 blocks: fits, and the pool keeps all 18,716
    assert longest.fits and longest.num_blocks == 18_716 and longest.token_capacity == int(18_716 / 18_715 * 299_440)
