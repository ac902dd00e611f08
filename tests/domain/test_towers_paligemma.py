"""PaliGemma's SigLIP and projector (kvtop.domain.architectures.towers_vit.paligemma_siglip).

Oracle: the engines' meta builds of the held-out wave-2 config google--paligemma2-3b-mix-448 (SigLIP width 1152,
MLP 4304, 27 blocks, image 448, patch 14, no head; projection_dim 2304; bf16), listed by
`benchmarks/engine_diff/registry_sweep.py --engine <e> --params google--paligemma2-3b-mix-448` and kept as the
registry rows (tests/data/engine_diff/registry/<engine>-<version>.json, `param_bytes` by top-level child):
  vLLM 0.33.0   TP 1: vision_tower 826,654,176 B, multi_modal_projector 5,313,024 B
                TP 2: vision_tower 415,374,192 B (siglip.py's qkv/out/fc1/fc2 split), multi_modal_projector whole
  SGLang 0.5.23 TP 1 and TP 2: model.vision_tower 826,654,176 B, model.multi_modal_projector 5,313,024 B (its
                Transformers backend: transformers' classes, whole on every rank)
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.sglang.architectures import TOWER_SPLIT as SGLANG_SPLIT
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.layout import ParallelLayout, StageParts
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.data_paths import DATA

CONFIG = DATA / "configs" / "heldout" / "wave2" / "google--paligemma2-3b-mix-448.json"
VLLM_TOWER_BYTES = {1: 826_654_176 + 5_313_024, 2: 415_374_192 + 5_313_024}
SGLANG_TOWER_BYTES = 826_654_176 + 5_313_024  # at TP 1 and TP 2


def _tower_bytes(tp: int, parts: StageParts | None = None) -> int:
    model = model_from_config(json.loads(CONFIG.read_text()))
    split = SGLANG_SPLIT if parts is not None else None
    book = weights_book(model, ParallelLayout(tp=tp), range(0, 1), first_stage=True, last_stage=False,
                        tower_split=split, parts=parts)  # fmt: skip
    (row,) = [row for row in book.rows if row.component == "vision"]
    return int(row.bytes)


@pytest.mark.parametrize("tp", [1, 2])
def test_vllm_tower_bytes_equal_its_meta_build(tp: int) -> None:
    assert _tower_bytes(tp) == VLLM_TOWER_BYTES[tp]
    model = model_from_config(json.loads(CONFIG.read_text()))
    assert model.tower is not None and not any("vision tower" in note for note in model.not_modelled)


@pytest.mark.parametrize("tp", [1, 2])
def test_sglang_transformers_backend_builds_the_tower_whole(tp: int) -> None:
    model = model_from_config(json.loads(CONFIG.read_text()))
    # SGLang's stage parts of its one stage at 0.5.23: PaliGemma is a class of its Transformers backend
    parts = engine_rules("sglang").stage_parts(
        model, 0, 1, ResolvedVersion(text="0.5.23", source=VersionSource.FLAG)
    )
    assert parts.tower_as_transformers
    assert _tower_bytes(tp, parts) == SGLANG_TOWER_BYTES


def test_the_projector_is_vllms_linear() -> None:
    # the projector's bytes from both builds, 5,313,024 B: nn.Linear(1152 -> 2304) with bias in bf16
    assert 5_313_024 == (1152 * 2304 + 2304) * 2
