"""The max_seq_len TensorRT-LLM's PyTorch backend runs at (docs/engines/trtllm.md §33).

Expected values: `PyTorchModelEngine._init_max_seq_len` and `_infer_max_seq_len_from_config` as the stored
model_engine.py copies write them (search-index ids 707893322, 3514536498: the config's max_position_embeddings × a
length-multiplying rope's factor, rounded up; a stated max_seq_len above it lowered to it, PR #4879), applied by hand to
each config's own fields in the docstrings.
"""

from __future__ import annotations

from kvtop.domain.engines.trtllm import RULES
from kvtop.domain.engines.trtllm.max_seq_len import inferred_max_seq_len
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.launch import parse_flags
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS

LLAMA_31 = load_model(str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"))
INTERNLM = load_model(str(CONFIGS / "internlm--internlm-20b.json"))
INTERNVL = load_model("tests/data/calibration/configs/OpenGVLab--InternVL2_5-8B-MPO.RECONSTRUCTED.json")


def _length(model, flags: list[str], version: str) -> int:  # type: ignore[no-untyped-def]
    return RULES.context_length(model, parse_flags("trtllm", flags), ResolvedVersion(text=version))


def test_a_llama3_rope_keeps_the_positions_and_a_longer_stated_length_is_lowered() -> None:
    """Llama-3.1-8B: max_position_embeddings 131,072, rope_type llama3 (its factor 8 not a length multiple): inferred
    131,072. --max_seq_len 200,000 on the PyTorch backend: lowered to 131,072 at 1.2.0 (after PR #4879), kept at 0.20.0
    (before it) and by a TensorRT engine."""
    assert inferred_max_seq_len(LLAMA_31) == 131_072
    assert _length(LLAMA_31, ["--backend", "pytorch", "--max_seq_len", "200000"], "1.2.0") == 131_072
    assert _length(LLAMA_31, ["--backend", "pytorch", "--max_seq_len", "200000"], "0.20.0") == 200_000
    assert _length(LLAMA_31, ["--backend", "tensorrt", "--max_seq_len", "200000"], "1.2.0") == 200_000
    assert _length(LLAMA_31, ["--backend", "pytorch", "--max_seq_len", "9192"], "1.2.0") == 9_192
    assert _length(LLAMA_31, ["--backend", "pytorch"], "1.2.0") == 131_072


def test_a_dynamic_rope_multiplies_the_inferred_length() -> None:
    """InternVL2.5-8B's language model: max_position_embeddings 32,768, rope {type: dynamic, factor: 2.0}:
    ⌈32,768 × 2.0⌉ = 65,536 when the launch states none."""
    assert inferred_max_seq_len(INTERNVL) == 65_536
    assert _length(INTERNVL, ["--backend", "pytorch"], "1.2.0") == 65_536


def test_no_rope_block_lowers_a_stated_length_to_the_positions() -> None:
    """internlm-20b: max_position_embeddings 4,096, no rope block: --max_seq_len 8,192 lowered to 4,096 at 1.0.0rc0."""
    assert _length(INTERNLM, ["--backend", "pytorch", "--max_seq_len", "8192"], "1.0.0rc0") == 4_096
    assert _length(INTERNLM, ["--backend", "pytorch", "--max_seq_len", "8192"], "0.21.0rc2") == 8_192
