"""The method vLLM gives a draft launched without one (spec_methods.DETECTION_ERAS).

SpeculativeConfig.__post_init__ (config/speculative.py, read in the wheels) sets method None to draft_model, then
"Automatically detect the method": 'eagle-' in the draft's lowercased name is eagle, 'eagle3' eagle3 (v0.11.0
:320-323); 'dflash' dflash (v0.20.2 :580-592); 'dspark' or a Qwen3DSparkModel draft dspark (v0.25.0 :834-852), a
Gemma4DSparkModel draft from v0.26.0 (:868-887), a MuseGlimmerAssistantModel draft dflash from v0.28.0 (:934-957),
Qwen3OmniDSparkModel from v0.29.0 (:1275-1304), MuseSparkDSparkModel from v0.33.0 (:1432-1468); else draft_model.
The draft names are the examples in that code's comment and the projects' published drafts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.cli import main
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.runner_eras import runs_v2
from kvtop.domain.engines.vllm.spec_methods import detected_method, stated_method
from kvtop.domain.launch import LaunchSettings, parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_model
from tests.data_paths import CONFIGS

MISTRAL = load_model(str(CONFIGS / "mistralai--Mistral-7B-v0.1.json"))  # dense: V2 from v0.25.0 without a method


def _launch(draft: str, release: str | None) -> LaunchSettings:
    spec = json.dumps({"model": draft, "num_speculative_tokens": 3})
    return parse_flags("vllm", ["--speculative-config", spec, *(("--engine-version", release) if release else ())])


@pytest.mark.parametrize(("draft", "release", "method"), [
    ("yuhuili/EAGLE-LLaMA3-Instruct-8B", "0.11.0", "eagle"),
    ("yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "0.11.0", "eagle3"),  # 'eagle3-', not 'eagle-'
    ("AngelSlim/Qwen3-8B_eagle3", "0.33.0", "eagle3"),
    ("my-org/llama_eagle_head", "0.33.0", "draft_model"),  # 'eagle' without 'eagle-' or 'eagle3'
    ("z-lab/Qwen3-8B-DFlash-b16", "0.14.0", "draft_model"),  # no dflash test at v0.14.0
    ("z-lab/Qwen3-8B-DFlash-b16", "0.20.2", "dflash"),
    ("z-lab/Qwen3-8B-DFlash-b16", "0.30.0", "dflash"),
    ("deepseek-ai/dspark_qwen3_8b_block7", "0.24.0", "draft_model"),  # dspark detected from v0.25.0
    ("deepseek-ai/dspark_qwen3_8b_block7", "0.25.0", "dspark"),
    ("Qwen/Qwen2.5-0.5B-Instruct", "0.33.0", "draft_model"),
    ("Qwen/Qwen2.5-0.5B-Instruct", None, "draft_model"),
])  # fmt: skip
def test_the_draft_s_name_names_the_method(draft: str, release: str | None, method: str) -> None:
    assert stated_method(_launch(draft, release)) == method


@pytest.mark.parametrize(("architecture", "release", "method"), [
    ("Qwen3DSparkModel", "0.24.0", "draft_model"), ("Qwen3DSparkModel", "0.25.0", "dspark"),
    ("Gemma4DSparkModel", "0.25.1", "draft_model"), ("Gemma4DSparkModel", "0.26.0", "dspark"),
    ("MuseGlimmerAssistantModel", "0.27.1", "draft_model"), ("MuseGlimmerAssistantModel", "0.28.0", "dflash"),
    ("Qwen3OmniDSparkModel", "0.28.0", "draft_model"), ("Qwen3OmniDSparkModel", "0.29.0", "dspark"),
    ("MuseSparkDSparkModel", "0.32.0", "draft_model"), ("MuseSparkDSparkModel", "0.33.0", "dspark"),
])  # fmt: skip
def test_the_draft_config_s_architecture_names_the_method(architecture: str, release: str, method: str) -> None:
    assert detected_method("/models/draft", [architecture], ResolvedVersion(text=release)) == method
    launch = _launch("/models/draft", release).model_copy(update={"draft_architectures": (architecture,)})
    assert stated_method(launch) == method


def test_a_stated_method_is_kept_but_draft_model_is_detected_again() -> None:
    """The detection runs whatever the method but eagle, eagle3, dflash, dspark (v0.25.0 :834-874): a stated
    draft_model whose name says dflash runs dflash; a stated eagle3 stays eagle3 whatever the name."""

    def method(stated: str, draft: str) -> str | None:
        spec = json.dumps({"method": stated, "model": draft, "num_speculative_tokens": 2})
        return stated_method(parse_flags("vllm", ["--speculative-config", spec, "--engine-version", "0.25.0"]))

    assert method("draft_model", "org/tiny") == "draft_model"
    assert method("draft_model", "z-lab/Qwen3-8B-DFlash-b16") == "dflash"
    assert method("eagle3", "z-lab/Qwen3-8B-DFlash-b16") == "eagle3"


@pytest.mark.parametrize("release", ["0.25.0", "0.28.0", "0.30.0"])
def test_a_dflash_draft_without_a_method_runs_v2_at_0_25_to_0_30(release: str) -> None:
    """dflash runs on V2 where draft_model keeps V1 (config/vllm.py `_get_v2_model_runner_unsupported_features`,
    v0.25.0 :2068-2079 to v0.30.0 :2839-2850): the draft read as draft_model would have planned the V1 runner."""
    version = ResolvedVersion(text=release)
    assert runs_v2(version, MISTRAL, _launch("z-lab/Qwen3-8B-DFlash-b16", release))
    assert not runs_v2(version, MISTRAL, _launch("Qwen/Qwen2.5-0.5B-Instruct", release))


def _draft_config(tmp_path: Path, architecture: str) -> str:
    """A draft's config.json of the class vLLM's detection names (no such config is in tests/data): Qwen3-0.6B's
    shape (model_type qwen3, the DSparkDraftModel test's) under that class."""
    config = {"architectures": [architecture], "model_type": "qwen3", "hidden_size": 1024, "intermediate_size": 3072,
              "num_hidden_layers": 2, "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128,
              "vocab_size": 151936, "max_position_embeddings": 40960, "torch_dtype": "bfloat16"}  # fmt: skip
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    return str(path)


@pytest.mark.parametrize(("architecture", "release", "method"), [
    ("Qwen3DSparkModel", "0.25.0", "dspark"), ("Qwen3DSparkModel", "0.24.0", "draft_model"),
    ("MuseGlimmerAssistantModel", "0.28.0", "dflash"), ("Qwen2ForCausalLM", "0.28.0", "draft_model"),
])  # fmt: skip
def test_a_plan_with_the_draft_s_config_detects_from_its_class(
    tmp_path: Path, architecture: str, release: str, method: str
) -> None:
    """A draft named by a path with no method word: the plan's draft config decides (v0.25.0 :834-852, v0.28.0
    :934-957); the ledger's setup, and every rule reading the ledger's launch, say the method vLLM runs."""
    draft = load_model(_draft_config(tmp_path, architecture))
    ledger = predict(MISTRAL, _launch("/models/draft", release), gpu_total_bytes=80 * GIB, draft=draft)
    assert ledger.settings.draft_architectures == (architecture,)
    assert ledger.setup.spec_method == method
    assert predict(MISTRAL, _launch("/models/draft", release), gpu_total_bytes=80 * GIB).setup.spec_method == (
        "draft_model"
    )  # without the draft's config the name alone decides


def test_a_dspark_draft_config_runs_v2_where_the_name_alone_keeps_v1(tmp_path: Path) -> None:
    """At v0.25.0 a dspark draft forces the V2 runner (config/vllm.py :529-532) where draft_model keeps V1
    (`_get_v2_model_runner_unsupported_features` :2068-2079): only the draft's Qwen3DSparkModel class says which."""
    version = ResolvedVersion(text="0.25.0")
    draft = load_model(_draft_config(tmp_path, "Qwen3DSparkModel"))
    with_config = predict(MISTRAL, _launch("/models/draft", "0.25.0"), gpu_total_bytes=80 * GIB, draft=draft)
    assert runs_v2(version, MISTRAL, with_config.settings)
    assert not runs_v2(version, MISTRAL, _launch("/models/draft", "0.25.0"))


def test_plan_draft_model_flag_carries_the_draft_s_class(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`kvtop plan --draft-model CONFIG` on a vLLM launch whose speculative config says draft_model and names no
    draft: the draft is named from the flag, and its Qwen3DSparkModel class makes the method dspark at v0.25.0
    (the detection rewrites draft_model, v0.25.0 :834-852)."""
    spec = json.dumps({"num_speculative_tokens": 3, "method": "draft_model"})
    code = main(["plan", "--model", str(CONFIGS / "mistralai--Mistral-7B-v0.1.json"), "--engine", "vllm", "--gpu",
                 "H100", "--engine-version", "0.25.0", "--speculative-config", spec,
                 "--draft-model", _draft_config(tmp_path, "Qwen3DSparkModel"), "--json"])  # fmt: skip
    out, _ = capsys.readouterr()
    assert code == 0
    assert json.loads(out)["deployment"]["setup"]["spec_method"] == "dspark"
