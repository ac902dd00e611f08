"""Ovis2.5 (held-out wave 4b): its language model read through `llm_config`, its vision tower read from `vit_config`.

vLLM 0.33.0 models/ovis2_5.py (`Ovis2_5.__init__`) builds `llm` from the text config (here Qwen3-8B's
`llm_config`: Qwen3ForCausalLM), and `visual_tokenizer` (a SigLIP2-NaViT with its head, from `config.vit_config`)
and `vte` (visual_vocab_size × hidden) beside it: towers_ovis2_5 reads them (tests/domain/test_towers_ovis2_5.py
checks them against vLLM's meta build), so the "vision tower" note is gone.
"""

from __future__ import annotations

import json
from typing import Any

from kvtop.domain.architectures.reader import VISION_NOT_MODELLED
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.data_paths import CONFIGS

OVIS = "AIDC-AI--Ovis2.5-9B"
BF16 = 2
# vLLM 0.33.0 models/qwen3.py for the llm_config (36 layers, hidden 4,096, 32 heads and 8 KV heads of 128,
# intermediate 12,288, vocabulary 151,936, embeddings untied: Qwen3Config's tie_word_embeddings default false):
#   qkv_proj [6144, 4096], o_proj [4096, 4096], q_norm and k_norm [128], gate_up_proj [24576, 4096],
#   down_proj [4096, 12288], two norms [4096] a layer; model.norm [4096]; embed_tokens and lm_head [151936, 4096]
LANGUAGE_MODEL = (
    36 * (6144 * 4096 + 4096 * 4096 + 2 * 128 + 24576 * 4096 + 4096 * 12288 + 2 * 4096)
    + 4096
    + 2 * 151936 * 4096
) * BF16


def _model() -> ModelSpec:
    config: dict[str, Any] = json.loads((CONFIGS / "heldout" / "wave4b" / f"{OVIS}.json").read_text())
    return model_from_config(config, source=OVIS)


def test_ovis2_5_language_model_is_qwen3_from_llm_config() -> None:
    model = _model()
    book = weights_book(model, ParallelLayout(), range(model.num_layers), first_stage=True, last_stage=True)
    language = sum(row.bytes for row in book.rows if row.component != "vision")
    assert language == LANGUAGE_MODEL == 16_381_470_720


def test_ovis2_5_vit_config_tower_is_in_the_book() -> None:
    """The whole model: the language model above plus vLLM 0.33.0's meta-built visual_tokenizer (1,431,273,936 B)
    and vte (536,870,912 B) at TP 1 (`registry_sweep.py --engine vllm --params AIDC-AI--Ovis2.5-9B`: total
    18,349,615,568 B)."""
    model = _model()
    assert VISION_NOT_MODELLED not in model.not_modelled
    book = weights_book(model, ParallelLayout(), range(model.num_layers), first_stage=True, last_stage=True)
    assert book.total_bytes == LANGUAGE_MODEL + 1_431_273_936 + 536_870_912 == 18_349_615_568
