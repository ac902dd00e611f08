"""layout.largest_stage_layers: the layers of the largest pipeline stage, the same count under every engine's split."""

from __future__ import annotations

import pytest

from kvtop.domain.layout import PpRemainder, largest_stage_layers, pp_layer_range

# vLLM tests/distributed/test_pipeline_partition.py test_uneven_auto_partition (get_pp_indices): (layers, pp) ->
# each stage's [start, end)
VLLM_SPLITS = {
    (3, 2): [(0, 2), (2, 3)],
    (4, 3): [(0, 1), (1, 3), (3, 4)],
    (5, 3): [(0, 2), (2, 4), (4, 5)],
}


@pytest.mark.parametrize(("layers", "pp"), sorted(VLLM_SPLITS))
def test_largest_of_vllm_split(layers: int, pp: int) -> None:
    """The largest of vLLM's own stages (its test's expected ranges) is the count kvtop reads."""
    assert largest_stage_layers(layers, pp) == max(end - start for start, end in VLLM_SPLITS[(layers, pp)])


REMAINDERS: list[PpRemainder] = ["first", "last", "second_to_last"]


@pytest.mark.parametrize("remainder", REMAINDERS)
@pytest.mark.parametrize(("layers", "pp"), [(61, 2), (61, 4), (62, 4), (80, 8), (95, 8), (3, 3)])
def test_same_under_every_engine_split(remainder: PpRemainder, layers: int, pp: int) -> None:
    """TensorRT-LLM's (first), SGLang's (last) and vLLM's (second_to_last) splits differ in which stage takes an
    extra layer, not in how many the largest holds."""
    sizes = [len(pp_layer_range(layers, rank, pp, remainder)) for rank in range(pp)]
    assert sum(sizes) == layers
    assert largest_stage_layers(layers, pp) == max(sizes)


def test_deepseek_v3_at_pp_2() -> None:
    """DeepSeek-V3's 61 layers over 2 stages: 31 and 30, the largest 31; one stage (pp 1) holds them all."""
    assert largest_stage_layers(61, 2) == 31
    assert largest_stage_layers(61, 1) == 61
