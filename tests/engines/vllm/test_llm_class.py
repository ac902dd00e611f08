"""`--llm-class`: the engine is started through vLLM's offline `LLM(...)` class (usage context LLM_CLASS), whose
max_num_batched_tokens default is not `vllm serve`'s, and the profiling run's activation term reads it.

Expected values from vLLM's own code (engine/arg_utils.py): v0.8.0 `_set_default_args_v1` (1693-1704: LLM_CLASS
16384 on H100/H200, else 8192; the server 8192 / 2048); `get_batch_defaults` v0.20.0 (2208-2227: ≥ 70 GiB and not
an A100 → LLM_CLASS 16384, server 8192; else 8192 / 2048) and v0.28.0 (2582-2590: ≥ 160 GiB → 16384 both); v0.7.3
sets nothing by usage context for V0 (only `_override_v1_engine_args`, 1355-1387). The end-to-end figure is the
calibration record `file67587108858-qwen3-8b-awq-t4-v0200` (an LLM-class start on a Kaggle T4, vLLM 0.20.0): its log
printed `max_num_batched_tokens=8192` and `GPU KV cache size: 34,848 tokens`.
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
from tests.data_paths import CONFIGS


@pytest.mark.parametrize(("release", "gpu", "server", "llm_class"), [
    ("0.7.3", "T4", 2048, 2048),  # V0: no default by usage context
    ("0.8.0", "H100", 8192, 16384),
    ("0.20.0", "T4", 2048, 8192),
    ("0.20.0", "H100", 8192, 16384),
    ("0.20.0", "A100-80GB", 2048, 8192),  # "a100" in the device name
    ("0.28.0", "B200", 16384, 16384),  # ≥ 160 GiB: the same for both
    ("0.28.0", "H200", 8192, 16384),
])  # fmt: skip
def test_the_llm_class_batch_default_by_release_and_gpu(release: str, gpu: str, server: int, llm_class: int) -> None:
    version = ResolvedVersion(text=release)
    total = gpu_total_bytes(gpu)
    assert default_batch_limits(total, gpu, version)[0] == server
    assert default_batch_limits(total, gpu, version, llm_class=True)[0] == llm_class
    # max_num_seqs is the server's in every release read
    assert default_batch_limits(total, gpu, version, llm_class=True)[1] == default_batch_limits(total, gpu, version)[1]


_T4_LAUNCH = [
    "--quantization", "awq_marlin", "--dtype", "float16", "--enforce-eager", "--gpu-memory-utilization", "0.78",
    "--max-model-len", "4096", "--max-num-seqs", "8", "--disable-custom-all-reduce", "--attention-backend",
    "TRITON_ATTN",
]  # fmt: skip


def _planned(*extra: str) -> int:
    config = CONFIGS / "heldout/calib48/Qwen--Qwen3-8B-AWQ.RECONSTRUCTED.json"
    completed = run_kvtop("plan", "--engine", "vllm", "--engine-version", "0.20.0", "--gpu", "T4",
                          "--model", str(config), "--no-calibration-store", "--json", *_T4_LAUNCH, *extra)  # fmt: skip
    assert completed.returncode == 0, completed.stderr
    return int(json.loads(completed.stdout)["token_capacity"])


def test_the_kaggle_t4_llm_class_start_plans_its_printed_batch() -> None:
    logged = 34_848  # `GPU KV cache size: 34,848 tokens`
    offline = _planned("--llm-class")
    assert offline == _planned("--max-num-batched-tokens", "8192")  # the batch its log printed
    assert abs(offline - logged) / logged < 0.02
    # as `vllm serve` (2,048 batched tokens) the plan leaves more to the KV than this start had
    assert _planned() > offline


def test_the_flag_is_kvtops_not_vllms() -> None:
    assert parse_flags("vllm", ["--llm-class"]).llm_class is True
    with pytest.raises(InputError, match="kvtop's own flag"):
        parse_flags("vllm", ["--llm-class"], engine_line=True)
