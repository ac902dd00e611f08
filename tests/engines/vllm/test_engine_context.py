"""`--engine-context`: the engine is started through `EngineArgs` → `LLMEngine.from_engine_args` (usage context
ENGINE_CONTEXT), which is in neither of vLLM's usage-context default tables, so the scheduler's own defaults hold.

Expected values from vLLM's own code: v0.8.0 engine/arg_utils.py:1705-1720 (tokens set for LLM_CLASS and
OPENAI_API_SERVER only; `default_max_num_seqs = 1024` for every context) and config.py:61,1657 (SchedulerConfig:
an unset max_num_batched_tokens → 2048); v0.9.1 arg_utils.py:1560-1567 (seqs by the GPU, every context); v0.9.2
arg_utils.py:1697 (`usage_context in default_max_num_seqs`) and config.py:2240 (128); v0.10.1.1 arg_utils.py:1638-1712,
config/scheduler.py:185-193; v0.13.0 arg_utils.py:1941-1950 and v0.33.0 :3172-3181 (`.get(usage_context,
SchedulerConfig.DEFAULT_MAX_NUM_BATCHED_TOKENS / DEFAULT_MAX_NUM_SEQS)`, config/scheduler.py 2048 / 128). The
end-to-end figure is the calibration record `huzifa1-profiling-llama-2-13b-h100-v01011` (its `engine.py` calls
`LLMEngine.from_engine_args`): 'GPU KV cache size: 61,136 tokens'.
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.batching import default_batch_limits
from kvtop.domain.errors import InputError
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from tests.cli_in_process import run_kvtop
from tests.data_paths import CONFIGS, DATA


@pytest.mark.parametrize(("release", "gpu", "expected"), [
    ("0.8.0", "H100", (2048, 1024)),  # tokens the scheduler's; seqs V1's 1024 for every context
    ("0.9.1", "T4", (2048, 256)),
    ("0.9.2", "H100", (2048, 128)),  # max_num_seqs joins the usage-context tables
    ("0.10.1.1", "H100-NVL", (2048, 128)),
    ("0.20.0", "A100-80GB", (2048, 128)),
    ("0.28.0", "B200", (2048, 128)),  # the ≥ 160 GiB tier is the tables', not the scheduler's
    ("0.33.0", "H200", (2048, 128)),
])  # fmt: skip
def test_the_engine_context_batch_default_by_release(release: str, gpu: str, expected: tuple[int, int]) -> None:
    version = ResolvedVersion(text=release)
    assert default_batch_limits(gpu_total_bytes(gpu), gpu, version, engine_context=True)[:2] == expected


def test_v0_takes_the_servers_defaults() -> None:
    version, total = ResolvedVersion(text="0.7.3"), gpu_total_bytes("H100")
    assert default_batch_limits(total, "H100", version, engine_context=True) == default_batch_limits(total, "H100", version)


def _planned(release: str, gpu: str, config: str, *extra: str) -> int:
    completed = run_kvtop("plan", "--engine", "vllm", "--engine-version", release, "--gpu", gpu,
                          "--model", config, "--no-calibration-store", "--json", *extra)  # fmt: skip
    assert completed.returncode == 0, completed.stderr
    return int(json.loads(completed.stdout)["token_capacity"])


def test_the_h100_engine_args_start_plans_as_its_scheduler_defaults() -> None:
    logged = 61_136  # 'GPU KV cache size: 61,136 tokens'
    config = str(DATA / "calibration/configs/meta-llama--Llama-2-13b-hf.json")
    direct = _planned("0.10.1.1", "H100", config, "--engine-context")
    assert direct == _planned("0.10.1.1", "H100", config, "--max-num-batched-tokens", "2048", "--max-num-seqs", "128")
    assert abs(direct - logged) / logged < 0.02
    # as `vllm serve` (8,192 tokens, 1,024 seqs on an H100) the plan leaves less to the KV than this start had
    assert _planned("0.10.1.1", "H100", config) < direct


def test_the_flag_is_kvtops_not_vllms() -> None:
    assert parse_flags("vllm", ["--engine-context"]).engine_context is True
    with pytest.raises(InputError, match="kvtop's own flag"):
        parse_flags("vllm", ["--engine-context"], engine_line=True)


def _refused(*extra: str, config: str, release: str = "0.10.1.1") -> str:
    completed = run_kvtop("plan", "--engine", "vllm", "--engine-version", release, "--gpu", "H100",
                          "--model", config, "--no-calibration-store", *extra)  # fmt: skip
    assert completed.returncode != 0
    assert "Traceback" not in completed.stderr
    return completed.stderr


def test_both_entry_points_at_once_are_refused() -> None:
    config = str(DATA / "calibration/configs/meta-llama--Llama-2-13b-hf.json")
    assert "--engine-context" in _refused("--engine-context", "--llm-class", config=config)


def test_a_multimodal_model_before_v0_11_1_is_not_modelled() -> None:
    # SchedulerConfig.__post_init__ raises the unset batch to 5120 for a multimodal model (v0.11.0 config/scheduler.py
    # :171-192); gone from v0.11.1
    config = str(CONFIGS / "google--gemma-3-27b-it.json")
    assert "5120" in _refused("--engine-context", config=config)
    assert _planned("0.10.1.1", "H100", config, "--engine-context", "--max-num-batched-tokens", "5120") > 0
