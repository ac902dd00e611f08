"""The token-cap cause names the engine's own cap flag (its rules' `cap_fields`), never another engine's.

Expected flags, from each engine's own CLI: SGLang server_args.py `--max-total-tokens`; vLLM engine/arg_utils.py
`--num-gpu-blocks-override` (a block count, memory aside; vLLM has no token-count flag); LMDeploy's CLI
`--num-gpu-blocks`; TensorRT-LLM's `kv_cache_config.max_tokens`, a key of the `--extra_llm_api_options` YAML (KvCacheConfig's
`max_tokens` field, llmapi/llm_args.py), never a trtllm-serve option (serve.py declares no `--kv_cache_config.*`: "No such
option"); llama.cpp caps by `-c` only.
C17 (tests/domain/test_explain_sglang_loads.py) keeps SGLang's sentence from a real log.
"""

from __future__ import annotations

import pytest

from kvtop.domain.explain_causes import MismatchFacts, token_cap
from kvtop.domain.explanation import token_caps_of
from kvtop.domain.launch import LaunchSettings


@pytest.mark.parametrize(
    ("engine", "words"),
    [
        ("sglang", "a --max-total-tokens setting or the context bound"),
        ("vllm", "a --num-gpu-blocks-override setting or the context bound"),
        ("lmdeploy", "a --num-gpu-blocks setting or the context bound"),
        ("trtllm", "a kv_cache_config.max_tokens setting or the context bound"),
        ("llamacpp", "the context bound"),
    ],
)
def test_each_engine_names_its_own_token_cap(engine: str, words: str) -> None:
    assert token_caps_of(LaunchSettings(engine=engine)) == words


def test_token_cap_sentence_carries_the_engine_words() -> None:
    """A pool whose printed sizes hold the cell (56 KiB a token within 57,000–57,500 B) yet fewer tokens than memory."""
    facts = MismatchFacts(engine_name="vLLM", kv_memory_logged=False, logged_tokens=100_000, gap_tokens=-5_000,
                          cell_bytes=57_344, model_name="m", kv_dtype="bfloat16", tp=1, gpus=1, ranks_seen=1,
                          page_size=16, logged_pool_bytes_per_token_ends=(57_000, 57_500),
                          token_caps=token_caps_of(LaunchSettings(engine="vllm")))  # fmt: skip
    cause = token_cap(facts)
    assert cause is not None
    assert "100,000 tokens are a token cap (a --num-gpu-blocks-override setting or the context bound)" in cause
    assert "--max-total-tokens" not in cause
