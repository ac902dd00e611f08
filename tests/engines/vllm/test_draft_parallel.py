"""A parallel-drafting EAGLE head (P-EAGLE) is refused without its config (engines/vllm/draft_parallel.py).

The real start: chiatzenw-cur/lossy-spec-decode-repetition's P-EAGLE arm (tests/data/calibration/vllm.jsonl
`chiatzen-gpt-oss-20b-h100pcie-v0260-peagle-k7-u085-mml65536`), vLLM 0.26.0, gpt-oss-20b with
amazon/GPT-OSS-20B-P-EAGLE at k = 7: the log's 'Add 4 padding layers, may waste at most 33.33% KV cache memory'
(v1/core/kv_cache_utils.py:1227-1238) is the draft's 4 layers beside the target's 12 full-attention ones, where the
one-layer EAGLE assumption planned 1,536,141 tokens against the logged 1,125,241 (+36.5 %). vLLM 0.34.0 refuses the
field for eagle3 (config/speculative.py:1688-1693).
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import from_flag
from kvtop.domain.engines.vllm.spec_methods import keeps_v1_runner
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.sources.hub import load_config_file
from tests.data_paths import CONFIGS

GPT_OSS_20B = CONFIGS / "openai--gpt-oss-20b.json"
P_EAGLE = {"method": "eagle3", "model": "amazon/GPT-OSS-20B-P-EAGLE", "num_speculative_tokens": 7,
           "parallel_drafting": True}  # fmt: skip


def _plan(version: str, spec: dict[str, object]) -> int:
    settings = parse_flags("vllm", ["--engine-version", version, "--max-model-len", "65536",
                                    "--gpu-memory-utilization", "0.85", "--no-enable-prefix-caching",
                                    "--speculative-config", json.dumps(spec)])  # fmt: skip
    plan = planned_capacity(load_config_file(GPT_OSS_20B), settings, gpu_total_bytes=gpu_total_bytes("H100-PCIE"),
                            gpu_name="H100-PCIE")  # fmt: skip
    return plan.token_capacity_max


def test_p_eagle_without_its_config_is_refused_naming_the_draft_config() -> None:
    with pytest.raises(UnsupportedModelError, match="--draft-model") as refused:
        _plan("0.26.0", P_EAGLE)
    assert "parallel drafting" in str(refused.value)
    # `explain` (a log, no flags) reaches the same refusal: it names the command that takes the draft's config, and
    # says explain cannot, never a bare flag explain lacks (session 67's wording: 'give the draft's config with
    # --draft-model')
    assert "`kvtop plan` sizes them given the draft's config (its --draft-model option); explain and probe take no " \
           "draft config, so they cannot" in str(refused.value)


def test_vllm_0_34_refuses_parallel_drafting_for_eagle3() -> None:
    with pytest.raises(InputError, match="dflash / dspark"):
        _plan("0.34.0", P_EAGLE)


def test_a_sequential_eagle3_head_still_plans() -> None:
    sequential = {key: value for key, value in P_EAGLE.items() if key != "parallel_drafting"}
    planned = _plan("0.26.0", sequential)
    assert planned > 0
    assert _plan("0.26.0", {**P_EAGLE, "parallel_drafting": False}) == planned  # the field's default: the same launch


# Before v0.16.0 SpeculativeConfig has no `parallel_drafting` field. vLLM 0.15.0 builds it as a pydantic dataclass
# (config/speculative.py:8, :55-57; engine/arg_utils.py:1342 `SpeculativeConfig(**self.speculative_config)`), whose
# default extra='ignore' drops the key: the launch runs as without it. vLLM 0.9.0's is a standard dataclass
# (config.py:14, :2269-2271; from_dict :2395-2397 `cls(**dict_value)`): an unknown key is a TypeError, no start.
LLAMA_8B = CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"
NGRAM = {"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4}


def _plan_llama(version: str, spec: dict[str, object]) -> int:
    settings = parse_flags("vllm", ["--engine-version", version, "--max-model-len", "8192",
                                    "--speculative-config", json.dumps(spec)])  # fmt: skip
    plan = planned_capacity(load_config_file(LLAMA_8B), settings, gpu_total_bytes=gpu_total_bytes("H100"),
                            gpu_name="H100")  # fmt: skip
    return plan.token_capacity_max


def test_vllm_0_15_drops_the_key_so_a_launch_without_a_draft_plans_as_without_it() -> None:
    assert _plan_llama("0.15.0", {**NGRAM, "parallel_drafting": True}) == _plan_llama("0.15.0", NGRAM)


def test_vllm_0_15_still_refuses_a_p_eagle_head_without_its_config_naming_the_dropped_key() -> None:
    with pytest.raises(UnsupportedModelError, match="--draft-model") as refused:
        _plan("0.15.0", P_EAGLE)
    assert "drops the key" in str(refused.value)


def test_vllm_0_9_0_refuses_the_unknown_key() -> None:
    with pytest.raises(InputError, match="has no parallel_drafting field and refuses the key"):
        _plan_llama("0.9.0", {**NGRAM, "parallel_drafting": True})
    assert _plan_llama("0.9.1", {**NGRAM, "parallel_drafting": True}) == _plan_llama("0.9.1", NGRAM)


# From v0.16.0 the field runs in SpecDecodeBaseProposer, the base of the EAGLE (eagle, eagle3, mtp) and draft_model
# proposers (v1/worker/gpu_model_runner.py:454-475, config/speculative.py:730-734), which refuses a draft config
# without `pard_token` or `ptd_token_id` (v1/spec_decode/eagle.py:299-313); ngram's proposer never reads it. Each
# refusal says what that method needs, not the P-EAGLE head's.
QWEN3_NEXT = CONFIGS / "Qwen--Qwen3-Next-80B-A3B-Thinking.json"
MTP = {"method": "qwen3_next_mtp", "num_speculative_tokens": 2}


def _plan_qwen3_next(spec: dict[str, object]) -> int:
    settings = parse_flags("vllm", ["--engine-version", "0.26.0", "--max-model-len", "8192",
                                    "--tensor-parallel-size", "4", "--speculative-config", json.dumps(spec)])  # fmt: skip
    plan = planned_capacity(load_config_file(QWEN3_NEXT), settings, gpu_total_bytes=gpu_total_bytes("H100"),
                            gpu_name="H100")  # fmt: skip
    return plan.token_capacity_max


def test_parallel_mtp_is_refused_for_its_pard_token_not_a_p_eagle_head() -> None:
    assert _plan_qwen3_next(MTP) > 0
    with pytest.raises(UnsupportedModelError, match="pard_token") as refused:
        _plan_qwen3_next({**MTP, "parallel_drafting": True})
    assert "MTP layers" in str(refused.value)
    assert "P-EAGLE" not in str(refused.value)


# ngram, suffix and medusa take the field and build nothing for it: their proposers never read it, only the scheduler
# reserves (k − 1) draft slots a request (config/speculative.py v0.26.0:1292-1305, v0.33.0:2057-2096), and the profile
# runs max_num_batched_tokens either way (v1/worker/gpu_model_runner.py v0.26.0:504, v0.33.0:524): vLLM starts them
# with the memory of the launch without the field, as kvtop now plans them (session 67 refused them).
UNREAD = (NGRAM, {"method": "suffix", "num_speculative_tokens": 4},
          {"method": "medusa", "model": "FasterDecoding/medusa-vicuna-7b-v1.3", "num_speculative_tokens": 4})  # fmt: skip


@pytest.mark.parametrize(("version", "spec"), [("0.26.0", UNREAD[0]), ("0.26.0", UNREAD[1]), ("0.26.0", UNREAD[2]),
                                              ("0.33.0", UNREAD[1])], ids=["ngram", "suffix", "medusa", "suffix-0.33"])  # fmt: skip
def test_a_method_whose_proposer_never_reads_the_field_plans_as_without_it(version: str, spec: dict[str, object]) -> None:
    assert _plan_llama(version, {**spec, "parallel_drafting": True}) == _plan_llama(version, spec) > 0


def test_at_0_33_the_field_keeps_ngram_on_the_v1_runner_as_vllm_does() -> None:
    """v0.33.0 runs ngram on the V2 model runner, but any `parallel_drafting` outside dflash / dspark is a feature V2
    lacks (config/vllm.py:3070-3076 'parallel drafting for EAGLE speculative decoding'): the launch keeps V1, whose
    budget differs from V2's; medusa is no method of v0.33.0 (SpeculativeMethod), refused as vLLM refuses it."""
    settings = parse_flags("vllm", ["--engine-version", "0.33.0", "--speculative-config",
                                    json.dumps({**NGRAM, "parallel_drafting": True})])  # fmt: skip
    assert keeps_v1_runner("ngram", settings, from_flag("0.33.0", engine_rules("vllm").calendar)) is not None
    assert keeps_v1_runner("ngram", parse_flags("vllm", ["--engine-version", "0.33.0", "--speculative-config",
                           json.dumps(NGRAM)]), from_flag("0.33.0", engine_rules("vllm").calendar)) is None  # fmt: skip
    assert _plan_llama("0.33.0", {**NGRAM, "parallel_drafting": True}) != _plan_llama("0.33.0", NGRAM)
    with pytest.raises(InputError, match="got 'medusa'; release 0.33.0"):
        _plan_llama("0.33.0", {**UNREAD[2], "parallel_drafting": True})


def test_a_parallel_draft_model_without_its_config_is_refused_naming_pard() -> None:
    spec = {"method": "draft_model", "model": "amd/PARD-Llama-3.2-1B", "num_speculative_tokens": 4,
            "parallel_drafting": True}  # fmt: skip
    with pytest.raises(UnsupportedModelError, match="its --draft-model option") as refused:
        _plan_llama("0.26.0", spec)
    assert "pard_token" in str(refused.value)
    assert "P-EAGLE" not in str(refused.value)


@pytest.mark.parametrize(("version", "said"), [("0.26.0", "parallel_drafting is not read by vLLM's ngram proposer"),
                                               ("0.15.0", "parallel_drafting: vLLM 0.15.0 has no such field")])  # fmt: skip
def test_an_ngram_launch_given_the_field_says_vllm_does_not_read_it(
    version: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The field changes no figure of an ngram launch (above), so its term says why it was not refused; without the
    field the term says nothing of it."""
    from kvtop.cli import main

    argv = ["plan", "--model", str(LLAMA_8B), "--engine", "vllm", "--engine-version", version, "--gpu", "H100", "--json",
            "--", "--max-model-len", "8192", "--speculative-config"]  # fmt: skip
    for spec, expected in ((json.dumps({**NGRAM, "parallel_drafting": True}), True), (json.dumps(NGRAM), False)):
        assert main([*argv, spec]) == 0
        details = [term["detail"] for term in json.loads(capsys.readouterr().out)["deployment"]["terms"]]
        assert any(said in detail for detail in details) is expected
