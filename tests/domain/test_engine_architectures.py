"""Which model classes each engine registers, by release (kvtop.domain.engine_architectures and each engine's
`architectures` module): a launch of a class the release has no code for is refused, in the engine's words.

The oracle is the engines themselves: the differential harness started every config of tests/data/engine_diff
under SGLang 0.5.6.post2 / 0.5.23 and vLLM 0.13.0 / 0.33.0 and recorded either a sized pool or the engine's
own error. Every launch an engine sized must be registered; every launch it refused for want of a class must
be refused by kvtop with the engine's own words. LMDeploy's rows come from its release tags' module_map.py.
"""

from __future__ import annotations

import json

import pytest

from benchmarks.engine_diff.cases import config_path
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import NOT_STATED, ResolvedVersion, VersionSource
from kvtop.domain.launch import LaunchSettings, parse_flags
from kvtop.domain.launch_check import architecture_check, launch_refusals
from kvtop.domain.ledger import predict
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from tests.conftest import CASES, CONFIGS
from tests.data_paths import DATA

DIFF = DATA / "engine_diff"
RUNS = ("sglang-0.5.6.post2.json", "sglang-0.5.23.json", "sglang-0.5.23.flags.json", "vllm-0.13.0.json",
        "vllm-0.33.0.json", "vllm-0.33.0.flags.json")  # fmt: skip
# the engines' errors for a class they have no code for (the rest of their refusals are other checks)
UNREGISTERED = ("has no SGlang implementation", "Cannot find model module", "are not supported for now")
JAMBA = CONFIGS / "heldout" / "ai21labs--AI21-Jamba-1.5-Mini.json"
STEP = DIFF / "configs" / "stepfun-ai--Step-3.7-Flash.json"
H100 = 81559 << 20


def _model(name: str) -> ModelSpec:
    path = config_path(name)  # where the harness found it (anywhere under tests/data, by one name)
    return model_from_config(json.loads(path.read_text()), source=str(path))


def _runs() -> list[tuple[str, str, dict]]:
    found = []
    for name in RUNS:
        recorded = json.loads((DIFF / name).read_text())
        found += [(recorded["engine"], recorded["version"], result) for result in recorded["results"]]
    return found


def _check(engine: str, release: str, model: ModelSpec, **settings: object):
    version = ResolvedVersion(text=release, source=VersionSource.FLAG)
    return engine_rules(engine).architectures.check(model, LaunchSettings(engine=engine, model="m", **settings),
                                                    version)  # fmt: skip


def test_every_launch_the_engines_sized_is_registered_at_that_release() -> None:
    sized = [(engine, release, result) for engine, release, result in _runs() if result["status"] == "ok"]
    # each fixture's own sized rows, so a re-run that grows or loses rows shows which file moved. The history
    # (counts of `"status": "ok"` rows in each file at the commit named):
    # - session 43 (cf819581): sglang 0.5.6.post2 758, 0.5.23 868, 0.5.23 flags 550; vllm 0.13.0 726, 0.33.0 810,
    #   0.33.0 flags 562 (flag sets after 33b's reruns; the InternViT-6B recon's default-grid and mm-dp flag rows)
    # - session 44 c4e0b062 (openPangu-Ultra-MoE-718B, Falcon-Mamba-7B over every flag set; SGLang 0.5.23 sized
    #   neither): vllm 0.33.0 +44 (openPangu 20, Falcon-Mamba 24), 0.33.0 flags +20 (openPangu 10, Falcon-Mamba 10)
    # - session 44 0e869ea0 (issue 26, the flag sweep's harness gaps answered, 176 more): vllm 0.13.0 +92 (Kimi-K2
    #   20, Nemotron-H-56B / Nemotron-3-Nano / InternLM-20B 24 each), sglang 0.5.6.post2 +48 (Kimi-K2, Gemma-3 24
    #   each), sglang 0.5.23 flags +17, vllm 0.33.0 flags +19
    # - session 49 (c2958e3f, bce3109c, 78f7ff6c: the three GPTQ configs' default grid at TP 1/2/4/8 on sm80, sm90 and
    #   sm100, 72 rows of which Qwen2.5-7B-GPTQ at TP 8 refuses on 28 heads): vllm 0.33.0 +66
    assert {name: sum(1 for r in json.loads((DIFF / name).read_text())["results"] if r["status"] == "ok")
            for name in RUNS} == {  # fmt: skip
        "sglang-0.5.6.post2.json": 758 + 48, "sglang-0.5.23.json": 868, "sglang-0.5.23.flags.json": 550 + 17,
        "vllm-0.13.0.json": 726 + 92, "vllm-0.33.0.json": 810 + 44 + 66, "vllm-0.33.0.flags.json": 562 + 20 + 19,
    }  # fmt: skip
    assert len(sized) == 806 + 868 + 567 + 818 + 920 + 601  # every fixture's sized rows reach the check below
    models = {result["config"]: _model(result["config"]) for _, _, result in sized}
    states = {(engine, release, result["config"]): _check(engine, release, models[result["config"]]).state
              for engine, release, result in sized}  # fmt: skip
    assert set(states.values()) == {"registered"}, {k: v for k, v in states.items() if v != "registered"}


def test_every_launch_refused_for_its_class_is_refused_in_the_engines_words() -> None:
    refused = [(engine, release, result) for engine, release, result in _runs()
               if result["status"] == "refused" and any(w in result.get("message", "") for w in UNREGISTERED)]  # fmt: skip
    # Jamba under SGLang 0.5.23 (12 runs), Step-3.7-Flash under SGLang 0.5.23 and vLLM 0.33.0 (12 each)
    assert sorted({(e, r, x["config"]) for e, r, x in refused}) == [
        ("sglang", "0.5.23", "ai21labs--AI21-Jamba-1.5-Mini"), ("sglang", "0.5.23", "stepfun-ai--Step-3.7-Flash"),
        ("sglang", "0.5.6.post2", "internlm--internlm-20b"), ("vllm", "0.33.0", "stepfun-ai--Step-3.7-Flash"),
    ]  # fmt: skip
    for engine, release, result in refused:
        check = _check(engine, release, _model(result["config"]))
        assert check.refused and check.engine_words, (engine, release, result["config"])
        assert result["message"].startswith(check.engine_words)  # the engine's own error, word for word
        assert check.engine_words in check.message and release in check.message


def test_jamba_is_served_by_vllm_but_refused_by_sglang_and_lmdeploy() -> None:
    jamba = model_from_config(json.loads(JAMBA.read_text()))
    assert _check("vllm", "0.13.0", jamba).state == "registered"
    assert _check("vllm", "0.33.0", jamba).state == "registered"
    for release in ("0.5.6.post2", "0.5.23"):  # transformers' JambaForCausalLM is not backend-compatible
        check = _check("sglang", release, jamba)
        assert check.engine_words == ("JambaForCausalLM has no SGlang implementation and the Transformers "
                                      "implementation is not compatible with SGLang.")  # fmt: skip
    lmdeploy = _check("lmdeploy", "0.16.0", jamba)  # neither TurboMind nor the PyTorch engine's MODULE_MAP
    assert lmdeploy.engine_words == "Can not found rewrite for architectures: ['JambaForCausalLM']"


def test_a_release_no_list_covers_is_not_checked_and_none_stated_takes_the_newest() -> None:
    jamba = model_from_config(json.loads(JAMBA.read_text()))
    between = _check("sglang", "0.5.10", jamba)
    assert (
        between.state == "not_checked" and "read its registry at 0.5.6.post2, 0.5.23 only" in between.message
    )
    assert _check("trtllm", "1.2.0", jamba).state == "not_checked"  # no TensorRT-LLM list read yet
    settings = LaunchSettings(engine="sglang", model="m")
    newest = engine_rules("sglang").architectures.check(jamba, settings, NOT_STATED)
    assert newest.refused and "0.5.23 (no release stated: the newest read)" in newest.message


def test_vllm_names_the_release_that_dropped_a_class() -> None:
    """vLLM 0.33.0's `_PREVIOUSLY_SUPPORTED_MODELS`: InternLM (v1) until v0.23.0, and its remote code does
    not save it (internlm-20b's harness run stopped at the custom code; vLLM's own list is the oracle)."""
    internlm = _model("internlm--internlm-20b")
    assert internlm.architecture == "InternLMForCausalLM" and internlm.auto_map_models
    assert _check("vllm", "0.13.0", internlm).state == "registered"
    dropped = _check("vllm", "0.33.0", internlm)
    assert dropped.engine_words == ("Model architecture InternLMForCausalLM was supported in vLLM until v0.23.0, "
                                    "and is not supported anymore.")  # fmt: skip
    # SGLang registers no InternLMForCausalLM either; its Transformers backend refuses the remote modeling class
    # (test_sglang_refuses_remote_code_its_transformers_backend_cannot_take)
    assert _check("sglang", "0.5.23", internlm).refused


def test_remote_code_does_not_rescue_a_class_transformers_has_but_sglang_refuses() -> None:
    """tiiuae/falcon-7b-instruct names FalconForCausalLM with an auto_map (remote code); falcon-rw-1b without.
    SGLang 0.5.23's resolve_transformers_arch judges transformers' own FalconForCausalLM first (the auto_map only
    where transformers has no such class): the registry sweep's rows of both configs are the engine's refusal."""
    rows = json.loads((DIFF / "registry" / "sglang-0.5.23.json").read_text())["rows"]
    for name in ("tiiuae--falcon-7b-instruct", "tiiuae--falcon-rw-1b"):
        path = CONFIGS / "families" / f"{name}.json"
        model = model_from_config(json.loads(path.read_text()), source=str(path))
        engine = [row for row in rows if row["config"] == name]
        assert {row["status"] for row in engine} == {"refused"} and len(engine) == 2
        check = _check("sglang", "0.5.23", model)
        assert check.refused, (name, check.message)
        assert all(row["message"].startswith(check.engine_words) for row in engine)
    assert model_from_config(json.loads((CONFIGS / "families" / "tiiuae--falcon-7b-instruct.json").read_text())
                             ).auto_map_models  # fmt: skip
    # a class transformers has not: its remote code stays "custom code" (unless the published class is refused:
    # InternLM v1, below), here internlm-20b's config under a class name no list holds
    path = CONFIGS / "internlm--internlm-20b.json"
    other = model_from_config({**json.loads(path.read_text()), "architectures": ["UnlistedForCausalLM"]},
                              source=str(path))  # fmt: skip
    assert _check("sglang", "0.5.23", other).state == "custom_code"


def test_sglang_refuses_remote_code_its_transformers_backend_cannot_take() -> None:
    """InternLM v1 has no SGLang class: TransformersForCausalLM (srt/models/transformers.py, 0.5.23) resolves the
    auto_map's modeling_internlm.InternLMForCausalLM and refuses it, whose published InternLMPreTrainedModel sets
    no `_supports_attention_backend` (transformers 5.19.0's PreTrainedModel default: False). The registry sweep's
    rows (the engine's reading, sglang_config_failures.REMOTE_CODE_WITHOUT_BACKEND) say the same at TP 1 and 2."""
    internlm = _model("internlm--internlm-20b")
    check = _check("sglang", "0.5.23", internlm)
    assert check.refused and "_supports_attention_backend=False" in check.engine_words
    rows = [r for r in json.loads((DIFF / "registry" / "sglang-0.5.23.json").read_text())["rows"]
            if r["config"] == "internlm--internlm-20b"]  # fmt: skip
    assert len(rows) == 2 and all(r["status"] == "refused" for r in rows)
    assert all("_supports_attention_backend=False" in r["message"] for r in rows)
    # 0.5.6.post2: resolve_transformers_arch refuses it itself (is_backend_compatible() False, transformers 4.57.1);
    # the flag-sweep harness's 24 rows (sglang-0.5.6.post2.json) give its words
    old = _check("sglang", "0.5.6.post2", internlm)
    assert old.refused and old.engine_words == (
        "InternLMForCausalLM has no SGlang implementation and the Transformers implementation is not compatible "
        "with SGLang."
    )
    rows = [r for r in json.loads((DIFF / "sglang-0.5.6.post2.json").read_text())["results"]
            if r["config"] == "internlm--internlm-20b"]  # fmt: skip
    assert len(rows) == 24 and all(
        r["status"] == "refused" and r["message"].startswith(old.engine_words) for r in rows
    )


def test_sglang_loads_remote_code_only_through_the_auto_maps_automodel() -> None:
    """AIDC-AI/Ovis2.5-9B (Ovis2_5) and microsoft/Phi-3.5-vision (MLC's copy, Phi3VForCausalLM): classes neither
    SGLang nor transformers has, whose auto_map names AutoModelForCausalLM but no AutoModel. SGLang's
    resolve_transformers_arch (0.5.6.post2 and 0.5.23 srt/model_loader/utils.py) then raises "Cannot find model
    module … 'AutoModel' is not present in the model config's 'auto_map'": the registry sweep's rows of both
    configs are that refusal, at TP 1 and 2."""
    rows = json.loads((DIFF / "registry" / "sglang-0.5.23.json").read_text())["rows"]
    for path in (CONFIGS / "heldout" / "wave4b" / "AIDC-AI--Ovis2.5-9B.json",
                 CONFIGS / "heldout" / "mlc--phi-3_5-vision.json"):  # fmt: skip
        model = model_from_config(json.loads(path.read_text()), source=str(path))
        assert model.auto_map_models and "AutoModel" not in dict(model.auto_map_models)
        engine = [row for row in rows if row["config"] == path.stem]
        assert {row["status"] for row in engine} == {"refused"} and len(engine) == 2
        assert all("'AutoModel' is not present" in row["message"] for row in engine)
        for release in ("0.5.6.post2", "0.5.23"):
            check = _check("sglang", release, model)
            assert check.refused, (path.stem, check.message)
        assert all(row["message"].startswith(check.engine_words) for row in engine)
    # an auto_map with AutoModel (NVLM-D-72B's) keeps the remote code's "not checked"
    nvlm = CONFIGS / "heldout" / "wave4b" / "nvidia--NVLM-D-72B.json"
    assert _check("sglang", "0.5.23", model_from_config(json.loads(nvlm.read_text()))).state == "custom_code"


@pytest.mark.parametrize(
    ("release", "state", "words"),
    [  # `git show vX:lmdeploy/pytorch/models/module_map.py`: Falcon's entry is gone from v0.8.0
        ("0.7.3", "registered", ""),
        ("0.8.0", "refused", "Can not found rewrite for architectures: ['FalconForCausalLM']"),
        ("0.5.3", "not_checked", ""),  # before v0.6.0 the module map patched transformers' classes
    ],
)
def test_lmdeploy_pytorch_engine_classes_by_release(release: str, state: str, words: str) -> None:
    # no Falcon config is at hand: the check reads the class name alone, so a spec renamed to it stands in
    falcon = _model("Qwen--Qwen2.5-7B").model_copy(update={"architecture": "FalconForCausalLM"})
    check = _check("lmdeploy", release, falcon, backend="pytorch")
    assert (check.state, check.engine_words) == (state, words)


def test_lmdeploy_reads_removed_families_turbomind_first_and_the_auto_map_class() -> None:
    qwen = _model("Qwen--Qwen2.5-7B")
    assert _check("lmdeploy", "0.16.0", qwen).source.startswith("turbomind/supported_models.py")
    assert _check("lmdeploy", "0.16.0", qwen, backend="pytorch").state == "registered"  # MODULE_MAP has it
    starcoder = model_from_config(json.loads((CONFIGS / "heldout" / "mlc--starcoder2.json").read_text()))
    assert starcoder.architecture == "Starcoder2ForCausalLM"
    assert _check("lmdeploy", "0.14.0", starcoder, backend="pytorch").state == "registered"
    removed = _check("lmdeploy", "0.15.0", starcoder, backend="pytorch")  # REMOVED_MODEL_MAP from v0.15.0
    assert (
        removed.engine_words == "StarCoder2 (Starcoder2ForCausalLM) support has been removed from LMDeploy."
    )
    # auto_map's AutoModelForCausalLM wins over `architectures` (pytorch/models/patch.py _get_model_class)
    internlm = _model("internlm--internlm-20b")
    assert dict(internlm.auto_map_models)["AutoModelForCausalLM"] == "modeling_internlm.InternLMForCausalLM"
    refused = _check("lmdeploy", "0.15.0", internlm, backend="pytorch")
    assert refused.engine_words == "InternLM (InternLMForCausalLM) support has been removed from LMDeploy."


def test_the_refusal_reaches_launch_refusals_first_with_the_model_flag() -> None:
    jamba = model_from_config(json.loads(JAMBA.read_text()))
    ledger = predict(jamba, parse_flags("sglang", ["--tp-size", "2", "--engine-version", "0.5.23"]),
                     gpu_total_bytes=H100, gpu_name="H100")  # fmt: skip
    assert architecture_check(ledger).refused
    (refused,) = launch_refusals(ledger)
    assert refused.field == "--model" and "has no SGlang implementation" in refused.message
    vllm = predict(
        jamba, parse_flags("vllm", ["--tensor-parallel-size", "2"]), gpu_total_bytes=H100, gpu_name="H100"
    )
    assert launch_refusals(vllm) == ()


def test_explain_names_the_engines_refusal_where_the_log_stops_before_sizing() -> None:
    """A start of Jamba under SGLang 0.5.23 stops before it sizes a pool (the engine has no class for it): the
    first two lines of a real SGLang log (case C17, before its `KV Cache is allocated`) stand in for such a log.
    Where the log did size a pool, the refusal is a note: a plugin or another build served it."""
    from kvtop.domain.explain import explain
    from kvtop.domain.explain_request import ExplainRequest
    from kvtop.sources.engine_logs import parse_engine_log

    jamba = model_from_config(json.loads(JAMBA.read_text()))
    lines = (CASES / "sglang" / "C17" / "engine.log").read_text().splitlines()
    settings = parse_flags("sglang", ["--engine-version", "0.5.23"])
    version = ResolvedVersion(text="0.5.23", source=VersionSource.FLAG)
    stopped = explain(ExplainRequest(
        log=parse_engine_log("\n".join(lines[:2])), model=jamba, settings=settings, version=version,
    ))
    assert stopped.ledger is None and stopped.unsolved is not None
    assert "has no SGlang implementation" in stopped.unsolved
    served = explain(ExplainRequest(
        log=parse_engine_log("\n".join(lines)), model=jamba, settings=settings, version=version,
    ))
    assert any("yet this log sized a pool" in note for note in served.notes)


def test_compare_names_the_engines_that_have_no_class_for_the_model() -> None:
    from kvtop.domain.compare import compare_engines

    jamba = model_from_config(json.loads(JAMBA.read_text()))
    compared = compare_engines(jamba, parse_flags("sglang", ["--tp-size", "2"]), ("sglang", "vllm", "lmdeploy"),
                               gpu_total_bytes=H100, gpu_name="H100")  # fmt: skip
    errors = {row.engine: row.error for row in compared.rows}
    assert errors["sglang"] is not None and "has no SGlang implementation" in errors["sglang"]
    assert errors["lmdeploy"] is not None and "Can not found rewrite for architectures" in errors["lmdeploy"]
    assert errors["vllm"] is None and compared.target_kv_budget_bytes is None  # no SGLang budget to match
