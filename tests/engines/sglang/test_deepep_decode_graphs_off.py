"""SGLang's 2 GiB DeepEP reserve is kept only where the decode CUDA graph backend is on and the launch is not a PD
prefill node (0.5.15 server_args.py:3678-3685; 0.5.23 arg_groups/memory_hook.py:407-411), and every typed decode
switch-off disables that backend: `--disable-cuda-graph`, `--disable-decode-cuda-graph`,
`--cuda-graph-backend-decode disabled` (0.5.15 server_args.py:3210-3226). 0.5.14 reserves nothing for DeepEP and keeps
the decode graphs' `max_bs × 2` on every launch (0.5.14 server_args.py:3276-3297, read in the wheel). The buffers
are allocated anyway, at the first MoE dispatch on every launch (layers/moe/token_dispatcher/deepep.py
`get_deepep_buffer`: 0.5.14 :160-260, 0.5.15 :169-266, 0.5.23 :204-304, no CUDA-graph test), so where no reserve
holds them they stay an after-the-pool term of the 2,048 MiB v0.5.15 adopted (headroom, not the pool).

Expected values by SGLang's arithmetic: Qwen3-235B-A22B, TP8 EP8, `--moe-a2a-backend deepep`, H100 (81,559 MiB, the
class of chunked 8,192, decode max_bs 512); the A2A backend turns the prefill graphs off (prefill_graphs_off.py).
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.deployment import Charge, Feature
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.model_config import model_from_config
from tests.conftest import CONFIGS

H100_MIB = 81559
QWEN = model_from_config(json.loads((CONFIGS / "Qwen--Qwen3-235B-A22B.json").read_text()), source="qwen3-235b")
DEEPEP = ["--tp-size", "8", "--ep-size", "8", "--moe-a2a-backend", "deepep"]
SWITCH_OFFS = [["--disable-cuda-graph"], ["--disable-decode-cuda-graph"], ["--cuda-graph-backend-decode", "disabled"]]


def _plan(version: str, flags: list[str]) -> Ledger:
    settings = parse_flags("sglang", [*DEEPEP, "--engine-version", version, *flags], strict=True)
    return predict(QWEN, settings, gpu_total_bytes=H100_MIB << 20, gpu_name="H100")


def _deepep_after_pool_mib(ledger: Ledger) -> int | None:
    found = [t.bytes >> 20 for t in ledger.terms if t.charge is Charge.AFTER_POOL and t.feature is
             Feature.EXPERT_PARALLEL]  # fmt: skip
    assert len(found) <= 1
    return found[0] if found else None


def _fraction(reserved_mib: float) -> float:
    return round((H100_MIB - reserved_mib) / H100_MIB, 3)


@pytest.mark.parametrize("off", SWITCH_OFFS)
def test_every_decode_switch_off_drops_the_deepep_reserve(off: list[str]) -> None:
    # 512 metadata + 1.5 × 8,192 activations + 8 × 8 / 8 × 1,024 parallel; no decode graphs, no 2,048 DeepEP:
    # 13,824 MiB → round(67,735 / 81,559, 3) = 0.831 (with the DeepEP 2,048: 15,872 → 0.805)
    ledger = _plan("0.5.15", off)
    assert ledger.engine.memory_fraction == _fraction(512 + 1.5 * 8192 + 1024) == 0.831
    assert _deepep_after_pool_mib(ledger) == 2048


@pytest.mark.parametrize("off", SWITCH_OFFS[1:])
def test_0_5_23_decode_only_switch_offs_drop_it_and_keep_the_prefill_graphs(off: list[str]) -> None:
    # 0.5.23 keeps the breakable prefill graphs beside DeepEP (8 MiB × 58 sizes + 1,024 for their DeepEP capture,
    # memory_hook.py:391-397) where only the decode phase is off: 13,824 + 464 + 1,024 = 15,312 → 0.812 (with the
    # DeepEP 2,048 that the decode graphs would add: 17,360 → 0.787)
    ledger = _plan("0.5.23", off)
    assert ledger.engine.memory_fraction == _fraction(512 + 1.5 * 8192 + 1024 + 8 * 58 + 1024) == 0.812
    assert _deepep_after_pool_mib(ledger) == 2048


def test_with_the_decode_graphs_on_the_reserve_stays() -> None:
    # the same + 2 × 512 decode graphs + 2,048 DeepEP = 16,896 MiB → round(64,663 / 81,559, 3) = 0.793
    ledger = _plan("0.5.15", [])
    assert ledger.engine.memory_fraction == _fraction(512 + 1.5 * 8192 + 1024 + 2 * 512 + 2048) == 0.793
    (reserve,) = [t for t in ledger.terms if t.charge is Charge.RESERVE and t.feature is Feature.EXPERT_PARALLEL]
    assert reserve.bytes == 2048 << 20
    assert _deepep_after_pool_mib(ledger) is None  # the reserve holds them: not counted twice


@pytest.mark.parametrize("off", SWITCH_OFFS)
def test_0_5_14_reserves_neither_deepep_nor_skips_the_decode_graphs(off: list[str]) -> None:
    # 0.5.14: 512 + 12,288 + 1,024 + 2 × 512 on every launch, nothing for DeepEP: 14,848 → round(0.81795, 3) = 0.818
    ledger = _plan("0.5.14", off)
    assert ledger.engine.memory_fraction == _fraction(512 + 1.5 * 8192 + 1024 + 2 * 512) == 0.818
    # the buffers are allocated at the first dispatch whatever the graphs: the after-pool term stays (before
    # session 61 the switch-offs dropped it)
    assert _deepep_after_pool_mib(ledger) == 2048


def test_0_5_14_with_the_graphs_on_keeps_the_after_pool_term() -> None:
    ledger = _plan("0.5.14", [])
    assert ledger.engine.memory_fraction == 0.818
    assert _deepep_after_pool_mib(ledger) == 2048
    assert not [t for t in ledger.terms if t.charge is Charge.RESERVE and t.feature is Feature.EXPERT_PARALLEL]
