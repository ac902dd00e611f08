"""The planner names the engine's own KV cell as `plan` does (an operator trial: Whisper-large-v3 on vLLM showed
'KV B/token/rank 3.01 MiB' with no word that it is a max-length request's blocks over its tokens)."""

from __future__ import annotations

from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.sources.hub import load_model
from kvtop.ui.widgets.plan_result import cell_lines

WHISPER = "tests/data/configs/families/openai--whisper-large-v3.json"


def test_whispers_cell_is_named_per_token_of_a_max_length_request() -> None:
    model = load_model(WHISPER)
    # blocks of 16: 0.33.0's rules, pinned (0.34.0 defaults to blocks of 64: config/cache.py:185)
    flags = parse_flags("vllm", ["--max-model-len", "448"], strict=True).model_copy(update={"engine_version": "0.33.0"})
    ledger = predict(model, flags, gpu_total_bytes=81559 << 20, gpu_name="H100")
    # by hand (vllm/encdec): a block of 16 tokens × 32 layers × (20 KV heads × 64 × 2 (K, V) × 2 B) = 2,621,440 B;
    # a request holds 448 ÷ 16 = 28 self-attention blocks and 8,192 ÷ 16 = 512 cross-attention blocks = 540
    assert 16 * 32 * 20 * 64 * 2 * 2 == 2_621_440 and 448 // 16 + 8192 // 16 == 540
    assert ledger.kv_bytes_per_token == -(-540 * 2_621_440 // 448)  # 3,159,772: the cell rounded up
    (line,) = cell_lines(ledger)
    assert line.plain == (
        "KV B/token/rank: per token of a max-length request (28 self-attention blocks over 448 decoder tokens"
        " + 512 cross-attention blocks over 8,192 encoder tokens)"
    )
    assert ledger.kv_cell is not None and ledger.kv_cell.request_pages == 540
    assert ledger.kv_cell.page_bytes == 2_621_440 and ledger.kv_cell.request_tokens == 448


def test_a_plain_cell_adds_no_line() -> None:
    model = load_model("llama-3-70b")
    ledger = predict(model, parse_flags("sglang", ["--tp-size", "8"], strict=True), gpu_total_bytes=81559 << 20)
    assert cell_lines(ledger) == []
