"""MiniCPM-SALA's `sparse_config` (InfLLM-v2 on the minicpm4 layers) read as a typed section
(config_schema_families.InfLLMSparseConfig), not a bare dict: the keys SGLang 0.5.23's MiniCPM backend reads
(layers/attention/minicpm/backend.py) are checked at the file, and the "not modelled" note still follows presence, as
SGLang's configs/minicpm.py has_minicpm_sparse_attention does (`sparse_config is not None`).

The config is tests/data/configs/recon/recon--openbmb--MiniCPM-SALA.json (its SOURCES.md); its section states
kernel_size 32, kernel_stride 16, init_blocks 1, block_size 64, window_size 2,048, dense_len 8,192, topk 64."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kvtop.domain.config_schema_families import InfLLMSparseConfig
from kvtop.domain.errors import InputError
from kvtop.domain.model_config import model_from_config

SALA = Path(__file__).parents[1] / "data" / "configs" / "recon" / "recon--openbmb--MiniCPM-SALA.json"


def _sala() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(SALA.read_text())
    return data


def test_the_published_section_reads_as_its_file_states() -> None:
    section = InfLLMSparseConfig.model_validate(_sala()["sparse_config"])
    assert (section.kernel_size, section.kernel_stride, section.init_blocks, section.block_size) == (32, 16, 1, 64)
    assert (section.window_size, section.dense_len, section.topk) == (2_048, 8_192, 64)


def test_a_malformed_key_is_refused_at_the_file() -> None:
    data = _sala()
    data["sparse_config"]["kernel_size"] = "32"  # SGLang would compare a string with 0 and fail at start
    with pytest.raises(InputError, match=r"sparse_config\.kernel_size"):
        model_from_config(data, source="minicpm-sala-string-kernel")


@pytest.mark.parametrize(("section", "noted"), [({}, True), (None, False)])
def test_the_note_follows_presence(section: dict[str, Any] | None, noted: bool) -> None:
    """An empty section is a section (SGLang turns its sparse backend on, then fails on the keys); none: no note."""
    data = _sala()
    if section is None:
        del data["sparse_config"]
    else:
        data["sparse_config"] = section
    model = model_from_config(data, source="minicpm-sala-section")
    assert any("sparse_config" in note for note in model.not_modelled) is noted
