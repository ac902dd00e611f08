"""SGLang's embedding under DP attention is SGLang's rule (`SglangRules.vocab_split`), not the shared book's.

Expected bytes from the config's shapes and SGLang's VocabParallelEmbedding arithmetic, never from kvtop: rows padded
to 64 (`pad_vocab_size`, layers/vocab_parallel_embedding.py 0.5.8:51, :248-252), then ÷ the group's size
(`num_embeddings_per_partition = divide(num_embeddings_padded, tp_size)`, :291-293), where tp_size is 1 under
`enable_tp=False` and `get_attention_tp_size()` (tp ÷ dp) under `use_attn_tp_group=True` (:218-228). DeepSeek-V3's
vocab 129,280 (2,020 × 64) × hidden 7,168 × 2 B (bf16). DeepseekV2Model builds `enable_tp=not
is_dp_attention_enabled()` to 0.5.7 (deepseek_v2.py 0.5.7:3042) and `use_attn_tp_group=is_dp_attention_enabled()` from
0.5.8 (:2523); its ParallelLMHead stays over TP. TensorRT-LLM's DeepseekV3Model builds its embedding whole at any
layout, a term of its own (trtllm/deepseek_weights.py embedding_whole_bytes): its book holds the split share beside
that term, and never SGLang's note.
"""

from __future__ import annotations

import json

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.sglang.vocab_split import DP_ATTENTION_EMBEDDING_CLASSES, GROUP_ERAS
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
    assert row.note == ("whole on every rank: SGLang builds it without TP under DP attention "
                        "(SGLang 0.5.6's DeepseekV2Model, vocab_split.py)")  # fmt: skip


def _rows(ledger: Ledger) -> dict[str, tuple[int, int]]:
    return {row.component: (row.bytes, row.shards) for row in ledger.ranks[0].weights.rows}


def test_deepseek_v3_embedding_whole_at_0_5_7_and_over_attention_tp_from_0_5_8() -> None:
    """--tp 8 --dp 2 --enable-dp-attention: attention TP 8 ÷ 2 = 4. At 0.5.7 the table is whole (129,280 rows,
    already a multiple of 64); at 0.5.8 it is 129,280 ÷ 4 = 32,320 rows a rank. The LM head: 129,280 ÷ 8 = 16,160
    rows at both (ParallelLMHead over TP, deepseek_v2.py 0.5.8:2798-2804: attention TP only with --enable-dp-lm-head)."""
    flags = ["--tp", "8", "--dp", "2", "--enable-dp-attention", "--engine-version"]
    before, after = _rows(_ledger("sglang", [*flags, "0.5.7"])), _rows(_ledger("sglang", [*flags, "0.5.8"]))
    assert before["embedding"] == (129_280 * 7_168 * 2, 1) == (1_853_358_080, 1)
    assert after["embedding"] == (32_320 * 7_168 * 2, 4) == (463_339_520, 4)
    assert before["lm_head"] == after["lm_head"] == (16_160 * 7_168 * 2, 8) == (231_669_760, 8)


def test_deepseek_v3_over_attention_tp_one_is_the_whole_table_and_says_so() -> None:
    """dp == tp (the corpus's DP-attention launches): attention TP 1, so 0.5.8's split holds the whole table."""
    ledger = _ledger("sglang", ["--tp", "8", "--dp", "8", "--enable-dp-attention", "--engine-version", "0.5.23"])
    row = next(row for row in ledger.ranks[0].weights.rows if row.component == "embedding")
    assert (row.bytes, row.shards) == (1_853_358_080, 1)
    assert row.note == ("whole on every rank: SGLang splits it over attention TP under DP attention "
                        "(SGLang 0.5.23's DeepseekV2Model, vocab_split.py)")  # fmt: skip


def test_deepseek_v3_without_dp_attention_splits_over_tp_at_every_release() -> None:
    for release in ("0.5.7", "0.5.8"):
        rows = _rows(_ledger("sglang", ["--tp", "8", "--engine-version", release]))
        assert rows["embedding"] == rows["lm_head"] == (231_669_760, 8)


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


def test_llama4_embedding_whole_to_0_5_8_over_attention_tp_from_0_5_9() -> None:
    """Llama4Model: llama4.py 0.5.8:489 `enable_tp=not is_dp_attention_enabled()`, 0.5.9:490 `use_attn_tp_group=…`.
    Maverick's vocab 202,048 (3,157 × 64) × hidden 5,120 × 2 B; --tp 8 --dp 2: attention TP 4, 50,512 rows a rank."""
    path = DATA / "engine_diff" / "configs" / "meta-llama--Llama-4-Maverick-17B-128E-Instruct.json"
    config = json.loads(path.read_text())
    flags = ["--tp", "8", "--dp", "2", "--enable-dp-attention", "--engine-version"]
    assert _embedding(config, path.name, [*flags, "0.5.8"]) == (2_068_971_520, 1)
    assert _embedding(config, path.name, [*flags, "0.5.9"]) == (50_512 * 5_120 * 2, 4) == (517_242_880, 4)


def test_glm_4_7_flash_embedding_whole_at_0_5_8_over_attention_tp_from_0_5_9() -> None:
    """Glm4MoeLiteModel: glm4_moe_lite.py 0.5.8:443 `enable_tp=not is_dp_attention_enabled()` (its first release),
    0.5.9:443 `use_attn_tp_group=is_dp_attention_enabled()`. GLM-4.7-Flash's vocab 154,880 (2,420 × 64) × hidden
    2,048 × 2 B; --tp 4 --dp 2: attention TP 2, 77,440 rows a rank."""
    path = DATA / "engine_diff" / "registry" / "configs" / "Glm4MoeLiteForCausalLM.json"
    config = json.loads(path.read_text())
    flags = ["--tp", "4", "--dp", "2", "--enable-dp-attention", "--engine-version"]
    assert _embedding(config, path.name, [*flags, "0.5.8"]) == (154_880 * 2_048 * 2, 1) == (634_388_480, 1)
    assert _embedding(config, path.name, [*flags, "0.5.9"]) == (77_440 * 2_048 * 2, 2) == (317_194_240, 2)


def test_every_class_names_model_code_whose_eras_the_table_holds() -> None:
    built_by = {entry.built_by for entry in DP_ATTENTION_EMBEDDING_CLASSES}
    assert built_by == set(GROUP_ERAS) == {
        "DeepseekV2Model", "Llama4Model", "Glm4MoeLiteModel", "HYV4Model", "DeepseekV4Model", "SarvamMLAModel",
        "Qwen2Model", "Qwen2MoeModel", "Glm4MoeModel", "GptOssModel", "Qwen3NextModel", "BailingMoEModel",
        "FalconH1Model", "Step3TextModel", "LongcatFlashModel", "LLaDA2MoeModel", "MiMoV2Model",
        "BailingMoELinearModel", "KimiK3LinearModel", "Glm5NextModel", "MuseSpark1xModel",
    }  # fmt: skip


def test_qwen3_embedding_over_tp_whole_then_over_attention_tp_by_release() -> None:
    """Qwen3ForCausalLM builds Qwen3Model(Qwen2Model) (qwen3.py 0.5.8:315): qwen2.py has no DP-attention argument at
    0.4.6.post5 (over TP), `enable_tp=not is_dp_attention_enabled()` at 0.4.9.post6:270 … 0.5.8:280 (whole) and
    `use_attn_tp_group=…` from 0.5.9:281. Qwen3-8B's vocab 151,936 (2,374 × 64) × hidden 4,096 × 2 B; --tp 4 --dp 2:
    attention TP 2, 75,968 rows a rank; over TP 4: 37,984."""
    path = DATA / "configs" / "Qwen--Qwen3-8B.json"
    config = json.loads(path.read_text())
    flags = ["--tp", "4", "--dp", "2", "--enable-dp-attention", "--engine-version"]
    assert _embedding(config, path.name, [*flags, "0.4.6.post5"]) == (37_984 * 4_096 * 2, 4) == (311_164_928, 4)
    assert _embedding(config, path.name, [*flags, "0.5.8"]) == (151_936 * 4_096 * 2, 1) == (1_244_659_712, 1)
    assert _embedding(config, path.name, [*flags, "0.5.9"]) == (75_968 * 4_096 * 2, 2) == (622_329_856, 2)


def test_qwen3_moe_embedding_whole_under_dp_attention_at_dp_equal_tp() -> None:
    """Qwen3MoeForCausalLM builds Qwen3MoeModel(Qwen2MoeModel) (qwen3_moe.py 0.5.8:871): whole at 0.5.8 (qwen2_moe.py
    :573), over attention TP 8 ÷ 8 = 1 from 0.5.9 (:577): the whole table at both, not ÷ 8 as the book splits it.
    Qwen3-235B-A22B's vocab 151,936 × hidden 4,096 × 2 B."""
    path = DATA / "configs" / "Qwen--Qwen3-235B-A22B.json"
    config = json.loads(path.read_text())
    flags = ["--tp", "8", "--dp", "8", "--enable-dp-attention", "--engine-version"]
    for release in ("0.5.8", "0.5.9"):
        assert _embedding(config, path.name, [*flags, release]) == (1_244_659_712, 1)
