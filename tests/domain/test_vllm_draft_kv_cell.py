"""A vLLM draft model's KV layers are sized with the draft's own heads, not the target's (#27, session 57).

Expected value from a start's log, not from kvtop: Qwen2.5-3B-Instruct with the draft Qwen2.5-0.5B-Instruct
(`--speculative-config '{"method": "draft_model", …, "num_speculative_tokens": 3}'`, vLLM 0.17.1 on a T4) printed
'Available KV cache memory: 4.49 GiB' and 98,112 tokens (search-index id 58099879597): 4.49 GiB ÷ 98,112 = 49,140 B a
token, the target's 36 layers × 2 heads × 128 × 2 × 2 B (36,864) plus the draft's 24 layers × 2 heads × 64 × 2 × 2 B
(12,288) = 49,152, where the target's cell for every draft layer would give 61,440.
"""

from __future__ import annotations

import json
from pathlib import Path

from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.wording import GIB
from tests.data_paths import CONFIGS, DATA

SPEC = '{"method": "draft_model", "model": "Qwen/Qwen2.5-0.5B-Instruct", "num_speculative_tokens": 3}'
FLAGS = ["--speculative-config", SPEC, "--dtype", "half", "--gpu-memory-utilization", "0.85", "--max-model-len", "4096",
         "--engine-version", "0.17.1"]  # fmt: skip
LOGGED_KV_GIB, LOGGED_TOKENS = 4.49, 98112


def _model(path: Path, name: str) -> ModelSpec:
    return model_from_config(json.loads(path.read_text()), source=name)


def test_the_draft_layers_take_the_drafts_own_heads() -> None:
    target = _model(CONFIGS / "heldout" / "mlc--qwen2.5_3b.json", "Qwen2.5-3B")
    draft = _model(DATA / "calibration" / "configs" / "Qwen--Qwen2.5-0.5B.RECONSTRUCTED.json", "Qwen2.5-0.5B")
    ledger = predict(target, parse_flags("vllm", FLAGS), gpu_total_bytes=15360 * 2**20, gpu_name="T4", draft=draft)
    cell = ledger.ranks[0].kv_bytes_per_token
    logged = LOGGED_KV_GIB * GIB / LOGGED_TOKENS  # printed to 0.01 GiB: ± 0.005 GiB ÷ 98,112 ≈ ± 55 B
    assert abs(cell - logged) < 0.005 * GIB / LOGGED_TOKENS
    assert cell == 36 * 2 * 128 * 2 * 2 + 24 * 2 * 64 * 2 * 2
