"""The V2 model runner's persistent sampler state, charged by vLLM's budget from v0.27.0 (`v2_sampler_state.py`).

The code (read at v0.27.0, v0.27.1, v0.28.0, v0.29.0, v0.30.0): the V2 runner's `load_model` builds the `Sampler` on
the last pipeline stage only (v1/worker/gpu/model_runner.py:351 at v0.27.1), whose `PenaltiesState` holds
`output_bin_counts` = zeros(max_num_reqs, vocab, int32) and `prompt_bin_mask` = zeros(max_num_reqs, cdiv(vocab, 32),
int32) (sample/penalties.py:32-41), and its `StructuredOutputsWorker` `grammar_bitmask` = zeros(max_num_logits,
cdiv(vocab, 32), int32) (structured_outputs.py:17). v0.27.0's `memory_profiling` charges `total_consumed`, the free
memory taken since the init snapshot (utils/mem_utils.py:317-326); v0.26.0's charges weights + torch peak increase +
non-torch increase, none of which holds a tensor made between the load and the profile.

Qwen3-32B (vocabulary 151,936) at 1,024 seqs, hand-computed:
    1,024 × 151,936 × 4           = 622,329,856 B
    2 × 1,024 × ⌈151,936/32⌉ × 4  = 2 × 1,024 × 4,748 × 4 = 38,895,616 B
    together                        661,225,472 B = 0.616 GiB
At 256 seqs (vllm serve's default below 70 GiB of GPU memory): 165,306,368 B.
"""

from __future__ import annotations

from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.vllm.v2_sampler_state import sampler_state_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.wording import GIB, MIB
from kvtop.sources.hub import load_config_file
from tests.data_paths import CONFIGS

QWEN3_32B = load_config_file(CONFIGS / "Qwen--Qwen3-32B.json")
STATE_1024 = 1024 * 151936 * 4 + 2 * 1024 * 4748 * 4  # 661,225,472 B
STATE_256 = 256 * 151936 * 4 + 2 * 256 * 4748 * 4  # 165,306,368 B


def _non_torch(version: str, *flags: str) -> tuple[int, str]:
    settings = parse_flags("vllm", ["--engine-version", version, "--max-model-len", "32768", *flags])
    plan = planned_capacity(QWEN3_32B, settings, gpu_total_bytes=97887 * MIB, gpu_name="RTXPRO6000",
                            measured=MeasuredInputs(weights_bytes=round(30.52 * GIB)))  # fmt: skip
    term = plan.estimate.term(Term.NON_TORCH)
    assert term is not None
    return term.bytes, term.basis


def test_the_state_is_the_code_arithmetic() -> None:
    assert sampler_state_bytes(1024, 151936) == STATE_1024 == 661_225_472
    assert sampler_state_bytes(256, 151936) == STATE_256 == 165_306_368


def test_charged_from_v0_27_0_only() -> None:
    """v0.26.0 and v0.27.0 both run Qwen3-32B on V2 and hold the state; only v0.27.0's budget charges it."""
    before, before_why = _non_torch("0.26.0", "--max-num-seqs", "1024")
    after, after_why = _non_torch("0.27.0", "--max-num-seqs", "1024")
    assert "V2 sampler" not in before_why and "V2 sampler" in after_why
    assert after - before == STATE_1024


def test_scales_with_the_request_slots() -> None:
    wide, _ = _non_torch("0.28.0", "--max-num-seqs", "1024")
    narrow, _ = _non_torch("0.28.0", "--max-num-seqs", "256")
    assert wide - narrow == STATE_1024 - STATE_256
