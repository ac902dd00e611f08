"""The V1 runner's forward floor holds the decoder layer's residual and normed input beside the MLP's intermediates,
as V0's and V2's counts do (`calibration_activation._forward_floor`, `v0_profile.HELD_HIDDEN`).

The code (v0.8.5.post1, model_executor/models/qwen2.py): `Qwen2DecoderLayer.forward` keeps `residual` and passes the
normed `hidden_states` to `self.mlp` (:248-250), which stays referenced by the caller during the call, and
`Qwen2MLP.forward` keeps `gate_up` to its return while `act_fn` and `down_proj` run (:93-97). So at the down
projection the peak holds, a token: gate-up (2 × intermediate), the activation's output (intermediate), the down
projection's output (hidden), the residual and the normed input (2 × hidden), fp16.

The log (search-index id 55204797650, 'L20 Qwen2.5-72B AWQ Throughput Notes', vLLM 0.8.5.post1, one L20,
`--quantization awq_marlin --dtype half`, one seq): `GPU KV cache size: 10,848 tokens` at 4,096 batched tokens and
12,320 at 2,048. A block is 16 tokens × 80 layers × 2 × 8 KV heads × 128 × 2 B = 5,242,880 B, so the pools are 678 and
770 blocks and the budgets [3.3105, 3.3154) and [3.7598, 3.7646) GiB: 2,048 more tokens take 0.4444-0.4541 GiB,
233,000-238,100 B a token (the rest of the budget is the same at both). Hand count (Qwen2.5-72B-AWQ: hidden 8,192,
intermediate 29,696):
    MLP alone      (3 × 29,696 + 8,192) × 2            = 194,560 B a token
    with the held  194,560 + 2 × 8,192 × 2              = 227,328 B a token  (under the log's 233,000: a floor)
    at 4,096 tokens 4,096 × 227,328                     = 931,135,488 B
"""

from __future__ import annotations

from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.launch import parse_flags
from kvtop.domain.wording import MIB
from kvtop.sources.hub import load_config_file
from tests.data_paths import DATA

QWEN25_72B_AWQ = load_config_file(DATA / "calibration" / "configs" / "Qwen--Qwen2.5-72B-Instruct-AWQ.RECONSTRUCTED.json")
PER_TOKEN = (3 * 29696 + 8192) * 2 + 2 * 8192 * 2  # 227,328 B
LOG_LEAST_PER_TOKEN = 233_000  # the log's two starts: 0.4444 GiB more for 2,048 tokens more, at least


def _activation_bytes(tokens: int, model_len: int) -> int:
    settings = parse_flags("vllm", [
        "--engine-version", "0.8.5.post1", "--quantization", "awq_marlin", "--dtype", "half",
        "--gpu-memory-utilization", "0.98", "--enforce-eager", "--swap-space", "1", "--max-num-seqs", "1",
        "--max-model-len", str(model_len), "--max-num-batched-tokens", str(tokens),
    ])  # fmt: skip
    plan = planned_capacity(QWEN25_72B_AWQ, settings, gpu_total_bytes=46068 * MIB, gpu_name="L20",
                            measured=MeasuredInputs())  # fmt: skip
    term = plan.estimate.term(Term.ACTIVATION)
    assert term is not None
    return term.bytes


def test_the_floor_is_the_code_count() -> None:
    assert PER_TOKEN == 227_328
    assert _activation_bytes(4096, 4096) == 4096 * PER_TOKEN == 931_135_488


def test_the_floor_stays_under_what_the_log_measured() -> None:
    """The two starts' difference is the forward's alone; the count, a floor, is at or under it."""
    step = _activation_bytes(4096, 4096) - _activation_bytes(2048, 8192)
    assert step == 2048 * PER_TOKEN
    assert step <= 2048 * LOG_LEAST_PER_TOKEN
