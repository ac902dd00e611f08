"""The max_seq_len TensorRT-LLM's PyTorch backend runs at (docs/engines/trtllm.md §33).

Expected values: `PyTorchModelEngine._init_max_seq_len` and `_infer_max_seq_len_from_config` as the stored
model_engine.py copies write them (search-index ids 707893322, 3514536498: the config's max_position_embeddings × a
length-multiplying rope's factor, rounded up; a stated max_seq_len above it lowered to it, PR #4879), applied by hand to
each config's own fields in the docstrings.
"""

from __future__ import annotations

from kvtop.domain.engines.trtllm import RULES
from kvtop.domain.engines.trtllm.max_seq_len import inferred_max_seq_len, max_seq_len_note
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.launch import LaunchSettings, parse_flags
from kvtop.domain.launch_line import parse_launch_command, with_environment
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


def _allowed(flags: list[str], value: str) -> LaunchSettings:
    return with_environment(parse_flags("trtllm", flags), {"TLLM_ALLOW_LONG_MAX_MODEL_LEN": value})


def test_the_long_context_variable_keeps_a_stated_length_from_1_3_0rc0() -> None:
    """PR #10600 (ids 69471950776, 70433821559): `os.getenv("TLLM_ALLOW_LONG_MAX_MODEL_LEN", "0").lower() in ["1",
    "true", "yes", "y"]` keeps Llama-3.1-8B's --max_seq_len 200,000 above the inferred 131,072, with a warning; "0"
    or unset lowers it; 1.2.0 (the 1.2 branch, before the variable) lowers whatever is set."""
    flags = ["--backend", "pytorch", "--max_seq_len", "200000"]
    at = ResolvedVersion(text="1.3.0rc9")
    for word in ("1", "TRUE", "yes", "Y"):
        assert RULES.context_length(LLAMA_31, _allowed(flags, word), at) == 200_000
    assert RULES.context_length(LLAMA_31, _allowed(flags, "0"), at) == 131_072
    assert RULES.context_length(LLAMA_31, _allowed(flags, " 1"), at) == 131_072  # no strip in the engine
    assert _length(LLAMA_31, flags, "1.3.0rc9") == 131_072
    assert RULES.context_length(LLAMA_31, _allowed(flags, "1"), ResolvedVersion(text="1.2.0")) == 131_072


def test_the_launch_line_carries_the_variable_and_the_plan_names_what_happens() -> None:
    """The launch line's `TLLM_ALLOW_LONG_MAX_MODEL_LEN=1 trtllm-serve …` (1.3.0rc9's own Nemotron guide, id
    62244817597) is kept; the note says kept (at 1.3.0rc9) or lowered (at 1.2.0, and unset at 1.3.0rc9)."""
    line = "TLLM_ALLOW_LONG_MAX_MODEL_LEN=1 trtllm-serve m --backend pytorch --max_seq_len 200000"
    settings = parse_launch_command(line)
    assert settings is not None and settings.flags.get("TLLM_ALLOW_LONG_MAX_MODEL_LEN") == "1"
    kept = max_seq_len_note(LLAMA_31, settings, ResolvedVersion(text="1.3.0rc9"))
    assert kept is not None and "TLLM_ALLOW_LONG_MAX_MODEL_LEN=1" in kept and "200,000" in kept
    lowered = max_seq_len_note(LLAMA_31, settings, ResolvedVersion(text="1.2.0"))
    assert lowered is not None and "lowers --max_seq_len 200,000 to the model's 131,072" in lowered
    assert "does not read" in lowered
    bare = parse_flags("trtllm", ["--backend", "pytorch", "--max_seq_len", "200000"])
    unset = max_seq_len_note(LLAMA_31, bare, ResolvedVersion(text="1.3.0rc9"))
    assert unset is not None and unset.endswith("it keeps it with TLLM_ALLOW_LONG_MAX_MODEL_LEN=1")
    assert max_seq_len_note(LLAMA_31, parse_flags("trtllm", ["--max_seq_len", "9192"]), ResolvedVersion(text="1.3.0rc9")) is None
