"""Model facts the engines really use: tied heads, replicated embeddings, FP8 MLA layouts, MTP cells."""

from __future__ import annotations

import json

from kvtop.domain.engines.base import EngineInputs
from kvtop.domain.engines.sglang import RULES as SGLANG
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.kv import KvFormat, kv_book
from kvtop.domain.kv_format import resolve_kv_format
from kvtop.domain.launch import parse_flags
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.ledger import predict
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.conftest import CONFIGS

H100 = 81559 << 20
H200 = 143771 << 20
B200 = 183359 << 20


def load(name: str) -> ModelSpec:
    return model_from_config(json.loads((CONFIGS / name).read_text()), source=name)


def rows_of(ledger) -> dict:  # type: ignore[no-untyped-def]
    return {row.component: row for row in ledger.ranks[0].weights.rows}


def test_llama4_scout_without_the_key_keeps_its_own_lm_head() -> None:
    model = load("meta-llama--Llama-4-Scout-17B-16E-Instruct.json")
    assert model.tie_word_embeddings is False  # Llama4Config / Llama4TextConfig default False
    rows = rows_of(predict(model, parse_flags("sglang", ["--tp", "4"]), gpu_total_bytes=H100))
    # vocab 202,048 (already a multiple of 64) ÷ 4 ranks × hidden 5,120 × 2 B
    assert rows["lm_head"].bytes == rows["embedding"].bytes == 202_048 // 4 * 5_120 * 2 == 517_242_880
    assert "tied" not in rows["embedding"].note


def test_gemma3_without_the_key_stays_tied() -> None:
    model = load("google--gemma-3-27b-it.json")
    assert model.tie_word_embeddings is True  # Gemma3TextConfig defaults to True
    rows = rows_of(predict(model, parse_flags("sglang", ["--tp", "2"]), gpu_total_bytes=H100))
    assert "lm_head" not in rows


def test_sglang_dp_attention_keeps_the_deepseek_embedding_whole() -> None:
    model = load("deepseek-ai--DeepSeek-V3.json")
    flags = ["--tp", "8", "--dp", "8", "--enable-dp-attention", "--engine-version", "0.5.9"]  # before the graph reserve
    ledger = predict(model, parse_flags("sglang", flags), gpu_total_bytes=H200)
    rows = rows_of(ledger)
    assert rows["embedding"].bytes == 129_280 * 7_168 * 2 == 1_853_358_080  # whole: enable_tp off
    assert rows["embedding"].shards == 1
    assert rows["lm_head"].bytes == 129_280 // 8 * 7_168 * 2 == 231_669_760  # still split over TP
    assert ledger.token_capacity == 272_682


def test_embedding_is_split_over_tp_without_dp_attention() -> None:
    ledger = predict(
        load("deepseek-ai--DeepSeek-V3.json"), parse_flags("sglang", ["--tp", "8"]), gpu_total_bytes=H200
    )
    assert rows_of(ledger)["embedding"].bytes == 231_669_760


def test_vllm_plain_fp8_on_dsa_is_the_576_byte_latent() -> None:
    model = load("deepseek-ai--DeepSeek-V3.2.json")
    fp8 = predict(model, parse_flags("vllm", ["--tp", "8", "--kv-cache-dtype", "fp8"]), gpu_total_bytes=H200)
    ds_mla = predict(
        model, parse_flags("vllm", ["--tp", "8", "--kv-cache-dtype", "fp8_ds_mla"]), gpu_total_bytes=H200
    )
    assert fp8.kv_bytes_per_token == 61 * (576 + 132) == 43_188  # latent 576 × 1 B + indexer key 132 B
    assert ds_mla.kv_bytes_per_token == 61 * (656 + 132) == 48_068  # 512 fp8 + 4 × 4 B scales + 64 × 2 B RoPE


def _sglang_tp8(
    model: ModelSpec, gpu_total_bytes: int, fmt: KvFormat, *, draft_layers: int = 0
) -> tuple[int, int]:
    """(cell, tokens) of SGLang TP8 from the books, as the ledger hands them to the engine."""
    layout, layers = ParallelLayout(tp=8), range(model.num_layers)
    weights = weights_book(
        model, layout, layers, first_stage=True, last_stage=True, load_mtp=draft_layers > 0
    )
    kv = kv_book(model, layout, layers, fmt, SGLANG.kv_storage, draft_layers=draft_layers)
    result = SGLANG.solve(
        EngineInputs(
            model=model, layout=layout, settings=parse_flags("sglang", ["--tp", "8"]),
            gpu_total_bytes=gpu_total_bytes, weights_bytes=weights.total_bytes, kv=kv,
            context_length=model.max_position_embeddings,
            version=ResolvedVersion(text="0.5.9"),  # the automatic fraction before the piecewise-graph reserve
        )
    )  # fmt: skip
    return kv.full_bytes_per_token, result.token_capacity


def test_sglang_auto_kv_on_blackwell_is_fp8_for_dsa() -> None:
    model = load("deepseek-ai--DeepSeek-V3.2.json")
    blackwell = resolve_kv_format("auto", model, SGLANG.kv_storage, gpu_name="B200")
    hopper = resolve_kv_format("auto", model, SGLANG.kv_storage, gpu_name="H200")
    assert (blackwell, hopper) == ("fp8_e4m3", "bf16")
    # SGLang 0.5.9's pool allocates the 656-B FP8 rows (its NSA default on Blackwell is not trtllm yet), but
    # get_cell_size_per_token divides by the raw latent: 61 × (576 + 132) = 43,188 B (docs/engines/sglang.md
    # §6.1.1): 76,875,817,169 B // 43,188 = 1,780,027 → 1,779,968 in pages of 64 (1,599,296 at 48,068 B)
    assert _sglang_tp8(model, B200, blackwell) == (61 * (656 + 132), 1_779_968)


def test_sglang_mtp_inflates_the_cell_by_the_draft_layer() -> None:
    model = load("deepseek-ai--DeepSeek-V3.json")
    assert model.mtp_layers == 1
    # int(70,272 × (1 + 1/61)) = 70,272 + 1,152 (one more 576-wide bf16 latent)
    # 1,066,829 tokens with eh_proj booked FP8: its bf16 nn.Linear and a fifth norm (deepseek_nextn.py) take
    # 102,749,696 B more, 1,438.6 cells of 71,424 B: 1,438 fewer
    assert _sglang_tp8(model, B200, "bf16", draft_layers=1) == (71_424, 1_065_391)
    assert _sglang_tp8(model, B200, "bf16")[0] == 70_272
