"""The largest --gpu-memory-utilization a start passes with a given free memory (docs/engines/vllm.md §2.2).

vLLM's `request_memory` (`vllm/v1/worker/utils.py`) refuses a start where free < math.ceil(total × utilization); kvtop
suggests hundredths, as an operator types the flag."""

from __future__ import annotations

from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.vllm.budget import starting_utilization


def test_a_float_product_a_byte_over_takes_one_hundredth_less() -> None:
    # 100 × 0.55 is 55.00000000000001 in floats, so math.ceil asks 56 B: with 55 B free vLLM refuses 0.55, takes 0.54
    assert starting_utilization(100, 55) == 0.54
    assert starting_utilization(100, 56) == 0.55  # 100 × 0.56 is 56.00000000000001 too (57 B asked); 0.55 asks 56
    assert starting_utilization(100, 57) == 0.57  # 100 × 0.57 is 56.99999999999999: ceil asks 57 B (57 ÷ 100 × 100 too: its floor is 56)


def test_the_gb10_host_at_its_assumed_share() -> None:
    """T = 128,527,106,048 B (119.70 GiB) leaving 90,817,253,134 B: ceil(0.70 × T) = 89,968,974,234 fits,
    ceil(0.71 × T) = 91,254,245,295 does not."""
    assert starting_utilization(128_527_106_048, 90_817_253_134) == 0.70
    assert engine_rules("vllm").fraction_that_starts(128_527_106_048, 90_817_253_134) == 0.70


def test_nothing_starts_on_less_than_a_hundredth_and_free_sizing_engines_ask_no_share() -> None:
    assert starting_utilization(1000, 9) == 0.0
    assert engine_rules("sglang").fraction_that_starts(1000, 900) is None
