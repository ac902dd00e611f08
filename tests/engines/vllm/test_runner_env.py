"""VLLM_USE_V2_MODEL_RUNNER on the launch line (runner_eras.RUNNER_ENV_ERAS, docs/engines/vllm.md §3): absent before
v0.12.0 (v0.11.2's envs.py has none); v0.12.0-v0.21.x `bool(int(os.getenv(…, "0")))` (envs.py:1550-1552 at v0.12.0),
1 the experimental V2 runner kvtop does not model; from v0.22.0 `maybe_convert_bool` (envs.py:1897-1899), which
config/vllm.py:493-496 `use_v2_model_runner` returns before the release's pick, V2 then validated
(`_validate_v2_model_runner`, v0.22.0 :2057-2067: a model with inner state refused at v0.22.0 :1983); v0.34.0 refuses
any value but '1' (platforms/interface.py:1481-1490).

The figures are keke0712/specdec_rtx5090's servers (tests/data/calibration/vllm.jsonl, their /metrics scrapes at
39638ec5): Qwen3-14B-AWQ on one RTX 5090, `--max-model-len 8192 --max-num-seqs 16 --gpu-memory-utilization 0.85
--no-enable-prefix-caching`; condition B (scripts/start_matched_baseline.sh) adds `--no-async-scheduling` and
VLLM_USE_V2_MODEL_RUNNER=0 and its cache_config_info says num_gpu_blocks 6849: 109,584 tokens.
"""

from __future__ import annotations

import pytest

from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.runner_eras import RUNNER_ENV, runs_v2
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import LaunchSettings, engine_flags, parse_flags
from kvtop.domain.launch_line import parse_launch_command
from kvtop.sources.hub import load_model
from tests.data_paths import CONFIGS, DATA

AWQ_14B = load_model(str(DATA / "calibration" / "configs" / "Qwen--Qwen3-14B-AWQ.RECONSTRUCTED.json"))
NEMOTRON_H = load_model(str(DATA / "calibration" / "configs" / "nvidia--Nemotron-H-8B-Reasoning-128K.RECONSTRUCTED.json"))
QWEN3_8B = load_model(str(CONFIGS / "Qwen--Qwen3-8B.json"))
KEKE_B = ("vllm serve Qwen/Qwen3-14B-AWQ --served-model-name Qwen/Qwen3-14B-AWQ --host 127.0.0.1 --port 8000 "
          "--dtype auto --max-model-len 8192 --max-num-seqs 16 --gpu-memory-utilization 0.85 --generation-config vllm "
          "--no-enable-prefix-caching --no-async-scheduling")  # fmt: skip
KEKE_B_TOKENS = 6_849 * 16  # its /metrics: num_gpu_blocks 6849 of 16 tokens


def _launch(line: str, release: str) -> LaunchSettings:
    settings = parse_launch_command(line)
    assert settings is not None
    return settings.model_copy(update={"engine_version": release})


def _at(release: str) -> ResolvedVersion:
    return ResolvedVersion(text=release)


def test_the_variable_is_read_from_the_launch_line_and_a_docker_env() -> None:
    assert RUNNER_ENV in engine_flags("vllm").env_read
    assert _launch(f"{RUNNER_ENV}=0 {KEKE_B}", "0.27.1").flags[RUNNER_ENV] == "0"
    docker = _launch(f"docker run --gpus all -e {RUNNER_ENV}=1 vllm/vllm-openai:v0.25.0 --model x", "0.25.0")
    assert docker.flags[RUNNER_ENV] == "1"


def test_keke0712_b_server_runs_v1_under_its_environment_and_plans_near_its_pool() -> None:
    """Unset, v0.27.1 runs this dense model on V2 (the v2_dense era); the B script's VLLM_USE_V2_MODEL_RUNNER=0 runs V1.
    Planned as V2 it was 93,232 tokens at 95efaa2e (−14.9 % of the server's 109,584); as V1 within 2 %."""
    bare, forced = _launch(KEKE_B, "0.27.1"), _launch(f"{RUNNER_ENV}=0 {KEKE_B}", "0.27.1")
    assert runs_v2(_at("0.27.1"), AWQ_14B, bare)
    assert not runs_v2(_at("0.27.1"), AWQ_14B, forced)
    plan = planned_capacity(AWQ_14B, forced, gpu_total_bytes=gpu_total_bytes("RTX5090"), gpu_name="RTX5090")
    assert abs(plan.ledger.token_capacity - KEKE_B_TOKENS) / KEKE_B_TOKENS < 0.02
    assert plan.token_capacity_min <= KEKE_B_TOKENS <= plan.token_capacity_max
    assert any("the V1 model runner, from the launch's environment" in note for note in plan.ledger.notes)


def test_env_1_runs_a_hybrid_on_v2_at_v0_25_where_the_release_keeps_it_on_v1() -> None:
    """v0.25.0 keeps a hybrid on V1 unset (config/vllm.py:565 `is_hybrid`), and its V2 refuses no inner state when
    forced (:2042-2135), so =1 runs Nemotron-H on V2; v0.22.0 refuses it ('hybrid/mamba models', :1983)."""
    line = f"{RUNNER_ENV}=1 vllm serve nvidia/Nemotron-H-8B-Reasoning-128K --max-model-len 8192"
    assert NEMOTRON_H.state is not None
    assert not runs_v2(_at("0.25.0"), NEMOTRON_H, _launch(line.split(" ", 1)[1], "0.25.0"))
    forced = _launch(line, "0.25.0")
    assert runs_v2(_at("0.25.0"), NEMOTRON_H, forced)
    plan = planned_capacity(NEMOTRON_H, forced, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100")
    assert any("the V2 model runner, from the launch's environment" in note for note in plan.ledger.notes)
    with pytest.raises(InputError, match="refuses VLLM_USE_V2_MODEL_RUNNER=1 with a model with Mamba") as refused:
        runs_v2(_at("0.22.0"), NEMOTRON_H, _launch(line, "0.22.0"))
    assert refused.value.field == RUNNER_ENV


def test_v0_34_refuses_any_value_but_1() -> None:
    for value in ("0", "true", "01"):
        with pytest.raises(InputError, match=f"vLLM 0.34.0 refuses {RUNNER_ENV}={value}: Model Runner V1 has been removed"):
            runs_v2(_at("0.34.0"), QWEN3_8B, _launch(f"{RUNNER_ENV}={value} vllm serve Qwen/Qwen3-8B", "0.34.0"))
    assert runs_v2(_at("0.34.0"), QWEN3_8B, _launch(f"{RUNNER_ENV}=1 vllm serve Qwen/Qwen3-8B", "0.34.0"))


def test_before_v0_22_1_is_the_unmodelled_experimental_runner_and_before_v0_12_no_variable() -> None:
    with pytest.raises(UnsupportedModelError, match="experimental V2 model runner"):
        runs_v2(_at("0.21.0"), QWEN3_8B, _launch(f"{RUNNER_ENV}=1 vllm serve Qwen/Qwen3-8B", "0.21.0"))
    assert not runs_v2(_at("0.21.0"), QWEN3_8B, _launch(f"{RUNNER_ENV}=0 vllm serve Qwen/Qwen3-8B", "0.21.0"))
    assert not runs_v2(_at("0.11.0"), QWEN3_8B, _launch(f"{RUNNER_ENV}=1 vllm serve Qwen/Qwen3-8B", "0.11.0"))


def test_a_value_int_refuses_and_a_method_v2_lacks_are_refused_by_name() -> None:
    with pytest.raises(InputError, match="bool\\(int\\(value\\)\\)"):
        runs_v2(_at("0.27.1"), QWEN3_8B, _launch(f"{RUNNER_ENV}=true vllm serve Qwen/Qwen3-8B", "0.27.1"))
    ngram = parse_flags("vllm", ["--engine-version", "0.27.1", "--speculative-config",
                                 '{"method": "ngram", "num_speculative_tokens": 3}'])  # fmt: skip
    forced = ngram.model_copy(update={"flags": {**ngram.flags, RUNNER_ENV: "1"}})
    assert not runs_v2(_at("0.27.1"), QWEN3_8B, ngram)  # unset: n-gram keeps V1
    with pytest.raises(InputError, match="speculative method 'ngram'"):
        runs_v2(_at("0.27.1"), QWEN3_8B, forced)
