"""vLLM's SigLIP position table by release (engines/vllm/architectures.py SIGLIP_TABLE_SPLIT, TowerSplit.for_launch):
siglip.py's SiglipVisionEmbeddings built it a VocabParallelEmbedding to v0.13.x (rows padded to 64, split over TP:
v0.9.1 siglip.py:69, v0.13.0 :298) and an nn.Embedding, whole on every rank, from v0.14.0 (:299; v0.34.0 :278).

Gemma-3-27B's SigLIP at 896 px in 14 px patches: 64 × 64 = 4,096 rows of 1,152, 4,718,592 parameters, 9,437,184 B in
bf16. At TP 2 a rank holds 2,048 rows before v0.14.0 (4,718,592 B less), at TP 4 1,024 (7,077,888 B less).
"""

from __future__ import annotations

import pytest

from kvtop.domain.engines.vllm.architectures import TOWER_SPLIT
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.weights import weights_book
from kvtop.sources.hub import load_model
from tests.data_paths import CONFIGS

GEMMA3 = load_model(str(CONFIGS / "google--gemma-3-27b-it.json"))


def _tower_bytes(tp: int, release: str) -> int:
    book = weights_book(GEMMA3, ParallelLayout(tp=tp), range(GEMMA3.num_layers), first_stage=True, last_stage=True,
                        tower_split=TOWER_SPLIT.for_launch({}, release))  # fmt: skip
    return sum(row.bytes for row in book.rows if row.component == "vision")


@pytest.mark.parametrize(("tp", "less"), [(1, 0), (2, 4_718_592), (4, 7_077_888)])
def test_the_table_is_split_over_tp_to_0_13(tp: int, less: int) -> None:
    assert GEMMA3.tower is not None and GEMMA3.tower.position_rows == 4096
    assert GEMMA3.tower.position_params == 4096 * 1152
    assert _tower_bytes(tp, "0.14.0") - _tower_bytes(tp, "0.13.0") == less
    assert _tower_bytes(tp, "0.9.1") == _tower_bytes(tp, "0.13.0")
    assert _tower_bytes(tp, "0.34.0") == _tower_bytes(tp, "0.14.0")


def test_a_tower_not_built_from_siglip_py_keeps_its_table() -> None:
    """The split names the classes that build siglip.py's SiglipVisionModel; another class's tower is unchanged."""
    split = TOWER_SPLIT.for_launch({}, "0.9.1")
    assert split.of_class("Gemma3ForConditionalGeneration").position_table
    assert not split.of_class("MiniCPMV").position_table
    assert not TOWER_SPLIT.for_launch({}, None).of_class("Gemma3ForConditionalGeneration").position_table
