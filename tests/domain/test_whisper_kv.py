"""Whisper's KV (kv.py `KvStorage.encoder_decoder`, engines/vllm/encdec.py) against the engines' own: their meta
builds (tests/data/engine_diff/registry: vLLM 0.33.0's KV cache specs layer by layer, SGLang 0.5.23's cell), a real
vLLM 0.15.1 startup log (tests/data/cases/vllm/wsl-v0151-whisper-large-v3) and vLLM's arithmetic done by hand.

One layer's row, both engines: 20 KV heads (whisper.py WhisperAttention: every head its own K and V) × head_dim 64
(d_model 1,280 ÷ 20) × (K + V) × 2 B = 5,120 B a token at TP 1, 2,560 B at TP 2 (10 heads a rank).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.kv import ENCODER_DECODER_NOT_MODELLED, kv_book
from kvtop.domain.launch import parse_flags
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.ledger import predict
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.wording import GIB
from tests.cli_in_process import run_kvtop
from tests.data_paths import CASES, DATA

FAMILIES, RECON = DATA / "configs" / "families", DATA / "configs" / "recon"
LARGE_V3 = FAMILIES / "openai--whisper-large-v3.json"
# (d_model, heads, encoder layers, decoder layers) of each config
SHAPES = {
    "openai--whisper-small": (768, 12, 12, 12),
    "openai--whisper-large-v3": (1280, 20, 32, 32),
    "recon--openai--whisper-large-v3-turbo": (1280, 20, 32, 4),
}
# a vLLM block of whisper-large-v3 at TP 1: 16 tokens × 5,120 B × 32 layers of one group
BLOCK = 16 * 5_120 * 32


def model(name: str) -> ModelSpec:
    folder = RECON if name.startswith("recon--") else FAMILIES
    return model_from_config(json.loads((folder / f"{name}.json").read_text()), source=name)


def engine_row(engine: str, version: str, name: str, tp: int) -> dict[str, Any]:
    return row_of(engine, version, name, tp)


@pytest.mark.parametrize("name", sorted(SHAPES))
@pytest.mark.parametrize("tp", [1, 2])
def test_vllms_pools_are_its_specs(name: str, tp: int) -> None:
    """vLLM: the decoder's self-attention layers a full pool, its cross-attention layers a cross pool, each layer
    2 × heads ÷ TP × 64 × 2 B a token: the meta build's FullAttentionSpec and CrossAttentionSpec pages ÷ 16."""
    d, heads, _, layers = SHAPES[name]
    m = model(name)
    book = kv_book(m, ParallelLayout(tp=tp), range(m.num_layers), "bf16", engine_rules("vllm").kv_storage)
    per_layer = 2 * heads // tp * (d // heads) * 2
    specs = engine_row("vllm", "0.33.0", name, tp)["stages"][0]["layer_specs"]
    for kind, pool in (("FullAttentionSpec", "full"), ("CrossAttentionSpec", "cross")):
        pages = {s["page_size_bytes"] // s["block_size"] for s in specs if s["kind"] == kind}
        assert sum(s["layers"] for s in specs if s["kind"] == kind) == layers
        assert pages == {per_layer}
        held = book.pool(pool)
        assert held is not None and (held.layers, held.bytes_per_layer_token) == (layers, per_layer)
    assert book.full_bytes_per_token == layers * per_layer  # the cross pool is no part of a token's own


@pytest.mark.parametrize("name", sorted(SHAPES))
@pytest.mark.parametrize("tp", [1, 2])
def test_sglangs_cell_is_its_build(name: str, tp: int) -> None:
    """SGLang 0.5.23: one pool of encoder_layers + 2 × decoder_layers layers (configs/model_config.py
    num_attention_layers), each the decoder's row: the meta build's cell_size."""
    d, heads, encoder, layers = SHAPES[name]
    m = model(name)
    book = kv_book(m, ParallelLayout(tp=tp), range(m.num_layers), "bf16", engine_rules("sglang").kv_storage)
    cell = (encoder + 2 * layers) * 2 * heads // tp * (d // heads) * 2
    assert book.full_bytes_per_token == cell == engine_row("sglang", "0.5.23", name, tp)["cell_size"]
    assert [p.name for p in book.pools] == ["full"]


@pytest.mark.parametrize("engine", ["trtllm", "lmdeploy", "llamacpp"])
def test_an_engine_kvtop_has_not_read_refuses_by_name(engine: str) -> None:
    m = model("openai--whisper-large-v3")
    with pytest.raises(UnsupportedModelError, match="encoder-decoder"):
        kv_book(m, ParallelLayout(), range(m.num_layers), "bf16", engine_rules(engine).kv_storage)
    assert "cross-attention KV" in ENCODER_DECODER_NOT_MODELLED


def test_vllm_0_15_1_log_is_its_arithmetic() -> None:
    """The log's 10.14 GiB of KV memory, on a GPU under 70 GiB (its encoder cache budget 2,048 tokens =
    max_num_batched_tokens): 10,887,742,095 B // 2,621,440 = 4,153 blocks; a request 28 + 128 = 156 blocks;
    concurrency 4,153 / 156 = 26.62x and tokens 4,153 // 2 groups × 16 = 33,216, both as logged."""
    settings = parse_flags("vllm", ["--gpu-memory-utilization", "0.85", "--engine-version", "0.15.1"])
    available = int(10.14 * GIB)
    ledger = predict(model_from_config(json.loads(LARGE_V3.read_text())), settings, gpu_total_bytes=24 * GIB,
                     measured=MeasuredInputs(available_kv_bytes=available))  # fmt: skip
    assert available // BLOCK == ledger.engine.num_blocks == 4_153
    assert round(ledger.engine.max_concurrency, 2) == 26.62
    assert ledger.token_capacity == 4_153 // 2 * 16 == 33_216


def test_kvtop_explain_matches_the_log() -> None:
    out = run_kvtop("explain", str(CASES / "vllm/wsl-v0151-whisper-large-v3/engine.log"),
                    "--model", str(LARGE_V3), "--gpu-memory", "24GiB", "--json", "--no-calibration-store")  # fmt: skip
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["logged"]["token_capacity"] == 33_216 and result["logged"]["max_concurrency"] == 26.62
    assert result["predicted"]["token_capacity"] == 33_216 and result["verdict"] == "match"


def test_kvtop_plan_on_an_h100_is_vllms_arithmetic() -> None:
    """vLLM 0.33.0 on 80 GiB, weights 2.88 GiB and 2 GiB of runtime given: requested ceil(85,899,345,920 × 0.92)
    = 79,027,398,247 B; available 79,027,398,247 − 3,092,376,453 − 2,147,483,648 = 73,787,538,146 B // 2,621,440 =
    28,147 blocks; a request cdiv(448, 16) = 28 + cdiv(8,192, 16) = 512 blocks (max_num_batched_tokens 8,192 on a
    GPU of ≥ 70 GiB); tokens int(28,147 / 540 × 448) = 23,351."""
    out = run_kvtop("plan", "--model", str(LARGE_V3), "--engine", "vllm", "--gpu", "H100",
                    "--gpu-memory", "80GiB", "--weights-memory", "2.88GiB", "--non-kv-memory", "2GiB", "--engine-version",
                    "0.33.0", "--json", "--no-calibration-store")  # fmt: skip
    assert out.returncode == 0, out.stderr
    plan = json.loads(out.stdout)
    assert plan["kv_budget_bytes"] == 79_027_398_247 - int(2.88 * GIB) - 2 * GIB == 73_787_538_146
    assert plan["num_blocks"] == 73_787_538_146 // BLOCK == 28_147
    assert plan["token_capacity"] == int(28_147 / (28 + 512) * 448) == 23_351
    assert plan["kv_bytes_per_token"] == -(-(540 * BLOCK) // 448)  # the cell: a max-length request's blocks


def test_kvtop_plan_on_sglang_divides_by_the_96_layer_cell() -> None:
    out = run_kvtop("plan", "--model", str(LARGE_V3), "--engine", "sglang", "--gpu", "H100",
                    "--engine-version", "0.5.23", "--json", "--no-calibration-store")  # fmt: skip
    assert out.returncode == 0, out.stderr
    plan = json.loads(out.stdout)
    assert plan["kv_bytes_per_token"] == (32 + 2 * 32) * 5_120 == 491_520
    assert plan["token_capacity"] == plan["kv_budget_bytes"] // 491_520


def test_vllm_before_the_releases_read_refuses_by_name() -> None:
    """V0's encoder-decoder runner kept cross-attention block tables of its own (not read): refused, not planned."""
    settings = parse_flags("vllm", ["--engine-version", "0.8.5"])
    with pytest.raises(UnsupportedModelError, match="encoder-decoder"):
        predict(model_from_config(json.loads(LARGE_V3.read_text())), settings, gpu_total_bytes=80 * GIB)


def test_kvtop_explain_reads_the_encoder_budget_from_the_log() -> None:
    """With no GPU named, the log's `Encoder cache will be initialized with a budget of 2048 tokens` is the
    max_num_batched_tokens (= encoder_cache_size): concurrency 4,153 / (28 + 2,048 ÷ 16) = 26.62, as logged; kvtop's
    80 GiB stand-in would otherwise take 8,192 (4,153 / 540 = 7.69)."""
    out = run_kvtop("explain", str(CASES / "vllm/wsl-v0151-whisper-large-v3/engine.log"),
                    "--model", str(LARGE_V3), "--json", "--no-calibration-store")  # fmt: skip
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["verdict"] == "match" and any("encoder cache budget" in n for n in result["notes"])
    # the cell: 156 blocks of 2,621,440 B over 448 tokens = 912,822.86 B, rounded up
    assert result["predicted"]["kv_bytes_per_token"] == -(-(156 * BLOCK) // 448) == 912_823
