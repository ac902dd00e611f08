"""Fun-ASR's SANM encoder and adaptor (kvtop.domain.architectures.towers_funasr) against vLLM's build of the
reconstructed Fun-ASR-Nano-2512 config (tests/data/configs/recon, SOURCES.md there), kept as its registry rows
(tests/data/engine_diff/registry/vllm-0.33.0.json). SGLang 0.5.23 registers no such class.
"""

from __future__ import annotations

import json

import pytest

from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.architectures.coverage import verdict
from kvtop.domain.architectures.towers_coverage import tower_verdict
from kvtop.domain.engines.vllm.architectures import TOWER_SPLIT as VLLM_SPLIT
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.data_paths import DATA

NAME = "recon--FunAudioLLM--Fun-ASR-Nano-2512"
CONFIG = DATA / "configs" / "recon" / f"{NAME}.json"
BF16 = 2
ENCODER = {1: 467_483_840, 2: 307_948_224}
LANGUAGE = {1: 1_192_099_840, 2: 596_115_456}


def test_the_engines_bytes_are_the_modules_arithmetic() -> None:
    """vLLM 0.33.0 funasr.py SenseVoiceEncoderSmall(560, output_size 512, 4 heads, linear_units 2048, 50 blocks, 20
    tp_blocks, kernel 11): encoders0 from 560 wide, then 49 + 20 layers of 512; each linear_q_k_v in · 1536 + 1536 and
    out_proj 512² + 512 (ReplicatedLinear), fsmn_block 512 · 11, w_2's bias 512, norm1 2 · in, norm2 1024: whole; w_1
    512 · 2048 + 2048 (Column) and w_2's weight 2048 · 512 (Row): split. after_norm, tp_norm 2 · 1024. The adaptor's
    constants: linear1 512 → 2048 (Column, biased), linear2 2048 → 1024 (Row; its bias whole); two layers of qkv
    3 · 1024² + 3 · 1024, out_proj 1024² (+ 1024 whole), w_1 1024 · 256 + 256, w_2 256 · 1024 (+ 1024 whole), two
    LayerNorms 4 · 1024 whole."""
    o, u, a = 512, 2048, 1024
    whole = (560 * 3 * o + 3 * o + o * o + o + o * 11 + o + 2 * 560 + 2 * o) + 69 * (
        o * 3 * o + 3 * o + o * o + o + o * 11 + o + 2 * o + 2 * o
    ) + 4 * o + a + 2 * (a + 4 * a + a)
    split = 70 * (o * u + u + u * o) + (512 * 2048 + 2048 + 2048 * a) + 2 * (
        3 * a * a + 3 * a + a * a + a * 256 + 256 + 256 * a
    )
    assert BF16 * (whole + split) == ENCODER[1]
    assert BF16 * (whole + split // 2) == ENCODER[2]


@pytest.mark.parametrize("tp", [1, 2])
def test_bytes_equal_vllms_meta_build(tp: int) -> None:
    row = row_of("vllm", "0.33.0", NAME, tp)
    parts = row["stages"][0]["param_bytes"]
    assert (parts["model.encoder"], parts["model.decoder"]) == (ENCODER[tp], LANGUAGE[tp])
    model = model_from_config(json.loads(CONFIG.read_text()), source=NAME)
    book = weights_book(model, ParallelLayout(tp=tp), range(0, 28), first_stage=True, last_stage=True,
                        tower_split=VLLM_SPLIT)  # fmt: skip
    (tower,) = [r for r in book.rows if r.component == "audio"]
    assert int(tower.bytes) == ENCODER[tp]
    assert int(sum(r.bytes for r in book.rows if r.component != "audio")) == LANGUAGE[tp]
    assert model.multimodal and not model.not_modelled


def test_the_class_reads_qwen3_with_its_tower() -> None:
    assert verdict("FunASRForConditionalGeneration")[0] == "entry"
    assert tower_verdict("FunASRForConditionalGeneration")[0] == "tower"
    assert tower_verdict("Qwen3ForCausalLM")[0] == "no_tower"
