"""vLLM's `SlidingWindowSpec.extra_retained_tokens` (docs/engines/vllm.md §3.4.2): where a launch may take it, the plan
says "not modelled" (engines/vllm/windows.py `extra_retained_tokens`, deployment.py's speculative terms).

Oracle: vLLM's code, read in the wheels (figures written out here, never from kvtop):
- v0.28.0 kv_cache_utils.py:2137 sets every SlidingWindowSpec's extra_retained_tokens to num_speculative_tokens − 1
  where speculative_config.use_multi_module_mtp() (config/speculative.py:1501: method "mtp" and
  min(draft num_nextn_predict_layers, k) > 1), else 0; v0.31.0 on: max(0, num_prefill_lookahead_tokens − 1) (config/
  vllm.py:657: k for multi-module MTP, 1 for other EAGLE-family methods, else 0), the same figure; the v0.27.1 wheel's
  SlidingWindowSpec has no such field.
- v0.33.0 kv_cache_interface.py:918-944 max_admission_blocks_per_request: cdiv(min(window − 1 + extra + in flight,
  L), block) + 1. Step-3.7-Flash (window 512, 3 MTP layers: tests/data/engine_diff/configs, SOURCES.md there), block
  16, 2,048 tokens in flight: cdiv(511 + 2,048, 16) + 1 = 161 blocks a sliding group; with k = 3 (extra 2)
  cdiv(2,561, 16) + 1 = 162: one block more a sliding group, which kvtop's figure leaves out (so it is said).
- k unstated is the draft's n_predict (config/speculative.py:1601-1603): the config's 3 MTP layers here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.domain.deployment import Feature, TermState
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.model_config import model_from_config

MIB = 1 << 20
H100 = 81559 * MIB  # nvidia-smi's total (tests/data/samples/nvidia_smi)
STEP37 = Path(__file__).parents[2] / "data/engine_diff/configs/stepfun-ai--Step-3.7-Flash.json"
MODEL = model_from_config(json.loads(STEP37.read_text()), source=STEP37.name)
LABEL = "sliding window's extra retained tokens"


def _plan(version: str, spec: dict[str, object]) -> Ledger:
    flags = ["--engine-version", version, "--tensor-parallel-size", "8", "--speculative-config", json.dumps(spec)]
    return predict(MODEL, parse_flags("vllm", flags, strict=True), gpu_total_bytes=H100, gpu_name="H100")


def _extra(ledger: Ledger) -> list[str]:
    return [t.label for t in ledger.terms
            if t.feature is Feature.SPECULATIVE and t.label.startswith(LABEL) and t.state is TermState.NOT_MODELLED]  # fmt: skip


def test_the_config_is_windowed_with_three_mtp_layers() -> None:
    assert (MODEL.sliding_window, MODEL.mtp_layers, MODEL.chunked_local) == (512, 3, False)


@pytest.mark.parametrize(("version", "spec", "expected"), [
    ("0.33.0", {"method": "mtp", "num_speculative_tokens": 3}, [f"{LABEL}: up to 2 a request"]),  # k − 1 = 2
    ("0.28.0", {"method": "mtp", "num_speculative_tokens": 3}, [f"{LABEL}: up to 2 a request"]),  # the first release
    ("0.33.0", {"method": "mtp"}, [f"{LABEL}: up to 2 a request"]),  # k = n_predict = 3
    ("0.33.0", {"method": "mtp", "num_speculative_tokens": 1}, []),  # min(3, 1) = 1: not multi-module
    ("0.27.1", {"method": "mtp", "num_speculative_tokens": 3}, []),  # no extra_retained_tokens yet
])  # fmt: skip
def test_a_multi_module_mtp_launch_on_a_windowed_model_says_not_modelled(
    version: str, spec: dict[str, object], expected: list[str]
) -> None:
    assert _extra(_plan(version, spec)) == expected
