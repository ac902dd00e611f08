"""VLLM_USE_V1=1 before v0.8.0 starts the opt-in V1 engine: planned with V1's rules at v0.6.5–v0.7.3, refused at
v0.6.4 and for what the plan leaves out (v1_opt_in.py).

Expected values from the PyPI wheels (v0.6.4, v0.6.5, v0.6.6, v0.7.0, v0.7.1, v0.7.2, v0.7.3, v0.8.0): envs.py reads
`bool(int(os.getenv("VLLM_USE_V1", "0")))` (v0.7.3 :503-504); v0.6.3.post1 has no vllm/v1/. v0.6.4's V1 charges
`init_gpu_memory − free` (v1/worker/gpu_worker.py:107-131); v0.6.5–v0.7.3 charge v0.8.0's form (v0.7.3 :136-183, v0.8.0
:139-186). EngineArgs: `max_num_seqs = 256 if not envs.VLLM_USE_V1 else 1024` (v0.7.3 arg_utils.py:224);
`_override_v1_engine_args`: 2048 API-server tokens, 8192 where the device's name holds "h100"/"h200", the LLM class
8192 / 16384 (v0.7.3 :1362-1387); v0.6.6 2048 / 8192 on every GPU (:1265-1271). `profile_run`: no sampler;
`compute_logits` on every token up to v0.7.2 (v0.7.0 gpu_model_runner.py:985-986), on max_num_seqs rows at v0.7.3
(:1285-1305). Llama-3.1-8B: hidden 4,096, intermediate 14,336, vocabulary 128,256, bf16.
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.batching import default_batch_limits, engine_era, runs_opt_in_v1
from kvtop.domain.engines.vllm.v0_charge import profile_charge
from kvtop.domain.engines.vllm.v1_opt_in import check_v1_opt_in, opts_into_v1
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.launch_line import parse_launch_command, with_environment
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.ledger import predict
from kvtop.sources.hub import load_config_file, load_model
from tests.conftest import CONFIGS, DATA

H100, L40S = gpu_total_bytes("H100"), gpu_total_bytes("L40S")
LLAMA_8B = str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")
ON = {"VLLM_USE_V1": "1"}
# compute_logits' bf16 logits beside their hidden states: every token's at v0.7.0 (8,192 on an H100)
LOGITS_0_7_0 = 8192 * 128256 * 2 + 8192 * 4096 * 2  # 2,168,455,168 B = 2.02 GiB
# the forward at 8,192 tokens: gate-up and activation outputs and the down projection's, the residual and normed input
FORWARD_8192 = 8192 * (3 * 14336 + 4096) * 2 + 2 * 8192 * 4096 * 2  # 905,969,664 B = 0.84 GiB
LOGITS_0_7_3 = 1024 * 128256 * 2 + 1024 * 4096 * 2  # one row a request of 1,024: 271,056,896 B


@pytest.mark.parametrize(("version", "value", "refused", "planned"), [
    ("0.6.4", "1", True, False), ("0.6.5", "1", False, True), ("0.6.6", "1", False, True),
    ("0.7.0", "1", False, True), ("0.7.3", "2", False, True),  # bool(int(v))
    ("0.7.3", "0", False, False), ("0.6.3.post1", "1", False, False), ("0.8.0", "1", False, False),
])  # fmt: skip
def test_opt_in_by_release(version: str, value: str, refused: bool, planned: bool) -> None:
    flags = {"VLLM_USE_V1": value}
    assert opts_into_v1(ResolvedVersion(text=version), flags) is planned
    if refused:
        with pytest.raises(UnsupportedModelError, match="VLLM_USE_V1=1 runs its V1 engine"):
            check_v1_opt_in(ResolvedVersion(text=version), flags)
    else:
        check_v1_opt_in(ResolvedVersion(text=version), flags)


@pytest.mark.parametrize(("version", "gpu", "entry", "expected"), [
    ("0.7.3", "L40S", "server", (2048, 1024)), ("0.7.3", "H100", "server", (8192, 1024)),
    ("0.7.3", "H100", "llm_class", (16384, 1024)), ("0.7.0", "A100-80GB", "server", (2048, 1024)),
    ("0.6.6", "H100", "server", (2048, 1024)), ("0.6.6", "H100", "llm_class", (8192, 1024)),
    # `LLMEngine` directly (ENGINE_CONTEXT): no V1 override, SchedulerConfig's 2048 with chunked prefill (config.py:1532
    # at v0.7.3), not the H100's 8192; max_num_seqs still 1024 (arg_utils.py:224)
    ("0.7.3", "H100", "engine_context", (2048, 1024)),
])  # fmt: skip
def test_opt_in_batch_defaults(version: str, gpu: str, entry: str, expected: tuple[int, int]) -> None:
    total, release = gpu_total_bytes(gpu), ResolvedVersion(text=version)
    llm_class, engine_context = entry == "llm_class", entry == "engine_context"
    defaults = default_batch_limits(total, gpu, release, llm_class, engine_context, flags=ON)
    assert (defaults.tokens, defaults.seqs) == expected
    assert "ENGINE_CONTEXT" in defaults.why if engine_context else "opt-in V1" in defaults.why
    assert default_batch_limits(total, gpu, release, llm_class, engine_context).seqs == 256  # V0's, unset


def test_opt_in_charges_the_v0_8_0_form() -> None:
    def charge(version: str, flags: dict[str, str]) -> str:
        release = ResolvedVersion(text=version)
        return profile_charge(release, engine_era(release, "L40S", flags)).value  # compute capability 8.9

    assert charge("0.7.3", ON) == "device_used"
    assert charge("0.7.3", {}) == "baseline"  # V0's init − free
    assert charge("0.8.0", {}) == "device_used"
    assert runs_opt_in_v1(ResolvedVersion(text="0.7.3"), "L40S", ON)
    assert not runs_opt_in_v1(ResolvedVersion(text="0.8.0"), "L40S", ON)  # V1 the release's own engine


def _activation(version: str, tp: int = 1, gpu: str = "H100") -> int:
    settings = with_environment(
        parse_flags("vllm", ["--engine-version", version, "--tensor-parallel-size", str(tp)]), ON
    )
    plan = planned_capacity(load_config_file(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"), settings,
                            gpu_total_bytes=gpu_total_bytes(gpu), gpu_name=gpu)  # fmt: skip
    activation = plan.estimate.term(Term.ACTIVATION)
    assert activation is not None and activation.source == "assumed"
    return activation.bytes


def test_opt_in_profile_has_no_sampler() -> None:
    assert _activation("0.7.0") == LOGITS_0_7_0  # the logits of every token bind
    assert _activation("0.7.3") >= FORWARD_8192 > LOGITS_0_7_3  # one row a request: the forward binds
    # an L40S's 2,048 tokens: the forward 226,492,416 B, V1's 1,024 rows of logits bind
    assert _activation("0.7.3", gpu="L40S") == LOGITS_0_7_3
    # TP 2: the rank's half of the logits, the all-gathered whole and its reshaped copy, beside the hidden states
    assert _activation("0.7.0", tp=2) == 2 * 8192 * 128256 * 2 + 8192 * 128256 + 8192 * 4096 * 2


def test_opt_in_refuses_what_it_leaves_out() -> None:
    def plan(model: str, *flags: str) -> int:
        settings = parse_launch_command(
            f"VLLM_USE_V1=1 vllm serve {model} --engine-version 0.7.3 {' '.join(flags)}"
        )
        assert settings is not None
        return predict(
            load_model(model), settings, gpu_total_bytes=H100, gpu_name="H100"
        ).engine.token_capacity

    with pytest.raises(UnsupportedModelError, match="layers other than full attention"):
        check_v1_opt_in(
            ResolvedVersion(text="0.7.3"), ON, load_config_file(CONFIGS / "openai--gpt-oss-20b.json")
        )
    # Mistral-7B-v0.1's config window with no layer pattern: its layers read as full attention, as V1's
    # get_kv_cache_spec sizes every decoder layer (FullAttentionSpec): planned
    assert plan(str(CONFIGS / "mistralai--Mistral-7B-v0.1.json")) > 0
    with pytest.raises(UnsupportedModelError, match="MLA"):
        check_v1_opt_in(
            ResolvedVersion(text="0.7.3"), ON, load_config_file(CONFIGS / "deepseek-ai--DeepSeek-V3.json")
        )
    with pytest.raises(UnsupportedModelError, match="pipeline stages"):
        check_v1_opt_in(ResolvedVersion(text="0.7.3"), ON, load_config_file(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"),
                        ParallelLayout(pp=2))  # fmt: skip
    with pytest.raises(
        UnsupportedModelError, match="pooling runner is not modelled"
    ):  # pooling.py, V1 asserts none
        planned_capacity(
            load_config_file(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"),
            with_environment(parse_flags("vllm", ["--engine-version", "0.7.3", "--task", "embed"]), ON),
            gpu_total_bytes=H100,
            gpu_name="H100",
        )
    with pytest.raises(UnsupportedModelError, match="LoRA"):
        plan(LLAMA_8B, "--enable-lora")
    assert plan(LLAMA_8B) > 0


def test_granite_v0_7_3_v1_start_planned_within_5_percent() -> None:
    """file44357983106-…-v073-v1 (tests/data/calibration/vllm.jsonl): vLLM 0.7.3 under VLLM_USE_V1=1 on an L40S,
    '# GPU blocks: 33660' (538,560 tokens). Its V0 plan was +1.3 %."""
    record = next(json.loads(line) for line in (DATA / "calibration" / "vllm.jsonl").read_text().splitlines()
                  if line.startswith('{"id": "file44357983106-'))  # fmt: skip
    assert record["env"] == ON
    model = load_config_file(DATA / record["config"])
    settings = with_environment(parse_flags("vllm", ["--engine-version", "0.7.3"]), ON)
    plan = planned_capacity(model, settings, gpu_total_bytes=L40S, gpu_name="L40S")
    assert abs(plan.ledger.token_capacity / 538_560 - 1) < 0.05
    assert plan.token_capacity_min <= 538_560 <= plan.token_capacity_max
