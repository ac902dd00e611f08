"""vLLM 0.33.0 ties a multimodal model's LM head by the wrapper's own tie_word_embeddings (config/vllm.py
`VllmConfig.with_hf_config` copies it into the text config it builds the language model with), not the text
section's (engines/vllm/pp_parts.tied, StageParts.tied_head).

Oracle: vLLM 0.33.0's meta build of the registry sweep's default config of InternS1ForConditionalGeneration
(transformers' InternVLConfig defaults: tie_word_embeddings true, its Qwen2 text_config false), kept as the registry
rows (tests/data/engine_diff/registry/vllm-0.33.0.json): language_model 22,855,032,832 B, multi_modal_projector
67,141,632 B, vision_tower 607,877,120 B at TP 1 (23,530,051,584 B in all); `registry_sweep.py --engine vllm
--params default--InternS1ForConditionalGeneration` lists language_model.model.embed_tokens.weight [151936, 4096]
(1,244,659,712 B) and no lm_head.
"""

from __future__ import annotations

import json

from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.engines.sglang import SglangRules
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm import VllmRules
from kvtop.domain.engines.vllm.architectures import TOWER_SPLIT as VLLM_SPLIT
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.data_paths import DATA

NAME = "InternS1ForConditionalGeneration"
CONFIG = json.loads((DATA / "engine_diff" / "registry" / "configs" / f"{NAME}.json").read_text())
ENGINE_STAGE_BYTES = 22_855_032_832 + 67_141_632 + 607_877_120
HEAD_BYTES = 151_936 * 4_096 * 2


def _total(rules: VllmRules | SglangRules, version: str, split: object) -> int:
    model = model_from_config(CONFIG, source=NAME)
    parts = rules.stage_parts(model, 0, 1, ResolvedVersion(text=version))
    book = weights_book(model, ParallelLayout(tp=1), range(model.num_layers), first_stage=True, last_stage=True,
                        parts=parts, tower_split=split)  # fmt: skip
    return int(book.total_bytes)


def test_vllm_0_33_ties_the_head_by_the_wrappers_value() -> None:
    row = row_of("vllm", "0.33.0", f"default--{NAME}", 1)
    assert sum(row["stages"][0]["param_bytes"].values()) == ENGINE_STAGE_BYTES == 23_530_051_584
    assert (CONFIG["tie_word_embeddings"], CONFIG["text_config"]["tie_word_embeddings"]) == (True, False)
    assert _total(VllmRules(), "0.33.0", VLLM_SPLIT) == ENGINE_STAGE_BYTES


def test_before_0_33_and_in_sglang_the_text_sections_value_holds() -> None:
    # vLLM 0.13.0's with_hf_config copies no tie_word_embeddings; SGLang builds the language model from text_config
    assert _total(VllmRules(), "0.13.0", VLLM_SPLIT) == ENGINE_STAGE_BYTES + HEAD_BYTES
    model = model_from_config(CONFIG, source=NAME)
    parts = SglangRules().stage_parts(model, 0, 1, ResolvedVersion(text="0.5.23"))
    assert parts.tied_head is None
