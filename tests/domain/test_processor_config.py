"""A checkpoint's image processor sizes, read from its preprocessor_config.json as transformers reads them
(kvtop/domain/processor_config.py; transformers 4.57.1 image_processing_qwen2_vl_fast.py:94-107)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kvtop.domain.errors import InputError
from kvtop.domain.processor_config import image_pixels
from kvtop.sources.hub import load_config_file, load_model
from tests.data_paths import CONFIGS

EMBEDDING = CONFIGS.parent / "calibration" / "configs" / "Qwen--Qwen3-VL-Embedding-2B.RECONSTRUCTED.json"
PROCESSOR = EMBEDDING.with_name(EMBEDDING.stem + ".preprocessor_config.json")
INSTRUCT = CONFIGS / "heldout" / "Qwen--Qwen3-VL-2B-Instruct.json"


def test_the_embedding_processor_states_its_bounds_both_ways() -> None:
    """Qwen3-VL-Embedding's file states `size` and the legacy keys alike: 4,096 – 1,310,720 px."""
    assert image_pixels(json.loads(PROCESSOR.read_text()), str(PROCESSOR)) == (4_096, 1_310_720)


def test_the_legacy_keys_override_size_as_transformers_does() -> None:
    """`min_pixels` / `max_pixels` replace `size`'s edges where stated (the backward-compatibility branch)."""
    read = image_pixels({"size": {"shortest_edge": 65_536, "longest_edge": 16_777_216}, "max_pixels": 1_003_520}, "p")
    assert read == (65_536, 1_003_520)


def test_a_processor_without_pixel_bounds_is_not_read() -> None:
    assert image_pixels({"size": {"height": 384, "width": 384}}, "p") is None


@pytest.mark.parametrize("processor", [
    # LLaVA-1.5's CLIP processor: the short side resized to 336 px (transformers image_processing_clip.py)
    {"image_processor_type": "CLIPImageProcessor", "size": {"shortest_edge": 336}},
    # Idefics2's: a side between 378 and 980 px (image_processing_idefics2.py), not an area
    {"image_processor_type": "Idefics2ImageProcessor", "size": {"shortest_edge": 378, "longest_edge": 980}},
])
def test_another_processor_s_sides_are_not_read_as_pixel_bounds(processor: dict[str, object]) -> None:
    """Only a Qwen2-VL image processor's edges are pixel counts: a CLIP or Idefics file beside a config neither
    refuses the plan nor reads as bounds."""
    assert image_pixels(processor, "p") is None


@pytest.mark.parametrize("value", [0, -1, "1310720", 1.5, True])
def test_a_bound_that_is_not_a_positive_integer_is_refused_by_name(value: object) -> None:
    with pytest.raises(InputError, match=r"size\.longest_edge"):
        image_pixels({"image_processor_type": "Qwen2VLImageProcessorFast",
                      "size": {"shortest_edge": 4_096, "longest_edge": value}}, "p")


def test_one_bound_alone_is_refused() -> None:
    with pytest.raises(InputError, match=r"size\.shortest_edge"):
        image_pixels({"max_pixels": 1_310_720}, "p")


def test_the_config_file_reads_the_processor_beside_it_and_says_so() -> None:
    model = load_config_file(EMBEDDING)
    assert model.image_pixels == (4_096, 1_310_720)
    assert any("preprocessor_config.json" in said for said in model.read_from)
    assert load_config_file(INSTRUCT).image_pixels is None  # no processor given: the published sizes, assumed


def test_a_checkpoint_folder_reads_its_preprocessor_config(tmp_path: Path) -> None:
    shutil.copy(INSTRUCT, tmp_path / "config.json")
    shutil.copy(PROCESSOR, tmp_path / "preprocessor_config.json")
    assert load_model(str(tmp_path)).image_pixels == (4_096, 1_310_720)


def test_the_node_store_s_model_key_reads_the_sizes_only_where_given() -> None:
    """A model without a processor hashes as before the field existed (stored keys stay valid); one with it differs."""
    from kvtop.domain.calibration.node import model_key

    instruct, embedding = load_config_file(INSTRUCT), load_config_file(EMBEDDING)
    assert model_key(instruct) == model_key(embedding.model_copy(update={"image_pixels": None, "read_from": (),
                                                                         "name": instruct.name,
                                                                         "source": instruct.source}))
    assert model_key(instruct) != model_key(embedding)
