"""What `kvtop plan` says of whisper-large-v3's KV (tests/data/configs/families/openai--whisper-large-v3.json, the
Hub's config.json: SOURCES.md there): vLLM's max-length request in whole blocks and its cross pool per encoder token
(engines/vllm/encdec.py), SGLang's request cap from the context_len its own code derives (engines/sglang/
context_len.py). Every expected figure is the engine's arithmetic done here by hand.

A vLLM block at TP 1: 16 tokens × 32 decoder layers × 20 KV heads × head_dim 64 × (K + V) × 2 B = 2,621,440 B.
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from tests.data_paths import DATA

LARGE_V3 = str(DATA / "configs" / "families" / "openai--whisper-large-v3.json")
BLOCK = 16 * 32 * 20 * 64 * 2 * 2
# vLLM 0.33.0 on 80 GiB with the weights and runtime given (test_whisper_kv.py: 28,147 blocks, 23,351 tokens)
VLLM = ["--model", LARGE_V3, "--engine", "vllm", "--gpu", "H100", "--gpu-memory", "80GiB", "--weights-memory",
        "2.88GiB", "--non-kv-memory", "2GiB", "--engine-version", "0.33.0"]  # fmt: skip


def plan(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["plan", "--no-calibration-store", *args]) == 0
    return capsys.readouterr().out


def test_vllm_says_a_request_in_whole_blocks(capsys: pytest.CaptureFixture[str]) -> None:
    """A request: cdiv(448, 16) = 28 self-attention blocks + cdiv(8,192, 16) = 512 cross-attention blocks (v0.33.0
    CrossAttentionSpec over max_num_encoder_input_tokens = max_num_batched_tokens 8,192 on a GPU of ≥ 70 GiB) = 540
    blocks × 2,621,440 B = 1,415,577,600 B for 448 tokens; no fractional byte a token is printed (540 × 2,621,440
    ÷ 448 = 3,159,771.43 is no figure a pool holds)."""
    assert BLOCK == 2_621_440 and 540 * BLOCK == 1_415_577_600
    text = plan(capsys, *VLLM)
    assert ("KV per max-length request per rank — rank 0: 540 blocks × 2,621,440 B = 1,415,577,600 B (1.32 GiB) "
            "for 448 tokens (28 self-attention blocks over 448 decoder tokens + 512 cross-attention blocks over "
            "8,192 encoder tokens); tokens = int(blocks ÷ 540 × 448)") in text  # fmt: skip
    assert "3,159,771" not in text
    # one decoder layer's row 20 × 64 × 2 × 2 = 5,120 B × 32 layers, the cross pool's over the encoder's tokens
    assert "  full         32 layers         163,840 B per token\n" in text
    assert "  cross        32 layers         163,840 B per encoder token\n" in text


def test_vllm_json_names_the_request_and_the_cross_pool(capsys: pytest.CaptureFixture[str]) -> None:
    out = json.loads(plan(capsys, *VLLM, "--json"))
    cell = out["kv_cell"]
    assert (cell["request_pages"], cell["page_bytes"], cell["request_tokens"]) == (28 + 512, BLOCK, 448)
    assert cell["request_bytes"] == 1_415_577_600 and cell["unit"] == "per token of a max-length request"
    assert out["token_capacity"] == int(28_147 / 540 * 448) == 23_351
    pools = {pool["name"]: pool for pool in out["ranks"][0]["kv_pools"]}
    assert (pools["full"]["bytes_per"], pools["full"]["bytes_per_token"]) == ("token", 32 * 5_120)
    assert (pools["cross"]["bytes_per"], pools["cross"]["bytes_per_token"]) == ("encoder token", 32 * 5_120)


SGLANG = ["--model", LARGE_V3, "--engine", "sglang", "--gpu", "H100", "--engine-version", "0.5.23", "--json"]


@pytest.mark.parametrize(
    ("flags", "requests", "context"),
    [
        # SGLang 0.5.23's context_len 2,048 (WhisperConfig holds none of CONTEXT_LENGTH_KEYS): estimated
        # int(12,000 ÷ 2,048 × 512) = 3,000 within 2,048..4,096; min(3,000, 12,000 // 2) = 3,000 (kvtop's 448
        # would have given int(12,000 ÷ 448 × 512) = 13,714 → 4,096)
        ("--max-total-tokens 12000", 3_000, 2_048),
        # --context-length 448 is what the engine then divides by: 13,714 → 4,096; min(4,096, 6,000)
        ("--max-total-tokens 12000 --context-length 448", 4_096, 448),
    ],
)
def test_sglang_caps_requests_by_its_own_context(
    capsys: pytest.CaptureFixture[str], flags: str, requests: int, context: int
) -> None:
    """kv_cache_configurator.py resolve_max_num_reqs; ReqToTokenPool (n + 1) rows × (context_len + 4) int32."""
    out = json.loads(plan(capsys, *SGLANG, "--cmd", f"python -m sglang.launch_server {flags}"))
    assert out["token_capacity"] == 12_000
    assert out["max_running_requests"] == requests
    assert out["ranks"][0]["req_to_token_bytes"] == (requests + 1) * (context + 4) * 4


def test_sglang_on_an_h100_is_4096(capsys: pytest.CaptureFixture[str]) -> None:
    """Default pool: int(tokens ÷ 2,048 × 512) is far over 4,096 (tokens > 16,384), so the clamp's 4,096, and the
    req_to_token rows 4,097 × 2,052 × 4 = 33,628,176 B."""
    out = json.loads(plan(capsys, *SGLANG))
    assert out["token_capacity"] > 16_384 and out["max_running_requests"] == 4_096
    assert out["ranks"][0]["req_to_token_bytes"] == 4_097 * 2_052 * 4 == 33_628_176


LLAMA = str(DATA / "configs" / "families" / "meta-llama--Llama-3.2-1B-Instruct.json")


@pytest.mark.parametrize(
    ("engine", "version", "context"),
    [
        # SGLang 0.5.23 _derive_context_length → get_context_length's fallback 2,048 (no CONTEXT_LENGTH_KEYS key)
        ("sglang", "0.5.23", 2_048),
        # vLLM _get_and_verify_max_len reads max_target_positions 448 (the config's own field)
        ("vllm", "0.33.0", 448),
    ],
)
def test_one_context_length_per_launch(
    capsys: pytest.CaptureFixture[str], engine: str, version: str, context: int
) -> None:
    """The context the engine runs with is the one every figure reads: the header, --json context_length and the
    full-context requests (token capacity ÷ context), and SGLang's req_to_token rows (context_len + 4)."""
    args = ["--model", LARGE_V3, "--engine", engine, "--gpu", "H100", "--engine-version", version]
    out = json.loads(plan(capsys, *args, "--json"))
    assert out["context_length"] == context
    assert out["requests_at_context_length"] == pytest.approx(out["token_capacity"] / context)
    if engine == "sglang":
        assert out["ranks"][0]["req_to_token_bytes"] == (out["max_running_requests"] + 1) * (context + 4) * 4
    text = plan(capsys, *args)
    assert f"·  context {context:,}\n" in text.splitlines(keepends=True)[0]
    assert f"requests of {context:,} tokens" in text or f"at {context:,} tokens per request" in text


@pytest.mark.parametrize(("engine", "flag"), [("sglang", "--context-length"), ("vllm", "--max-model-len")])
def test_a_plain_llama_keeps_its_positions(capsys: pytest.CaptureFixture[str], engine: str, flag: str) -> None:
    """Llama-3.2-1B's config.json max_position_embeddings 131,072 (a CONTEXT_LENGTH_KEYS key for SGLang, vLLM's
    max_model_len default) is the context both engines run with; --context-length overrides it."""
    args = ["--model", LLAMA, "--engine", engine, "--gpu", "H100", "--json"]
    assert json.loads(plan(capsys, *args))["context_length"] == 131_072
    assert json.loads(plan(capsys, *args, flag, "8192"))["context_length"] == 8_192


def test_sglang_checks_a_stated_context_against_its_derived_2048(capsys: pytest.CaptureFixture[str]) -> None:
    """`_derive_context_length` refuses a --context-length above the derived one (2,048 for Whisper, not the
    decoder's 448): 1,024 starts and is the context every figure reads; 4,096 is refused naming 2,048."""
    base = ["--model", LARGE_V3, "--engine", "sglang", "--gpu", "H100", "--engine-version", "0.5.23"]
    cmd = "python -m sglang.launch_server --context-length"
    out = json.loads(plan(capsys, *base, "--json", "--cmd", f"{cmd} 1024"))
    assert out["context_length"] == 1_024
    assert out["ranks"][0]["req_to_token_bytes"] == (out["max_running_requests"] + 1) * (1_024 + 4) * 4
    assert main(["plan", "--no-calibration-store", *base, "--cmd", f"{cmd} 4096"]) != 0
    assert "refuses --context-length 4,096 above the model's 2,048 positions" in capsys.readouterr().err
