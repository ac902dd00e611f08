"""Two vLLM rules read from the wheels (docs/engines/vllm.md §2, §3).

Which model runner `vllm serve` picks in the v2_dense era (v0.25.0-v0.28.x): v0.27.0's config/vllm.py:637-657
`_is_default_v2_model_runner_model` returns False for a hybrid whose class is not in DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES
(:69; NemotronHForCausalLM is not) and for an attention-free model, else `listed or not is_moe`; from v0.29.0
(:645) the architecture test is gone. The runner decides the batches in flight at PP 2 with async scheduling
(VllmConfig.max_concurrent_batches: V2 keeps pp + 1 = 3, V1 turns async scheduling off, pp = 2) and whether the
graph estimate is V2's placeholder 0.

The custom all-reduce's world sizes (CustomAllreduce._SUPPORTED_WORLD_SIZES): [2, 4, 6, 8] from v0.3.0
(parallel_utils/custom_all_reduce.py:23) through v0.26.0 (:52), [2, 4, 6, 8, 16] from v0.27.0 (:57; v0.33.0 :118);
any other TP logs 'Custom allreduce is disabled due to an unsupported world size' (v0.33.0 :211-219)."""

from __future__ import annotations

import pytest

from benchmarks.calibration.corpus import load
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.batching import concurrent_batches
from kvtop.domain.engines.vllm.calibration_non_torch import custom_all_reduce_on, custom_all_reduce_said
from kvtop.domain.engines.vllm.runner_eras import runs_v2
from kvtop.domain.engines.vllm.v2_graphs import v2_placeholder
from kvtop.domain.launch import parse_flags
from kvtop.sources.hub import load_model
from tests.data_paths import CONFIGS

RECORDS = {record.id: record for record in load("vllm")}
NEMOTRON_H = load_model(str(CONFIGS / "nvidia--Nemotron-H-56B-Base-8K.json"))  # Mamba2 + attention, no experts
MISTRAL = load_model(str(CONFIGS / "mistralai--Mistral-7B-v0.1.json"))  # dense, attention only
FALCON_MAMBA = load_model(str(CONFIGS / "tiiuae--falcon-mamba-7b.json"))  # attention-free
GPT_OSS = load_model(str(CONFIGS / "openai--gpt-oss-20b.json"))  # experts, GptOssForCausalLM not listed


def _at(release: str) -> ResolvedVersion:
    return ResolvedVersion(text=release)


@pytest.mark.parametrize("release", ["0.25.0", "0.27.0", "0.28.0"])
def test_the_v2_dense_era_keeps_hybrids_and_attention_free_models_on_v1(release: str) -> None:
    assert NEMOTRON_H.state is not None and NEMOTRON_H.moe is None  # a dense hybrid: `not is_moe` alone said V2
    assert not runs_v2(_at(release), NEMOTRON_H)
    assert not runs_v2(_at(release), FALCON_MAMBA)
    assert not runs_v2(_at(release), GPT_OSS)
    assert runs_v2(_at(release), MISTRAL)


def test_v2_for_every_model_from_v0_29_and_none_before_v0_22() -> None:
    for model in (NEMOTRON_H, MISTRAL, GPT_OSS):
        assert runs_v2(_at("0.29.0"), model) and not runs_v2(_at("0.21.0"), model)
    assert not runs_v2(_at("0.24.0"), NEMOTRON_H) and not runs_v2(_at("0.24.0"), GPT_OSS)  # not listed (v2_listed era)


def test_a_hybrid_at_pp2_keeps_two_batches_at_v0_27() -> None:
    """Async scheduling is on by default from v0.14.0; at PP 2 the V2 runner keeps pp + 1 = 3 batches, the V1 runner
    turns it off (pp = 2): Nemotron-H runs V1 at v0.27.0, Mistral V2; both V2 at v0.29.0."""
    launch = parse_flags("vllm", ["--pp", "2"])
    assert concurrent_batches(launch, 2, _at("0.27.0"), NEMOTRON_H)[0] == 2
    assert concurrent_batches(launch, 2, _at("0.27.0"), MISTRAL)[0] == 3
    assert concurrent_batches(launch, 2, _at("0.29.0"), NEMOTRON_H)[0] == 3


def test_a_hybrid_under_v1_has_its_graph_estimate_measured() -> None:
    """The v0.28.0 Qwen3-14B L40S start runs V2 (its placeholder 0); the same start of Nemotron-H runs V1, whose
    `profile_cudagraph_memory` captures and measures: no placeholder."""
    dense = RECORDS["file60168338778-qwen3-14b-l40s-v0280"].inputs()
    assert v2_placeholder(dense) is not None
    assert v2_placeholder(dense.model_copy(update={"model": NEMOTRON_H})) is None


def _h100(tp: int, release: str) -> CalibrationInputs:
    """The llm-d H100 TP 4 start (v0.19.0, Llama-3.1-8B), at another TP and release."""
    inputs = RECORDS["llmd-v019-llama-3.1-8b-tp4"].inputs()
    assert inputs.gpu_name == "H100"
    layout = inputs.layout.model_copy(update={"tp": tp})
    return inputs.model_copy(update={"layout": layout, "version": _at(release)})


@pytest.mark.parametrize("release", ["0.6.4.post1", "0.16.0", "0.33.0"])
def test_the_custom_all_reduce_runs_only_at_supported_tp_sizes(release: str) -> None:
    assert custom_all_reduce_on(_h100(4, release)) and custom_all_reduce_on(_h100(2, release))
    for tp in (3, 5, 7):
        assert not custom_all_reduce_on(_h100(tp, release))
    assert custom_all_reduce_said(_h100(3, release)).startswith("custom all-reduce off (TP 3: vLLM")


def test_tp16_joins_in_v0_27() -> None:
    assert not custom_all_reduce_on(_h100(16, "0.26.0"))
    assert custom_all_reduce_on(_h100(16, "0.27.0")) and custom_all_reduce_on(_h100(16, "0.33.0"))
