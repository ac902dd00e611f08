"""vLLM's `SlidingWindowSpec.extra_retained_tokens` (docs/engines/vllm.md §3.4.2): a multi-module MTP launch keeps
k − 1 more tokens below each sliding window, and a request's sliding blocks count them (engines/vllm/windows.py
`extra_retained_tokens`, budget.py).

Oracle: vLLM's code, read in the wheels (figures written out here, never from kvtop):
- v0.28.0 kv_cache_utils.py:2137 sets every SlidingWindowSpec's extra_retained_tokens to num_speculative_tokens − 1
  where speculative_config.use_multi_module_mtp() (config/speculative.py:1501: method "mtp" and
  min(draft num_nextn_predict_layers, k) > 1), else 0; v0.31.0 on: max(0, num_prefill_lookahead_tokens − 1) (config/
  vllm.py:657: k for multi-module MTP, 1 for other EAGLE-family methods, else 0), the same figure; the v0.27.1 wheel's
  SlidingWindowSpec has no such field. k unstated is the draft's n_predict (config/speculative.py:1601-1603).
- v0.33.0 kv_cache_interface.py:918-944 max_admission_blocks_per_request: cdiv(min(window − 1 + extra + in flight,
  L), block) + 1 a sliding group; a full group cdiv(L, block).
- Step-3.7-Flash (tests/data/engine_diff/configs, SOURCES.md there): window 512, 3 MTP layers (num_nextn_predict_layers),
  45 layers of which 12 full, 33 sliding; with the 3 MTP layers' KV beside them kvtop groups them as 1 full group and
  3 sliding (group size 15). L = 8,192, block 16, in flight 1 batch (--no-async-scheduling) × 2,048.
- MiMo-V2: hf_config_override pins the draft's num_nextn_predict_layers to 1 (config/speculative.py:806-845,
  mimo_v2_mtp.py:53-54), so no extra whatever k.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.domain.engines.versions import from_flag
from kvtop.domain.engines.vllm.deployment import setup
from kvtop.domain.engines.vllm.windows import extra_retained_tokens
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.model_config import model_from_config

MIB = 1 << 20
H100 = 81559 * MIB  # nvidia-smi's total (tests/data/samples/nvidia_smi)
STEP37 = Path(__file__).parents[2] / "data/engine_diff/configs/stepfun-ai--Step-3.7-Flash.json"
MODEL = model_from_config(json.loads(STEP37.read_text()), source=STEP37.name)
BASE = ["--tensor-parallel-size", "8", "--max-model-len", "8192", "--no-async-scheduling",
        "--max-num-batched-tokens", "2048"]  # fmt: skip


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _flags(version: str, spec: dict[str, object]) -> list[str]:
    return ["--engine-version", version, *BASE, "--speculative-config", json.dumps(spec)]


def _plan(version: str, spec: dict[str, object]) -> Ledger:
    return predict(MODEL, parse_flags("vllm", _flags(version, spec), strict=True), gpu_total_bytes=H100,
                   gpu_name="H100")  # fmt: skip


def _extra(version: str, spec: dict[str, object], name: str | None = None) -> int:
    model = MODEL if name is None else MODEL.model_copy(update={"name": name})
    return extra_retained_tokens(model, setup(parse_flags("vllm", _flags(version, spec), strict=True)),
                                 from_flag(version))  # fmt: skip


def test_the_config_is_windowed_with_three_mtp_layers() -> None:
    assert (MODEL.sliding_window, MODEL.mtp_layers, MODEL.chunked_local) == (512, 3, False)


@pytest.mark.parametrize(("version", "spec", "name", "expected"), [
    ("0.33.0", {"method": "mtp", "num_speculative_tokens": 3}, None, 2),  # k − 1
    ("0.28.0", {"method": "mtp", "num_speculative_tokens": 3}, None, 2),  # the first release with the field
    ("0.33.0", {"method": "step3p5_mtp", "num_speculative_tokens": 2}, None, 1),  # normalised to "mtp"
    ("0.33.0", {"method": "mtp"}, None, 2),  # k = n_predict = 3
    ("0.33.0", {"method": "mtp", "num_speculative_tokens": 1}, None, 0),  # min(3, 1) = 1: not multi-module
    ("0.27.1", {"method": "mtp", "num_speculative_tokens": 3}, None, 0),  # no extra_retained_tokens yet
    ("0.33.0", {"method": "mtp", "num_speculative_tokens": 3}, "MiMoV2FlashForCausalLM", 0),  # pinned to 1 layer
])  # fmt: skip
def test_extra_retained_tokens_follow_vllms_rule(
    version: str, spec: dict[str, object], name: str | None, expected: int
) -> None:
    assert _extra(version, spec, name) == expected


@pytest.mark.parametrize(("version", "k", "per_request"), [
    ("0.33.0", 1, 512 + 3 * (_cdiv(512 - 1 + 2048, 16) + 1)),  # 512 + 3 × 161 = 995
    ("0.33.0", 3, 512 + 3 * (_cdiv(512 - 1 + 2 + 2048, 16) + 1)),  # 2,561 tokens: 512 + 3 × 162 = 998
    ("0.27.1", 3, 512 + 3 * (_cdiv(512 - 1 + 2048, 16) + 1)),  # before the field: 995
])  # fmt: skip
def test_a_requests_sliding_blocks_count_the_retained_tokens(version: str, k: int, per_request: int) -> None:
    ledger = _plan(version, {"method": "mtp", "num_speculative_tokens": k})
    assert _cdiv(8192, 16) == 512
    labels = [step.label for step in ledger.engine.steps]
    assert f"tokens: int(blocks ÷ {per_request} × 8,192)" in labels
    blocks = next(step.value for step in ledger.engine.steps if step.label.startswith("blocks of 16 tokens"))
    tokens = next(step.value for step in ledger.engine.steps if step.label.startswith("tokens: int("))
    assert tokens == int(blocks / per_request * 8192)  # kv_cache_utils: num_blocks ÷ blocks a request × L
