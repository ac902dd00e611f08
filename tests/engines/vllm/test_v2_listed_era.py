"""The v2_listed era of vLLM's model runner (v0.22.0-v0.24.x, docs/engines/vllm.md §3): with VLLM_USE_V2_MODEL_RUNNER
unset, VllmConfig.use_v2_model_runner runs V2 only for a class in DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES — v0.22.0
config/vllm.py:69 Qwen3ForCausalLM; v0.23.0 :69-75 + LlamaForCausalLM, MistralForCausalLM; v0.24.0 :68-77 +
DeepseekV2ForCausalLM, Qwen2MoeForCausalLM, GraniteMoeForCausalLM — and at v0.22.x-v0.23.x only without experts or a
checkpoint quantization_config (v0.22.0 :531, v0.23.0 :558 `not is_moe and not is_quantized`; v0.24.0 :559-561 drops
it). v0.21.0's config/vllm.py has no such list (envs.py:1711-1712 defaults the variable to 0: V1).

The figures are a real start's (tests/data/calibration/vllm.jsonl, hosseinbv/RAG-System logs/vllm_judge.log at
89a43f9f): Qwen3-8B on an H100 at vLLM 0.23.0, `--gpu-memory-utilization 0.3 --max-model-len 16384`, which printed
'Using V2 Model Runner', 'Model loading took 15.27 GiB', 'Available KV cache memory: 6.98 GiB' and 'GPU KV cache
size: 50,800 tokens'.
"""

from __future__ import annotations

import pytest

from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.runner_eras import runs_v2
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_model
from tests.data_paths import CONFIGS, DATA

QWEN3_8B = load_model(str(CONFIGS / "Qwen--Qwen3-8B.json"))  # Qwen3ForCausalLM, dense, unquantized
QWEN3_8B_FP8 = load_model(str(DATA / "calibration" / "configs" / "Qwen--Qwen3-8B-FP8.RECONSTRUCTED.json"))
MISTRAL = load_model(str(CONFIGS / "mistralai--Mistral-7B-v0.1.json"))  # MistralForCausalLM
QWEN2_7B = load_model(str(CONFIGS / "Qwen--Qwen2.5-7B-Instruct.json"))  # Qwen2ForCausalLM: never listed
GPT_OSS = load_model(str(CONFIGS / "openai--gpt-oss-20b.json"))  # experts, GptOssForCausalLM not listed
LOGGED_TOKENS = 50_800


def _at(release: str) -> ResolvedVersion:
    return ResolvedVersion(text=release)


@pytest.mark.parametrize("release", ["0.22.0", "0.22.1", "0.23.0", "0.24.0"])
def test_qwen3_runs_v2_from_v0_22_and_unlisted_classes_stay_on_v1(release: str) -> None:
    assert runs_v2(_at(release), QWEN3_8B)
    assert not runs_v2(_at(release), QWEN2_7B)
    assert not runs_v2(_at(release), GPT_OSS)


def test_each_release_adds_its_classes() -> None:
    assert not runs_v2(_at("0.21.0"), QWEN3_8B)
    assert not runs_v2(_at("0.22.1"), MISTRAL)
    assert runs_v2(_at("0.23.0"), MISTRAL) and runs_v2(_at("0.24.0"), MISTRAL)


def test_a_quantized_checkpoint_of_a_listed_class_runs_v2_only_from_v0_24() -> None:
    assert QWEN3_8B_FP8.architecture == "Qwen3ForCausalLM"
    assert not runs_v2(_at("0.23.0"), QWEN3_8B_FP8)
    assert runs_v2(_at("0.24.0"), QWEN3_8B_FP8)


def test_the_v0_23_qwen3_start_lands_inside_the_plans_interval() -> None:
    """Planned with the log's weights and V2's rules, the start's 50,800 tokens lie inside the interval (the V1
    runner's profile, charged before, planned 37,632: −25.9 %). V2's dummy sampler at v0.23.0 holds the logits' float32
    copy (v2_profile.V2_LOGITS_FLOAT32_COPY: 0.94 GiB counted, test_calibration_v2_profile), so the plan was 46,688
    (−8.1 %) with the V1 runner's graph figure kept whole beside V2's profile (v2_graphs.v2_placeholder, 0.87 GiB),
    where the start held 1.51 GiB beside weights and KV in all; the figure joins the forward's side of V2's peak, whose
    sampler leads by 0.19 GiB: 48,080 (−5.4 %); session 66, the whole counted peak hides it (the compile ends before the
    forward runs: v2_graphs.compile_above_peak): 53,040 (+4.4 %, test_v2_graphs_compile_above_peak), inside issue #27's 5 %."""
    settings = parse_flags("vllm", ["--engine-version", "0.23.0", "--max-model-len", "16384",
                                    "--gpu-memory-utilization", "0.3"])  # fmt: skip
    plan = planned_capacity(QWEN3_8B, settings, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100",
                            measured=MeasuredInputs(weights_bytes=round(15.27 * GIB)))  # fmt: skip
    assert plan.token_capacity_min <= LOGGED_TOKENS <= plan.token_capacity_max
    assert abs(plan.ledger.token_capacity - LOGGED_TOKENS) / LOGGED_TOKENS < 0.05
