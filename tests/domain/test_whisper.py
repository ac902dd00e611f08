"""Whisper (WhisperForConditionalGeneration: architectures/table_encdec.py, towers_whisper.py) against the engines'
own classes built on the meta device (tests/data/engine_diff/registry/{vllm-0.33.0,sglang-0.5.23}.json) for two
real config.json (tests/data/configs/families, SOURCES.md there) and large-v3-turbo's reconstruction (recon/: 4
decoder layers under a 32-layer encoder): the weights book equal on both engines at TP 1 and 2, the expected bytes
written here from the engines' module code (the KV books against the engines': test_whisper_kv.py).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.architectures.coverage import verdict
from kvtop.domain.engines.sglang.architectures import TOWER_SPLIT as SGLANG_SPLIT
from kvtop.domain.engines.sglang.pp_parts import stage_parts as sglang_parts
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.engines.vllm.architectures import TOWER_SPLIT as VLLM_SPLIT
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.data_paths import DATA

FAMILIES = DATA / "configs" / "families"
RECON = DATA / "configs" / "recon"
SGLANG = ResolvedVersion(text="0.5.23", source=VersionSource.FLAG)
B = 2  # large-v3 states float16, small float32 (both engines load it bf16): two bytes a parameter either way

# (d_model, encoder layers, decoder layers, ffn, mel bins, vocab) of each config
SHAPES = {
    "openai--whisper-small": (768, 12, 12, 3072, 80, 51865),
    "openai--whisper-large-v3": (1280, 32, 32, 5120, 128, 51866),
    "recon--openai--whisper-large-v3-turbo": (1280, 32, 4, 5120, 128, 51866),
}


def encoder_params(d: int, layers: int, ffn: int, mels: int, tp: int) -> int:
    """vLLM 0.33.0 whisper.py WhisperEncoder (SGLang 0.5.23 whisper.py the same modules): conv1 mels·d·3 + d, conv2
    d·d·3 + d, embed_positions 1500 × d, a final LayerNorm 2d, whole; a layer's qkv_proj 3d² + 3d (QKVParallelLinear
    bias=True: the K bias too) and out_proj's weight d², fc1 d·ffn + ffn, fc2's weight ffn·d split over TP; out_proj's
    and fc2's biases and two LayerNorms (6d) whole."""
    whole = mels * d * 3 + d + d * d * 3 + d + 1500 * d + 2 * d + layers * 6 * d
    return whole + layers * (3 * d * d + 3 * d + d * d + d * ffn + ffn + ffn * d) // tp


def decoder_params(d: int, layers: int, ffn: int, vocab: int, tp: int) -> int:
    """WhisperDecoder: embed_tokens vocab × d (nn.Embedding: whole, unpadded), embed_positions 448 × d, a final
    LayerNorm 2d; a layer's self_attn qkv 3d² + 3d and out_proj d², encoder_attn q_proj d² + d, kv_proj 2d² + 2d
    (MergedColumnParallelLinear) and out_proj d², fc1 d·ffn + ffn and fc2 ffn·d split over TP; the two out_proj
    biases, fc2's bias and three LayerNorms (3d + 6d) whole."""
    whole = vocab * d + 448 * d + 2 * d + layers * 9 * d
    return whole + layers * (4 * d * d + 3 * d + 4 * d * d + 3 * d + d * ffn + ffn + ffn * d) // tp


def sglang_head_params(d: int, vocab: int, tp: int) -> int:
    """SGLang's proj_out: a ParallelLMHead of its own, vocab padded to 64 (51,865 and 51,866 → 51,904), ÷ TP."""
    return -(-vocab // 64) * 64 // tp * d


def model(name: str) -> ModelSpec:
    folder = RECON if name.startswith("recon--") else FAMILIES
    return model_from_config(json.loads((folder / f"{name}.json").read_text()), source=name)


def engine_row(engine: str, version: str, name: str, tp: int) -> dict[str, Any]:
    return row_of(engine, version, name, tp)


def test_the_engines_bytes_are_the_modules_arithmetic() -> None:
    """The meta builds' bytes by top-level child are the hand arithmetic above: vLLM's `model.encoder` and
    `model.decoder` (proj_out tied, nothing more); SGLang's `encoder`, `decoder` and `proj_out` apart."""
    expected = {("openai--whisper-small", 1): 483_525_120, ("openai--whisper-small", 2): 285_187_584,
                ("openai--whisper-large-v3", 1): 3_087_226_880, ("openai--whisper-large-v3", 2): 1_618_524_160,
        ("recon--openai--whisper-large-v3-turbo", 1): 1_617_858_560,
        ("recon--openai--whisper-large-v3-turbo", 2): 883_517_440}  # fmt: skip
    for (name, tp), total in expected.items():
        d, enc_layers, layers, ffn, mels, vocab = SHAPES[name]
        enc, dec = encoder_params(d, enc_layers, ffn, mels, tp), decoder_params(d, layers, ffn, vocab, tp)
        vllm = engine_row("vllm", "0.33.0", name, tp)["stages"][0]["param_bytes"]
        assert B * (enc + dec) == total == sum(vllm.values())
        assert vllm == {"model.encoder": B * enc, "model.decoder": B * dec}
        sglang = engine_row("sglang", "0.5.23", name, tp)["stages"][0]["param_bytes"]
        assert sglang == {
            "encoder": B * enc,
            "decoder": B * dec,
            "proj_out": B * sglang_head_params(d, vocab, tp),
        }


@pytest.mark.parametrize("name", sorted(SHAPES))
@pytest.mark.parametrize("tp", [1, 2])
def test_vllms_weights_book_equals_its_build(name: str, tp: int) -> None:
    m = model(name)
    d, enc_layers, layers, ffn, mels, vocab = SHAPES[name]
    book = weights_book(m, ParallelLayout(tp=tp), range(m.num_layers), first_stage=True, last_stage=True,
                        tower_split=VLLM_SPLIT)  # fmt: skip
    rows = {r.component: int(r.bytes) for r in book.rows}
    assert m.num_layers == layers
    assert rows["audio"] == B * encoder_params(d, enc_layers, ffn, mels, tp)
    assert "lm_head" not in rows  # proj_out is embed_tokens (tie_weights)
    notes = {r.component: r.note for r in book.rows}
    assert notes["embedding"] == "tied with the LM head (one matrix)"
    assert book.total_bytes == B * (
        encoder_params(d, enc_layers, ffn, mels, tp) + decoder_params(d, layers, ffn, vocab, tp)
    )


@pytest.mark.parametrize("name", sorted(SHAPES))
@pytest.mark.parametrize("tp", [1, 2])
def test_sglangs_weights_book_equals_its_build(name: str, tp: int) -> None:
    m = model(name)
    d, enc_layers, layers, ffn, mels, vocab = SHAPES[name]
    book = weights_book(m, ParallelLayout(tp=tp), range(m.num_layers), first_stage=True, last_stage=True,
                        tower_split=SGLANG_SPLIT, parts=sglang_parts(m, 0, 1, SGLANG))  # fmt: skip
    rows = {r.component: int(r.bytes) for r in book.rows}
    assert rows["lm_head"] == B * sglang_head_params(d, vocab, tp)
    # proj_out is a matrix of its own (whisper.py), so the embedding row must not call itself the head too
    assert "tied" not in {r.component: r.note for r in book.rows}["embedding"]
    assert book.total_bytes == B * (encoder_params(d, enc_layers, ffn, mels, tp) + decoder_params(d, layers, ffn, vocab, tp)
                                    + sglang_head_params(d, vocab, tp))  # fmt: skip


def test_the_decoder_is_read_from_its_own_fields() -> None:
    """large-v3 states num_hidden_layers 32 (the encoder's): the decoder's 32 layers, 20 heads of 64, every head its
    own K and V, decoder_ffn_dim 5,120, max_target_positions 448, are the entry's."""
    m = model("openai--whisper-large-v3")
    g = m.geometry(0)
    assert (m.num_layers, g.heads, g.kv_heads, g.head_dim, m.intermediate_size) == (32, 20, 20, 64, 5120)
    assert (m.max_position_embeddings, m.tie_word_embeddings, m.architecture) == (
        448, True, "WhisperForConditionalGeneration")  # fmt: skip
    assert verdict("WhisperForConditionalGeneration")[0] == "entry"


def test_turbo_is_the_published_parameter_count() -> None:
    """openai/whisper-large-v3-turbo's card: "809 million parameters". transformers' count of the reconstruction is
    the engines' less the K biases they add (32 encoder layers, and 4 decoder layers × self and cross): 808,878,080."""
    d, enc_layers, layers, ffn, mels, vocab = SHAPES["recon--openai--whisper-large-v3-turbo"]
    engines = encoder_params(d, enc_layers, ffn, mels, 1) + decoder_params(d, layers, ffn, vocab, 1)
    assert engines - (enc_layers + 2 * layers) * d == 808_878_080
    assert round((engines - (enc_layers + 2 * layers) * d) / 1e6) == 809
    assert (
        engine_row("sglang", "0.5.23", "recon--openai--whisper-large-v3-turbo", 1)["cell_size"]
        == (32 + 2 * 4) * 5120
    )
