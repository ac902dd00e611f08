"""TensorRT-LLM's overlap-scheduler key as kvtop reads it back (#27, session 71); the copied launch itself (serve's
options, the YAML beside them, planned again through `--cmd`) is tests/engines/trtllm/test_serve_launch.py.
"""

from __future__ import annotations

import pytest

from kvtop.cli import main
from tests.data_paths import CONFIGS
from tests.engines.measured_flags import plan_json


def _temporary_pool(plan: dict[str, object]) -> object:
    steps = plan["steps"]
    assert isinstance(steps, list)
    return next(step for step in steps if "temporary pool" in step["label"])


def test_overlap_off_typed_false_is_not_set(capsys: pytest.CaptureFixture[str]) -> None:
    """At 0.20.0 the profiling run gives each dummy request of max_seq_len − 1 = 159 tokens two generated tokens with
    the overlap scheduler on, one without (§3 step 1): 148 requests (23,552 ÷ 159, the last 20 tokens) take
    ⌈(159 + 2) ÷ 32⌉ = 6 blocks each (⌈22 ÷ 32⌉ = 1 for the last), 889 × 32 = 28,448 tokens; with it off
    ⌈160 ÷ 32⌉ = 5 each, 741 × 32 = 23,712; each token 131,072 B (32 layers × 8 KV heads × 128 × 2 × 2 B). A typed
    'false' is the scheduler on, not a set switch."""
    base = ("--model", str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"), "--engine", "trtllm",
            "--engine-version", "0.20.0", "--gpu", "H100", "--backend", "pytorch", "--max_batch_size", "4096",
            "--max_num_tokens", "23552", "--max_seq_len", "160")  # fmt: skip
    on = _temporary_pool(plan_json(capsys, base))
    off = _temporary_pool(plan_json(capsys, base, "--disable_overlap_scheduler"))
    typed_false = _temporary_pool(plan_json(capsys, base, "--disable_overlap_scheduler", "false"))
    pools = [(step["note"], step["bytes"]) for step in (on, off, typed_false)]  # type: ignore[index]
    assert pools == [("28,448 tokens", 28_448 * 131_072), ("23,712 tokens", 23_712 * 131_072),
                     ("28,448 tokens", 28_448 * 131_072)]  # fmt: skip


def test_overlap_off_not_a_boolean_is_refused_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    args = ("plan", "--no-calibration-store", "--model", str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"),
            "--engine", "trtllm", "--gpu", "H100", "--backend", "pytorch", "--disable_overlap_scheduler", "maybe")  # fmt: skip
    assert main(list(args)) != 0
    assert "--disable_overlap_scheduler: expected true or false, got 'maybe'" in capsys.readouterr().err


_LLAMA_019 = ("--model", str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"), "--engine", "trtllm",
              "--engine-version", "0.19.0", "--gpu", "H100", "--backend", "pytorch", "--max_batch_size", "4096",
              "--max_num_tokens", "23552", "--max_seq_len", "160")  # fmt: skip


def test_before_pr_4174_the_overlap_scheduler_is_off_unless_the_old_key_turns_it_on(capsys) -> None:
    """Before PR #4174 (merged 2025-05-13; 0.20.0rc3 the first upload after) PyTorchConfig.enable_overlap_scheduler
    defaulted to False (_torch/pyexecutor/config.py of spring 2025; PR #4174's diff turns `enable_overlap_scheduler=
    False` into `disable_overlap_scheduler=True`). At 0.19.0 the same launch as above takes ⌈160 ÷ 32⌉ = 5 blocks a
    dummy request (one generated token): 741 × 32 = 23,712 tokens; `pytorch_backend_config: {enable_overlap_scheduler:
    true}` gives two, 889 × 32 = 28,448."""
    default = _temporary_pool(plan_json(capsys, _LLAMA_019))
    old_on = _temporary_pool(plan_json(capsys, _LLAMA_019, "--pytorch_backend_config.enable_overlap_scheduler", "true"))
    assert [step["note"] for step in (default, old_on)] == ["23,712 tokens", "28,448 tokens"]  # type: ignore[index]


def test_the_tensorrt_backend_refuses_the_overlap_key(capsys) -> None:
    """NVIDIA/TensorRT-LLM#7752 (1.0.0rc4): `_TrtLLM got invalid argument: disable_overlap_scheduler`."""
    args = ("plan", "--no-calibration-store", "--model", str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"),
            "--engine", "trtllm", "--gpu", "H100", "--backend", "tensorrt", "--disable_overlap_scheduler")  # fmt: skip
    assert main(list(args)) != 0
    assert "--disable_overlap_scheduler: the TensorRT backend takes no overlap-scheduler key" in capsys.readouterr().err


@pytest.mark.parametrize(("version", "fraction"), [("1.2.0rc2", 0.9), ("1.1.0", 0.9), ("1.2.1", 0.5)])
def test_a_yaml_kv_cache_config_without_the_fraction_before_pr_9262(capsys, tmp_path, version, fraction) -> None:
    """Before PR #9262 update_llm_args_with_extra_dict's `llm_args | llm_args_dict` put the YAML's kv_cache_config in
    place of the line's KvCacheConfig, whose fraction came back at the 0.9 default (KvCacheConfig, llm_args.py);
    1.2.0rc2 (2025-11-07) predates it; 1.1.0 sorts before 1.2.0rc3 and is read so (whether its branch took the fix
    was not read); 1.2.1 is read as carrying it."""
    options = tmp_path / "kv.yaml"
    options.write_text("kv_cache_config:\n  dtype: fp8\n")
    base = ("--model", str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"), "--engine", "trtllm",
            "--engine-version", version, "--gpu", "H100")  # fmt: skip
    cmd = f"trtllm-serve MODEL --backend pytorch --kv_cache_free_gpu_memory_fraction 0.5 --extra_llm_api_options {options}"
    out = plan_json(capsys, base, "--cmd", cmd)
    assert out["memory_fraction"]["value"] == pytest.approx(fraction, abs=1e-6)
