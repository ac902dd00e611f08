"""trtllm-build's max_num_tokens cap (build_tokens.py) on the one corpus start it was read from: tensorrtllm_backend
issue 625's TensorRT-LLM 0.13 GLM-4-9B-chat engine, built at max_batch_size 1 and max_seq_len 2,048.

Expected values from that start's log, not from kvtop: `Allocated 196.76 MiB for execution context memory`, `648.06 KB
GPU memory for runtime buffers`, `2.98 MB GPU memory for decoder` (MemoryCounters::bytesToString divides by 1024: the
C++ runtime held about 0.196 GiB; tests/data/calibration/trtllm.jsonl's note). Uncapped, the build's 8,192 default
tokens would be charged 1 GiB of execution context. Read with no fits (`terms(inputs, {})`): the assumed form, which a
future `trtllm.runtime` fit would replace.
"""

from __future__ import annotations

from benchmarks.calibration.corpus import by_id
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.trtllm.calibration import RUNTIME_LABEL, terms
from kvtop.domain.wording import GIB, MIB

RECORD = "tritonbackend-issue625-glm-4-9b-chat-int8wo-4090-wsl2"
# execution context + runtime buffers + decoder, as printed
LOGGED_RUNTIME = round(196.76 * MIB + 648.06 * 1024 + 2.98 * MIB)


def test_the_capped_build_charges_the_runtime_its_log_prints() -> None:
    inputs = by_id()[RECORD].inputs()
    runtime = next(t for t in terms(inputs, {}) if t.term == Term.ACTIVATION and t.label == RUNTIME_LABEL)
    assert "execution context 2,048 tokens" in runtime.basis  # 1 × 2,048, not the 8,192 default
    assert abs(runtime.bytes - LOGGED_RUNTIME) < 0.1 * GIB  # 0.25 GiB + 7 logits buffers against 0.196 logged
