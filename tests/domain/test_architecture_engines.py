"""New families through the engines' rules: what each engine holds per token and per request, by hand."""

from __future__ import annotations

import pytest

from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS

H200 = 143771 << 20
HELDOUT = CONFIGS / "heldout"


def test_qwen3_5_keeps_an_fp32_state_per_request_in_both_engines() -> None:
    """Qwen3.5-35B-A3B: 30 gated-delta-net layers, 10 full ones (layer_types). One request's state per layer:
    conv (2 × 16 × 128 + 32 × 128 = 8,192 channels) × (4 − 1) × bf16 + 32 heads × 128 × 128 × fp32 (the config's
    mamba_ssm_dtype, honoured by vLLM's Qwen3_5ForConditionalGenerationConfig and SGLang's mamba2_state_dtype);
    KV per token: 10 × 2 KV heads × 256 × (K, V) × 2 B."""
    model = load_model(str(HELDOUT / "Qwen--Qwen3.5-35B-A3B.json"))
    per_layer = 8_192 * 3 * 2 + 32 * 128 * 128 * 4
    for engine in ("sglang", "vllm"):
        ledger = predict(model, parse_flags(engine, []), gpu_total_bytes=H200, gpu_name="H200")
        pools = {pool.name: pool for pool in ledger.ranks[0].kv.pools}
        assert pools["state"].bytes_per_request == 30 * per_layer == 64_389_120
        assert ledger.kv_bytes_per_token == 10 * 2 * 256 * 2 * 2 == 20_480


def test_minimax_m3_cell_holds_the_index_keys_beside_kv() -> None:
    """MiniMax-M3 at TP 8: 60 layers × max(1, 4 KV heads ÷ 8) × 128 × (K, V) × 2 B = 30,720 B, and 57 sparse layers'
    index keys (one bf16 head of 128: vLLM MiniMaxM3IndexerCache) = 14,592 B: SGLang's cell is both."""
    model = load_model(str(HELDOUT / "MiniMaxAI--MiniMax-M3.json"))
    ledger = predict(model, parse_flags("sglang", ["--tp", "8"]), gpu_total_bytes=H200, gpu_name="H200")
    assert ledger.kv_bytes_per_token == 60 * 1 * 128 * 2 * 2 + 57 * 128 * 2 == 45_312


def test_vllm_unifies_gemma4_pages_and_refuses_before_the_release_read() -> None:
    """Gemma-4-26B-A4B at TP 2: sliding layers 8 ÷ 2 KV heads × 256 × 2 × 2 B = 4,096 B a token, global layers
    max(1, 2 ÷ 2) × 512 × 2 × 2 B = 2,048 B: vLLM 0.33.0 doubles the global layers' block to 32 so every page is
    16 × 4,096 = 65,536 B (kv_cache_planning.unify_kv_cache_spec_page_size; the engine-diff rows, e.g. pp2, list
    FullAttentionSpec block 32 beside SlidingWindowSpec block 16; so from v0.12.0, PR #29143); a release before it
    refuses to start (get_kv_cache_groups' NotImplementedError), and kvtop says so by name; with one
    group (--disable-hybrid-kv-cache-manager) every layer counts at full length: 25 × 4,096 + 5 × 2,048.
    The page is 0.33.0's figure, so pinned there (0.34.0's default block is 64: config/cache.py:185)."""
    model = load_model(str(HELDOUT / "google--gemma-4-26B-A4B.json"))
    at_033 = parse_flags("vllm", ["--tp", "2", "--engine-version", "0.33.0"])
    ledger = predict(model, at_033, gpu_total_bytes=H200, gpu_name="H200")
    engine = ledger.engine  # 5 layer slots (5 full, 25 sliding: group_size 5) × 65,536 B a block
    assert (engine.page_size, engine.num_blocks) == (16, engine.kv_budget_bytes // (5 * 65_536))
    old = parse_flags("vllm", ["--tp", "2", "--engine-version", "0.11.0"])  # get_kv_cache_groups raises before 0.12.0
    with pytest.raises(UnsupportedModelError, match=r"^engine: vLLM 0.11.0 refuses to start .*\(2048 and 4096 B"):
        predict(model, old, gpu_total_bytes=H200, gpu_name="H200")
    flags = parse_flags("vllm", ["--tp", "2", "--disable-hybrid-kv-cache-manager"])
    ledger = predict(model, flags, gpu_total_bytes=H200, gpu_name="H200")
    assert ledger.kv_bytes_per_token == 25 * 4_096 + 5 * 2_048 == 112_640


def test_kimi_k3_additions_are_read_from_their_fields_and_only_there() -> None:
    """Kimi-K3's text model is a KimiLinearConfig with latent experts (routed_expert_hidden_size 3584, a latent norm),
    MLA's output gate (mla_use_output_gate), KDA's full-rank gate and attention residual blocks (attn_res_block_size):
    each read from its field (the bytes against SGLang 0.5.23's meta build: tests/engines/sglang/
    test_kimi_k3_weights.py); a Kimi-Linear config without those fields reads none of them."""
    k3 = load_model(str(HELDOUT / "moonshotai--Kimi-K3.json"))
    assert k3.moe is not None and k3.state is not None
    assert (k3.moe.latent_size, k3.moe.latent_norm, k3.state.full_rank_gate) == (3584, True, True)
    assert (k3.body.latent_output_gate, k3.body.attention_residuals) == (True, True)
    assert not any("routed_expert_hidden_size" in note for note in k3.not_modelled)
    linear = {"architectures": ["KimiLinearForCausalLM"], "model_type": "kimi_linear", "hidden_size": 2304,
              "num_hidden_layers": 27, "num_attention_heads": 32, "vocab_size": 163840, "max_position_embeddings": 1048576,
              "linear_attn_config": {"full_attn_layers": [4, 8, 12, 16, 20, 24, 27], "num_heads": 32, "head_dim": 128,
                                     "short_conv_kernel_size": 4}}  # fmt: skip
    from kvtop.domain.model_config import model_from_config

    model = model_from_config(linear, source="kimi-linear")  # KimiLinearConfig's defaults for the rest
    assert model.moe is not None and model.state is not None
    assert (model.moe.latent_size, model.moe.latent_norm, model.state.full_rank_gate) == (0, False, False)
    assert (model.body.latent_output_gate, model.body.attention_residuals) == (False, False)
    assert (
        model.layer_attention.count(model.layer_attention[3]) == 7
    )  # full (MLA) on the 7 listed, KDA between
