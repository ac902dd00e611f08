"""SGLang's embedding whole under DP attention is SGLang's rule (`SglangRules.vocab_split`), not the shared book's.

Expected bytes from the config's shapes, never from kvtop: DeepSeek-V3's vocab 129,280 (a multiple of 64) × hidden
7,168 × 2 B (bf16). SGLang's DeepseekV2Model builds `VocabParallelEmbedding(..., enable_tp=not
is_dp_attention_enabled())`: whole on every rank under --enable-dp-attention. TensorRT-LLM's DeepseekV3Model builds
its embedding whole at any layout, a term of its own (trtllm/deepseek_weights.py embedding_whole_bytes): its book
holds the split share beside that term, and never SGLang's note.
"""

from __future__ import annotations

import json

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.launch import check_parallel, parse_flags
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA

DEEPSEEK_V3 = DATA / "configs" / "deepseek-ai--DeepSeek-V3.json"
RAW = json.loads(DEEPSEEK_V3.read_text())
WHOLE = RAW["vocab_size"] * RAW["hidden_size"] * 2  # 1,853,358,080 B


def _ledger(engine: str, flags: list[str]) -> Ledger:
    model = model_from_config(RAW, source=DEEPSEEK_V3.name)
    settings = parse_flags(engine, ["--model", "m", *flags])
    check_parallel(settings)
    return predict(model, settings, gpu_total_bytes=141 << 30, gpu_name="H200", measured=MeasuredInputs())


def test_sglang_builds_the_embedding_whole_under_dp_attention() -> None:
    ledger = _ledger("sglang", ["--tp", "8", "--dp", "8", "--enable-dp-attention", "--engine-version", "0.5.6"])
    row = next(row for row in ledger.ranks[0].weights.rows if row.component == "embedding")
    assert RAW["vocab_size"] % 64 == 0 and (row.bytes, row.shards) == (WHOLE, 1) == (1_853_358_080, 1)
    assert row.note == "whole on every rank: SGLang builds it without TP under DP attention"


def test_trtllm_attention_dp_keeps_its_own_whole_embedding_term_and_no_sglang_note() -> None:
    ledger = _ledger("trtllm", ["--tp", "8", "--dp", "8", "--enable_attention_dp", "--engine-version", "1.0.0"])
    row = next(row for row in ledger.ranks[0].weights.rows if row.component == "embedding")
    assert (row.bytes, row.shards) == (WHOLE // 8, 8) == (231_669_760, 8)
    assert "SGLang" not in row.note


def _embedding(config: dict[str, object], source: str, flags: list[str]) -> tuple[int, int]:
    model = model_from_config(config, source=source)
    settings = parse_flags("sglang", ["--model", "m", *flags])
    check_parallel(settings)
    ledger = predict(model, settings, gpu_total_bytes=141 << 30, gpu_name="H200", measured=MeasuredInputs())
    row = next(row for row in ledger.ranks[0].weights.rows if row.component == "embedding")
    return row.bytes, row.shards


def test_llama4_models_embedding_is_whole_under_dp_attention_by_its_class() -> None:
    """Llama4ForConditionalGeneration builds Llama4ForCausalLM's Llama4Model (mllama4.py:496; llama4.py:489 at 0.5.8
    `enable_tp=not is_dp_attention_enabled()`): Maverick's vocab 202,048 × hidden 5,120 × 2 B whole, a multiple of 64."""
    path = DATA / "engine_diff" / "configs" / "meta-llama--Llama-4-Maverick-17B-128E-Instruct.json"
    config = json.loads(path.read_text())
    flags = ["--tp", "8", "--dp", "8", "--enable-dp-attention", "--engine-version", "0.5.6"]
    assert _embedding(config, path.name, flags) == (202_048 * 5_120 * 2, 1) == (2_068_971_520, 1)
    assert _embedding(config, path.name, flags[:2] + flags[-2:]) == (202_048 // 8 * 5_120 * 2, 8)  # no DP attention
