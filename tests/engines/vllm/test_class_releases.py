"""A model class planned at a vLLM release whose registry lacks it says so by name (class_releases.py).

Expected spans from the wheels themselves, not kvtop: tests/data/architectures/vllm_first_releases.json, written by
benchmarks/engine_registries/vllm_first_releases.py from the registry of every vLLM wheel 0.6.0 … 0.34.0 (the keys of
each dict `_VLLM_MODELS` spreads). The engine's words: registry.py `_raise_for_unsupported` (0.6.0, 0.7.1); its
Transformers fallback: `_FALLBACK_MODEL` "TransformersModel", first in the 0.7.2 registry. And the corpus: every vLLM
log that names its release ran its class there.
"""

from __future__ import annotations

import json

import pytest

from benchmarks.calibration.corpus import load
from kvtop.cli import main
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource, parse_release
from kvtop.domain.engines.vllm import architectures
from kvtop.domain.engines.vllm.class_releases import (
    FALLBACK_FIRST,
    READ_LAST,
    SPANS,
    first_release_check,
    registers,
)
from tests.data_paths import CONFIGS, DATA

READ = json.loads((DATA / "architectures" / "vllm_first_releases.json").read_text())


def _at(text: str, approximate: bool = False) -> ResolvedVersion:
    return ResolvedVersion(text=text, source=VersionSource.LOG_DATES if approximate else VersionSource.FLAG,
                           approximate=approximate)  # fmt: skip


def test_the_table_is_the_wheels() -> None:
    assert len(READ["releases"]) == 67 and READ["releases"][-1] == READ_LAST
    assert READ["transformers_fallback_first"] == FALLBACK_FIRST
    assert {name: row.spans for name, row in SPANS.items()} == {
        name: tuple((first, last) for first, last in row["spans"]) for name, row in READ["classes"].items()
    }


def test_the_spans_agree_with_the_lists_read_at_0130_0330_0340() -> None:
    """architectures.py's RANGES were read from the same wheels by read_registries.py (another reader)."""
    for found in architectures.RANGES:
        release = parse_release(found.first)
        assert release is not None
        assert {name for name in SPANS if registers(name, release)} == found.registered, found.first


@pytest.mark.parametrize(("architecture", "before", "first"), [
    ("Qwen3ForCausalLM", "0.8.3", "0.8.4"),
    ("Qwen3MoeForCausalLM", "0.8.3", "0.8.4"),
    ("DeepseekV3ForCausalLM", "0.6.5", "0.6.6"),
    ("Gemma3ForConditionalGeneration", "0.7.3", "0.8.0"),
    ("GptOssForCausalLM", "0.10.0", "0.10.1"),
])  # fmt: skip
def test_registered_from_the_first_release_and_not_before(architecture: str, before: str, first: str) -> None:
    row = READ["classes"][architecture]
    assert (row["before"], row["first"]) == (before, first)
    registered = first_release_check(architecture, _at(first), custom_code=False)
    assert registered is not None and registered.state == "registered"
    assert registered.message == f"vLLM {first} registers {architecture} (added in {first})"
    earlier = first_release_check(architecture, _at(before), custom_code=False)
    assert earlier is not None and earlier.state != "registered" and f"(added in {first})" in earlier.message


def test_before_the_transformers_backend_it_is_refused_in_vllms_words() -> None:
    """DeepseekV3ForCausalLM first in 0.6.6; 0.6.5's registry has no TransformersModel (first in 0.7.2)."""
    found = first_release_check("DeepseekV3ForCausalLM", _at("0.6.5"), custom_code=True)
    assert found is not None and found.state == "refused"
    assert found.engine_words == "Model architectures ['DeepseekV3ForCausalLM'] are not supported for now."


def test_a_class_no_wheel_registers_is_refused_before_the_backend_remote_code_or_not() -> None:
    """QuuxForCausalLM is in no wheel's registry (the JSON); 0.6.0 and 0.7.1 take the class from the registry alone
    (no "auto_map" anywhere in either wheel's vllm/), so an auto_map does not rescue it; 0.7.2 has the backend."""
    assert "QuuxForCausalLM" not in READ["classes"] and "0.7.1" in READ["releases"]
    for release in ("0.6.0", "0.7.1"):
        for custom_code in (False, True):
            found = first_release_check("QuuxForCausalLM", _at(release), custom_code=custom_code)
            assert found is not None and found.state == "refused", (release, custom_code)
            assert found.engine_words == "Model architectures ['QuuxForCausalLM'] are not supported for now."
            assert ("auto_map remote code is not loaded" in found.message) == custom_code
    assert first_release_check("QuuxForCausalLM", _at("0.7.2"), custom_code=False) is None  # the backend's
    assert first_release_check("QuuxForCausalLM", _at("0.7.1", approximate=True), custom_code=False) is None
    assert first_release_check("llama", _at("0.7.1"), custom_code=False) is None  # a model_type, no class
    assert first_release_check("QuuxForCausalLM", _at("0.5.5"), custom_code=False) is None  # not read


def test_from_the_transformers_backend_an_unregistered_class_is_not_checked() -> None:
    found = first_release_check("Qwen3ForCausalLM", _at("0.8.3"), custom_code=False)
    assert found is not None and found.state == "not_checked" and "Transformers backend" in found.message
    assert first_release_check("Qwen3ForCausalLM", _at("0.8.3"), custom_code=True).state == "custom_code"  # type: ignore[union-attr]
    inferred = first_release_check("Qwen3ForCausalLM", _at("0.7.1", approximate=True), custom_code=False)
    assert inferred is not None and inferred.state == "not_checked"
    assert first_release_check("Qwen3ForCausalLM", ResolvedVersion(), custom_code=False) is None
    assert first_release_check("Qwen3ForCausalLM", _at("0.5.5"), custom_code=False) is None  # not read


def test_a_class_dropped_or_absent_for_a_span_is_said_with_its_spans() -> None:
    """Llama4ForCausalLM: in the 0.8.3 registry, out 0.8.4 … 0.10.0, back from 0.10.1 (the wheels)."""
    assert READ["classes"]["Llama4ForCausalLM"]["absent_after_first"][:1] == ["0.8.4"]
    found = first_release_check("Llama4ForCausalLM", _at("0.9.0"), custom_code=False)
    assert found is not None and found.state == "not_checked"
    assert "(registered at 0.8.3, from 0.10.1)" in found.message
    dropped = first_release_check("Phi3SmallForCausalLM", _at("0.10.0"), custom_code=False)  # last in 0.9.2
    assert dropped is not None and "registered at 0.6.0–0.9.2" in dropped.message


def test_every_corpus_log_naming_its_release_ran_a_registered_class() -> None:
    judged = 0
    for record in load("vllm"):
        if record.model is None or record.version.release is None or record.version.approximate:
            continue
        found = architectures.check(record.model, record.settings, record.version)
        judged += record.model.architecture in SPANS
        assert found.state != "refused", (record.id, found.message)
    assert judged >= 80


def test_plan_between_the_read_lists_says_registered_and_before_the_backend_refuses(
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = str(CONFIGS / "Qwen--Qwen3-32B.json")
    args = ["plan", "--engine", "vllm", "--model", config, "--gpu", "H100", "--no-calibration-store"]
    assert main([*args, "--engine-version", "0.7.1"]) == 2
    assert "vLLM 0.7.1 has no Qwen3ForCausalLM (added in 0.8.4)" in capsys.readouterr().err
    assert main([*args, "--engine-version", "0.30.0"]) == 0
    assert "registers Qwen3ForCausalLM is not checked" not in capsys.readouterr().out


def test_a_log_that_ran_a_class_before_vllm_registered_it_ran_the_transformers_backend() -> None:
    """file58653435936: Qwen3-32B on vLLM 0.7.3 ("Qwen3 falls back to the Transformers backend", the report's words); 0.7.3's
    registry has no Qwen3ForCausalLM (0.8.4's first): not refused, said to be the backend's, not checked."""
    (record,) = [r for r in load("vllm") if r.id == "file58653435936-qwen3-32b-80gb-v073-v0-u082-transformers-backend"]
    assert record.model is not None
    found = architectures.check(record.model, record.settings, record.version)
    assert found.state == "not_checked" and "(added in 0.8.4): it hands it to its Transformers backend" in found.message
