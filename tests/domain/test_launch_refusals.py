"""Launches an engine sizes but refuses at start (kvtop.domain.refusals): the planner and `kvtop plan` must
never call them valid. Positions come from the real configs; the refusals from the engines' own checks
(docs/engines/sglang.md §4.6, vllm.md §3.7)."""

from __future__ import annotations

import pytest

from kvtop.domain.engines.versions import from_flag
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.launch import parse_flags
from kvtop.domain.launch_check import launch_refusals
from kvtop.domain.ledger import predict
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS

LLAMA_31 = CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"  # max_position_embeddings 131,072
H100 = 81559 << 20


def refusals(engine: str, flags: list[str], gpu: str | None = "H100", config=LLAMA_31, engine_version: str = ""):
    version = from_flag(engine_version) if engine_version else None
    ledger = predict(load_model(str(config)), parse_flags(engine, flags), gpu_total_bytes=H100, gpu_name=gpu,
                     version=version)  # fmt: skip
    return launch_refusals(ledger)


@pytest.mark.parametrize(
    ("engine", "flag", "override"),
    [("sglang", "--context-length", "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1"),
     ("vllm", "--max-model-len", "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1")],
)  # fmt: skip
def test_a_context_above_the_models_positions_is_refused_with_the_override(engine, flag, override) -> None:
    (refused,) = refusals(engine, [flag, "262144"])
    assert refused.field == flag and refused.override == override
    assert f"{flag} 262,144 above the model's 131,072 positions" in refused.message
    assert refusals(engine, [flag, "131072"]) == ()  # at the positions: accepted


def test_a_config_without_positions_takes_vllms_stated_length_and_sglangs_refusal() -> None:
    """Falcon-Mamba-7B's config names no position field. vLLM 0.33.0 _get_and_verify_max_len: "If max_model_len is
    specified, we use it" (2,048 is its default only), so the engine built --max-model-len 32,768 in the flag sweep;
    SGLang 0.5.23's get_context_length falls back to 2,048 and ModelConfig refuses 32,768 above it (both refuse)."""
    mamba = CONFIGS / "tiiuae--falcon-mamba-7b.json"
    assert refusals("vllm", ["--max-model-len", "32768"], config=mamba) == ()
    (refused,) = refusals("sglang", ["--context-length", "32768"], config=mamba)
    assert "--context-length 32,768 above the model's 2,048 positions" in refused.message


def test_bloom_without_a_position_field_takes_vllms_stated_length_and_sglangs_refusal() -> None:
    """bigscience/bloom-560m: BloomConfig names no position key, so vLLM's derived length is inf and
    _get_and_verify_max_len (v0.13.0, v0.33.0) returns a stated --max-model-len 4,096 as it is ("If max_model_len is
    specified, we use it"); SGLang's get_context_length (0.5.6.post2, 0.5.23) returns 2048 and ModelConfig raises
    "User-specified context_length (4096) is greater than the derived context_length (2048)". SGLang registers no
    BloomForCausalLM either (the registry sweep's row: "BloomForCausalLM has no SGlang implementation")."""
    bloom = CONFIGS / "families" / "bigscience--bloom-560m.json"
    assert refusals("vllm", ["--max-model-len", "4096"], config=bloom) == ()
    assert refusals("vllm", ["--max-model-len", "4096"], config=bloom, engine_version="0.13.0") == ()
    for version in ("0.5.23", "0.5.6.post2"):
        unregistered, context = refusals("sglang", ["--context-length", "4096"], config=bloom, engine_version=version)
        assert "has no model class for BloomForCausalLM" in unregistered.message
        assert context.field == "--context-length" and context.override == "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1"
        assert context.message.endswith("refuses --context-length 4,096 above the model's 2,048 positions (its "
                                        "default where the config names no position field)")  # fmt: skip
    (unregistered,) = refusals("sglang", ["--context-length", "2048"], config=bloom)  # at the 2,048: the class only
    assert "BloomForCausalLM" in unregistered.message


def test_an_attention_free_model_takes_fp8_kv_on_an_a100_under_vllm() -> None:
    """vLLM 0.33.0 refuses FP8 KV on sm80 where the attention runs TRITON_ATTN; Falcon-Mamba has no attention layer,
    so no backend is selected and the engine built `--kv-cache-dtype fp8` on sm80 in the flag sweep
    (tests/data/engine_diff/vllm-0.33.0.json: 70,615,040 tokens, the same state as bf16)."""
    mamba = CONFIGS / "tiiuae--falcon-mamba-7b.json"
    assert refusals("vllm", ["--kv-cache-dtype", "fp8"], gpu="A100-80GB", config=mamba) == ()
    with pytest.raises(InputError, match="refuses FP8 KV for this model on A100-80GB"):
        refusals("vllm", ["--kv-cache-dtype", "fp8"], gpu="A100-80GB", config=CONFIGS / "openai--gpt-oss-20b.json")  # sinks: TRITON_ATTN


def test_an_attention_free_model_runs_without_prefix_caching_so_chunked_prefill_may_be_off() -> None:
    """vLLM 0.33.0 ModelConfig.is_prefix_caching_supported: False for an attention-free model, so prefix caching is
    off by default and MambaModelConfig's 'Chunked prefill is required for Mamba prefix caching.' does not fire (the
    flag sweep built Falcon-Mamba-7B with --no-enable-chunked-prefill); prefix caching asked for on such a model is
    named not modelled (its 'align' state blocks)."""
    mamba = CONFIGS / "tiiuae--falcon-mamba-7b.json"
    assert refusals("vllm", ["--no-enable-chunked-prefill"], config=mamba) == ()
    with pytest.raises(UnsupportedModelError, match="prefix caching on an attention-free model"):
        refusals("vllm", ["--no-enable-chunked-prefill", "--enable-prefix-caching"], config=mamba)


def test_fp8_ds_mla_needs_mla_and_nvfp4_needs_blackwell_under_vllm() -> None:
    (ds_mla,) = refusals("vllm", ["--kv-cache-dtype", "fp8_ds_mla"])
    assert ds_mla.field == "--kv-cache-dtype" and "no attention backend for fp8_ds_mla" in ds_mla.message
    (nvfp4,) = refusals("vllm", ["--kv-cache-dtype", "nvfp4"], gpu="H100")
    assert "nvfp4 KV on H100 (sm90)" in nvfp4.message
    assert refusals("vllm", ["--kv-cache-dtype", "nvfp4"], gpu="B200") == ()
    assert refusals("vllm", ["--kv-cache-dtype", "nvfp4"], gpu=None) == ()  # an unnamed GPU: not checked
    assert refusals("vllm", ["--kv-cache-dtype", "fp8_e4m3"]) == ()


def test_engines_with_no_refusal_modelled_refuse_nothing() -> None:
    assert refusals("lmdeploy", ["--session-len", "262144"]) == ()
    assert refusals("trtllm", ["--max_seq_len", "262144"]) == ()
