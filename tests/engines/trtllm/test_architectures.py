"""TensorRT-LLM's model classes: no release's list read, so no launch is refused for its class; the note says
what its main branch registers at 065ff9e9 (2026). Expected names come from the read kept in
tests/data/architectures/engine_registries.json (`trtllm_main`: the keys of `MODEL_ARCH_TO_MODULE` in
tensorrt_llm/_torch/models/_arch_index.py at that commit, parsed by benchmarks/engine_registries/
read_registries.py trtllm), not from the module; the words from modeling_auto.py's
`raise ValueError(f"Unknown architecture for AutoModelForCausalLM: {...architectures[0]}")`, the same in the
four versions of the file read (1.0-era `MODEL_CLASS_MAPPING.get`, the DeepSeek-MTP one, two 2026 ones)."""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from kvtop.domain.engines.trtllm.architectures import MAIN_COMMIT, MAIN_REGISTERED, TABLE, check
from kvtop.domain.engines.versions import NOT_STATED, ResolvedVersion
from kvtop.domain.launch import parse_flags
from kvtop.sources.hub import load_model
from tests.data_paths import CONFIGS, DATA

REGISTRIES = json.loads((DATA / "architectures" / "engine_registries.json").read_text())
QWEN3_8B = str(CONFIGS / "Qwen--Qwen3-8B.json")
INTERNLM_20B = str(CONFIGS / "internlm--internlm-20b.json")  # architectures: ["InternLMForCausalLM"]
ARGS = ["--engine", "trtllm", "--gpu", "H100", "--no-calibration-store"]


def test_the_main_read_is_the_arch_index_kept_with_its_commit() -> None:
    read = REGISTRIES["trtllm_main"]
    assert len(read) == 81 and len(set(read)) == 81
    assert frozenset(read) == MAIN_REGISTERED
    assert (
        MAIN_COMMIT in REGISTRIES["source"]["trtllm_main"]
        and "_arch_index.py" in REGISTRIES["source"]["trtllm_main"]
    )
    assert {"LlamaForCausalLM", "Qwen3MoeForCausalLM", "DeepseekV3ForCausalLM", "GptOssForCausalLM"} <= set(
        read
    )
    assert not {"InternLMForCausalLM", "GraniteForCausalLM", "JambaForCausalLM"} & set(read)


@pytest.mark.parametrize("release", ["0.21.0", "1.0.0", "1.1.0", "1.2.0"])
def test_no_release_is_checked(release: str) -> None:
    found = check(load_model(QWEN3_8B), parse_flags("trtllm", []), ResolvedVersion(text=release))
    assert found.state == "not_checked" and not TABLE.ranges
    assert found.message == (
        f"whether TensorRT-LLM {release} registers Qwen3ForCausalLM is not checked: kvtop read no release's "
        "@register_auto_model classes (nor the TensorRT backend's MODEL_MAP); its main branch at 065ff9e9 (2026) "
        "registers Qwen3ForCausalLM"
    )


def test_a_class_main_lacks_is_planned_with_the_error_a_release_without_it_stops_with() -> None:
    found = check(load_model(INTERNLM_20B), parse_flags("trtllm", []), NOT_STATED)
    assert found.state == "not_checked" and not found.refused
    assert found.message.endswith(
        "its main branch at 065ff9e9 (2026) registers no InternLMForCausalLM: a release without it stops with "
        "'Unknown architecture for AutoModelForCausalLM: InternLMForCausalLM'"
    )
    assert "_arch_index.py" in found.source


def test_plan_prints_the_note_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--model", INTERNLM_20B, *ARGS]) == 0
    out, err = capsys.readouterr()
    assert "Unknown architecture for AutoModelForCausalLM: InternLMForCausalLM" in out
    assert "Traceback" not in out + err
    assert main(["plan", "--json", "--model", INTERNLM_20B, *ARGS]) == 0
    state = json.loads(capsys.readouterr().out)["architecture_check"]["state"]
    assert state == "not_checked"
