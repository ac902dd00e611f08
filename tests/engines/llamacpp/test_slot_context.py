"""The context one llama-server request can fill is its slot's, not -c: `int n_ctx_slot = llama_n_ctx_seq(ctx)`,
capped at the model's training context (tools/server/server-context.cpp, `load_model` → slots setup), and
`n_ctx_seq = GGML_PAD(n_ctx / n_seq_max, 256)` unless the cache is unified (src/llama-context.cpp). Expected
figures are that arithmetic by hand; the explain path already reads the log's `n_ctx_seq` as the context."""

from __future__ import annotations

from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.sources.hub import load_model
from tests.data_paths import CONFIGS

GIB = 1 << 30
LLAMA_31_8B = str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")  # max_position_embeddings 131072


def plan(flags: str):  # type: ignore[no-untyped-def]
    return predict(load_model(LLAMA_31_8B), parse_flags("llamacpp", flags.split()), gpu_total_bytes=80 * GIB)


def test_four_slots_split_the_context() -> None:
    """-c 16384 -np 4 (not unified): 4 streams of 16384 / 4 = 4096 cells; a request holds one slot's 4096."""
    ledger = plan("-c 16384 -np 4")
    assert ledger.engine.token_capacity == 16384
    assert ledger.context_length == 4096
    assert ledger.requests_at_context_length == 4.0


def test_a_unified_cache_lets_one_request_fill_it() -> None:
    """--kv-unified: n_ctx_seq = n_ctx, so one request may use all 16384 cells."""
    assert plan("-c 16384 -np 4 --kv-unified").context_length == 16384


def test_a_slot_beyond_the_training_context_is_capped() -> None:
    """-c 262144 -np 1: n_ctx_seq 262144 > n_ctx_train 131072 → the server caps the slot at 131072."""
    ledger = plan("-c 262144 -np 1")
    assert ledger.engine.token_capacity == 262144
    assert ledger.context_length == 131072
