"""SGLang 0.5.3 … 0.5.7 turn DP attention on for a DSA model (DeepSeek-V3.2) whatever the launch says (dsa.py
DSA_DP_ATTENTION_ERAS): kvtop names a launch that does not say so not modelled instead of planning it as plain TP.

Expected behaviour from the wheels' server_args.py `_handle_model_specific_adjustments` ("DeepSeek NSA", not on NPU):
0.5.3:816-817 and 0.5.5:1071 `enable_dp_attention = True; dp_size = tp_size`; 0.5.6:950, 0.5.7:1035
`enable_dp_attention = True` only; 0.5.8:1122 only under --enable-nsa-prefill-context-parallel. The #11309 thread's
0.5.3 starts were launched `--tp 8 --dp 8 --enable-dp-attention` (tests/domain/test_sglang_dsa_053.py).
"""

from __future__ import annotations

import pytest

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_model
from tests.data_paths import CONFIGS

BUDGET = MeasuredInputs(free_before_load_bytes=80 * GIB, free_after_load_bytes=60 * GIB)
DSV32 = load_model(str(CONFIGS / "deepseek-ai--DeepSeek-V3.2.json"))


def plan(version: str, *flags: str) -> Ledger:
    argv = ["--tp", "8", "--kv-cache-dtype", "fp8_e4m3", "--context-length", "32768", "--mem-fraction-static", "0.75"]
    settings = parse_flags("sglang", [*argv, "--engine-version", version, *flags])
    return predict(DSV32, settings, gpu_total_bytes=gpu_total_bytes("B200"), gpu_name="B200", measured=BUDGET)


@pytest.mark.parametrize("version", ["0.5.3", "0.5.3.post1", "0.5.5"])
def test_0_5_3_to_0_5_5_run_dp_attention_at_dp_equal_to_tp(version: str) -> None:
    for flags in ((), ("--enable-dp-attention",), ("--enable-dp-attention", "--dp", "2")):
        with pytest.raises(UnsupportedModelError, match=r"--dp 8 \(= --tp\)"):
            plan(version, *flags)
    assert plan(version, "--enable-dp-attention", "--dp", "8").token_capacity > 0


@pytest.mark.parametrize("version", ["0.5.6", "0.5.7"])
def test_0_5_6_and_0_5_7_turn_dp_attention_on_with_the_dp_given(version: str) -> None:
    """At --dp 1 the forced DP attention spans the TP group (attention TP = tp): the typed layout, planned as the
    engine's own sizing gives it (docs/fidelity.md's 0.5.6.post2 DSA cases); at --dp > 1 without the flag, refused."""
    with pytest.raises(UnsupportedModelError, match="turns DP attention on for a DSA model"):
        plan(version, "--dp", "2")
    assert plan(version).token_capacity == plan(version, "--enable-dp-attention").token_capacity > 0
    assert plan(version, "--enable-dp-attention", "--dp", "8").token_capacity > 0


@pytest.mark.parametrize("version", ["0.5.8", "0.5.9", "0.5.23"])
def test_from_0_5_8_plain_tp_is_what_the_engine_runs(version: str) -> None:
    assert plan(version).token_capacity > 0
