"""The PyTorch engine's embedding and LM head whole on every rank (kvtop.domain.engines.lmdeploy.vocab_split).

Expected bytes from the configs' shapes, never from kvtop: a whole `nn.Embedding` / rowwise linear without TP holds
vocab_size × hidden_size × 2 B (bf16); split over TP, each rank holds the vocab padded to 64 rows ÷ tp (the book's
vocab-parallel rule, as TurboMind and the DeepSeek-V2 classes' ParallelEmbedding / ParallelLMHead build it).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.launch import check_parallel, parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA

QWEN3_MOE = DATA / "configs" / "Qwen--Qwen3-30B-A3B.json"
DEEPSEEK_V3 = DATA / "configs" / "deepseek-ai--DeepSeek-V3.json"


def _rows(config: Path, flags: list[str]) -> dict[str, tuple[int, int]]:
    model = model_from_config(json.loads(config.read_text()), source=config.name)
    settings = parse_flags("lmdeploy", ["--model", "m", *flags])
    check_parallel(settings)
    ledger = predict(model, settings, gpu_total_bytes=141 << 30, gpu_name="H200", measured=MeasuredInputs())
    return {row.component: (row.bytes, row.shards) for row in ledger.ranks[0].weights.rows}


def _shape(config: Path) -> tuple[int, int]:
    raw = json.loads(config.read_text())
    assert raw["torch_dtype"] == "bfloat16" and not raw.get("tie_word_embeddings", False)
    return raw["vocab_size"], raw["hidden_size"]


@pytest.mark.parametrize(
    "flags",
    [["--tp", "2", "--dp", "2", "--engine-version", "0.16.0"],  # the DP world: tp 2 is the MLP's TP
     ["--tp", "2", "--engine-version", "0.18.0"],  # plain TP: whole too
     ["--tp", "4", "--engine-version", "0.10.2"]],  # nn.Embedding, build_rowwise_linear (every class)
)  # fmt: skip
def test_the_pytorch_engine_builds_embedding_and_head_whole(flags: list[str]) -> None:
    vocab, hidden = _shape(QWEN3_MOE)  # 151,936 × 2,048
    rows = _rows(QWEN3_MOE, ["--backend", "pytorch", *flags])
    assert rows["embedding"] == (vocab * hidden * 2, 1) == (622_329_856, 1)
    assert rows["lm_head"] == (vocab * hidden * 2, 1)


@pytest.mark.parametrize(
    ("config", "flags"),
    [(QWEN3_MOE, ["--backend", "turbomind", "--tp", "2", "--engine-version", "0.18.0"]),  # TurboMind splits both
     (DEEPSEEK_V3, ["--backend", "pytorch", "--tp", "8", "--engine-version", "0.18.0"])],  # ParallelEmbedding/LMHead
)  # fmt: skip
def test_vocab_parallel_where_the_class_splits(config: Path, flags: list[str]) -> None:
    vocab, hidden = _shape(config)
    tp = int(flags[flags.index("--tp") + 1])
    split = -(-vocab // 64) * 64 // tp * hidden * 2
    rows = _rows(config, flags)
    assert rows["embedding"] == (split, tp)
    assert rows["lm_head"] == (split, tp)


def test_deepseek_v3_before_its_parallel_head_keeps_a_whole_head() -> None:
    """v0.14.0: deepseek_v2.py:972 ParallelEmbedding(is_tp=True), :1126 the head build_rowwise_linear (whole)."""
    vocab, hidden = _shape(DEEPSEEK_V3)  # 129,280 × 7,168
    rows = _rows(DEEPSEEK_V3, ["--backend", "pytorch", "--tp", "8", "--engine-version", "0.14.0"])
    assert rows["embedding"] == (vocab * hidden * 2 // 8, 8)  # 129,280 rows: a multiple of 64 and of 8
    assert rows["lm_head"] == (vocab * hidden * 2, 1)


def test_the_deepseek_classes_split_over_attention_tp_in_the_dp_world() -> None:
    """0.16.0 `--tp 8 --dp 8 --ep 8`: one world of ep = 8 ranks, attention TP 8 ÷ 8 = 1 (config.py DistConfig), so
    ParallelEmbedding / ParallelLMHead (layer_type 'attn') hold the whole padded vocab on every rank."""
    vocab, hidden = _shape(DEEPSEEK_V3)
    rows = _rows(DEEPSEEK_V3, ["--backend", "pytorch", "--tp", "8", "--dp", "8", "--ep", "8", "--engine-version", "0.16.0"])
    assert rows["embedding"] == rows["lm_head"] == (-(-vocab // 64) * 64 * hidden * 2, 1) == (1_853_358_080, 1)


def test_the_deepseek_embedding_splits_over_attention_tp_wider_than_one() -> None:
    """0.16.0 `--tp 8 --dp 2`: one world of 8 ranks, attention TP 8 ÷ 2 = 4 (config.py DistConfig): ParallelEmbedding
    (is_tp=True, layer_type 'attn', deepseek_v2.py 0.16.0:986) holds a quarter of the padded vocab like the
    ParallelLMHead, not the whole table SGLang's DeepseekV2Model builds under DP attention."""
    vocab, hidden = _shape(DEEPSEEK_V3)
    rows = _rows(DEEPSEEK_V3, ["--backend", "pytorch", "--tp", "8", "--dp", "2", "--engine-version", "0.16.0"])
    quarter = -(-vocab // 64) * 64 // 4 * hidden * 2
    assert rows["embedding"] == rows["lm_head"] == (quarter, 4) == (463_339_520, 4)


PHI_2 = DATA / "calibration" / "configs" / "microsoft--phi-2.json"


def test_a_whole_head_keeps_its_bias_whole() -> None:
    """Phi-2's head carries a bias (lm_head: Linear(2560, 51200, bias=True)); a linear's bias has its weight's
    output rows, so a head built whole on every rank (a rowwise linear without TP) holds all 51,200 of them, not
    the vocab ÷ --tp the split head would (float16: 2 B each)."""
    raw = json.loads(PHI_2.read_text())
    assert raw["torch_dtype"] == "float16" and not raw["tie_word_embeddings"]
    vocab, hidden = raw["vocab_size"], raw["hidden_size"]  # 51,200 × 2,560
    rows = _rows(PHI_2, ["--backend", "pytorch", "--tp", "2", "--engine-version", "0.18.0"])
    assert rows["lm_head"] == (vocab * hidden * 2 + vocab * 2, 1) == (262_246_400, 1)
    split = _rows(PHI_2, ["--backend", "turbomind", "--tp", "2", "--engine-version", "0.18.0"])  # TurboMind splits it
    assert split["lm_head"] == ((vocab * hidden * 2 + vocab * 2) // 2, 2)
