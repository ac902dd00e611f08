"""llama.cpp's GGUF architecture list (`LLM_ARCH_NAMES`, src/llama-arch.cpp) read at build b10603, and a GGUF
whose `general.architecture` it has not got refused in its own words. Expected names come from the copied table
(tests/data/llamacpp/arch/llm_arch_names_b10603.cpp, tests/data/llamacpp/SOURCES.md), not from the module; the
words from src/llama-model.cpp `llama_model_create` and src/llama.cpp at the same build."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kvtop.cli import main
from kvtop.domain.engines.llamacpp.architectures import READS, check
from kvtop.domain.engines.versions import NOT_STATED, ResolvedVersion
from kvtop.domain.errors import InputError
from kvtop.domain.launch import parse_flags
from kvtop.sources.hub import load_model
from tests.data_paths import CONFIGS
from tests.engines.llamacpp.gguf_files import LLAMA_31_8B, write_gguf

TABLE = Path(__file__).parents[2] / "data" / "llamacpp" / "arch" / "llm_arch_names_b10603.cpp"
ARGS = ["--engine", "llamacpp", "--gpu", "H100", "-c", "8192", "--no-calibration-store"]


def table_names() -> list[str]:
    """The names of the copied `LLM_ARCH_NAMES` initializer, in its order."""
    return re.findall(r'\{\s*LLM_ARCH_\w+\s*,\s*"([^"]*)"\s*\}', TABLE.read_text())


def test_the_list_is_the_builds_table_less_clip_and_unknown() -> None:
    names = table_names()
    assert len(names) == 148 and names[0] == "clip" and names[-1] == "(unknown)"
    (read,) = READS
    assert (read.first, read.last) == ("b10603", "b10603") and "c060ca974c77" in read.source
    assert read.loaded == frozenset(names) - {"clip", "(unknown)"}
    # the GGUF names of the models kvtop's tests load, and one it has not got: Mistral GGUFs say "llama"
    assert {"llama", "qwen3", "qwen3moe", "gemma2", "gemma3", "phi3", "gpt-oss"} <= read.loaded
    assert "mistral" not in read.loaded


def model(tmp_path: Path, arch: str):  # type: ignore[no-untyped-def]
    return load_model(str(write_gguf(tmp_path / f"{arch}.gguf", (arch, LLAMA_31_8B[1]), arch)))


def test_a_gguf_llama_cpp_loads_is_registered(tmp_path: Path) -> None:
    found = check(model(tmp_path, "llama"), parse_flags("llamacpp", []), NOT_STATED)
    assert (found.state, found.architecture) == ("registered", "llama")
    assert "no build stated: the newest read, b10603" in found.message


def test_a_name_the_table_has_not_got_is_refused_in_llama_cpps_words(tmp_path: Path) -> None:
    found = check(model(tmp_path, "mistral"), parse_flags("llamacpp", []), NOT_STATED)
    assert found.refused and found.engine_words == "unknown model architecture: 'mistral'"


def test_plan_of_such_a_gguf_exits_2_without_a_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_gguf(tmp_path / "m.gguf", ("mistral", LLAMA_31_8B[1]), "m")
    assert main(["plan", "--model", str(path), *ARGS]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kvtop: error: --model: llama.cpp b10603 refuses general.architecture 'mistral': "
                          "unknown model architecture: 'mistral'") and "Traceback" not in err  # fmt: skip


def test_a_name_neither_reads_is_refused_when_the_gguf_is_read(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="llama.cpp b10603 refuses this GGUF: unknown model architecture: 'grok3x'"):
        model(tmp_path, "grok3x")
    with pytest.raises(InputError, match="CLIP cannot be used as main model, use it with --mmproj instead"):
        model(tmp_path, "clip")


def test_an_unread_build_and_a_config_json_model_are_not_checked(tmp_path: Path) -> None:
    older = check(model(tmp_path, "llama"), parse_flags("llamacpp", []), ResolvedVersion(text="b6980"))
    assert older.state == "not_checked" and "read LLM_ARCH_NAMES at b10603 only" in older.message
    config = load_model(str(CONFIGS / "meta-llama--Llama-3.1-8B.json"))
    assert check(config, parse_flags("llamacpp", []), NOT_STATED).state == "not_checked"
