"""vLLM serves a bf16 checkpoint as float16 under `--dtype auto` on a GPU without bf16 (compute capability below
8.0) from v0.9.0: the plan's KV is labelled fp16 there, bf16 elsewhere and before v0.9.0 (the bytes are the same).

Expected labels from the engines' own logs and code, not from kvtop: the corpus's V100 start of Qwen3-8B (vLLM
0.10.0, `tests/data/calibration/vllm.jsonl` id huazetang-icl-qwen3-8b-v100-32gb-v0100-v0) and T4 start of
Phi-4-mini-instruct (vLLM 0.10.2, id kyaushev-ecg-phi-4-mini-colab-t4-v0102) print "Your device 'Tesla
V100-PCIE-32GB' (with compute capability 7.0) doesn't support torch.bfloat16" / "Your device 'Tesla T4' (with
compute capability 7.5) doesn't support torch.bfloat16", the warning of `_resolve_auto_dtype`
(config/model.py:2236-2251 at v0.28.0) that falls back to `CudaPlatform.supported_dtypes[0]`, float16 below sm80
(platforms/cuda.py:237-246 at v0.28.0). Before v0.9.0 `auto` kept bfloat16 (config.py _get_and_verify_dtype at
v0.8.5.post1, no fallback).
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from tests.data_paths import CONFIGS, DATA

QWEN3_8B = str(CONFIGS / "Qwen--Qwen3-8B.json")  # torch_dtype bfloat16
PHI4_MINI = str(DATA / "calibration" / "configs" / "microsoft--Phi-4-mini-instruct.json")  # bfloat16


def _plan(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["plan", "--json", "--engine", "vllm", *args]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(
    ("gpu", "version", "label"),
    [
        ("V100-32GB", "0.10.0", "fp16"),  # the V100 start's warning (sm 7.0)
        ("T4", "0.30.0", "fp16"),  # sm 7.5; the same fallback at v0.30.0
        ("A100-80GB", "0.30.0", "bf16"),  # sm 8.0 supports bf16: the config's dtype
        ("T4", "0.8.5.post1", "bf16"),  # before v0.9.0: no fallback (the worker refuses bf16; not modelled)
    ],
)
def test_auto_kv_label_follows_the_served_dtype(
    capsys: pytest.CaptureFixture[str], gpu: str, version: str, label: str
) -> None:
    out = _plan(capsys, "--model", QWEN3_8B, "--gpu", gpu, "--engine-version", version)
    assert out["kv_cache_dtype"] == label
    # the bytes are the same 2 B an element: Qwen3-8B's 36 layers × 8 KV heads × 128 × 2 (K, V) × 2 B
    assert out["kv_bytes_per_token"] == 36 * 8 * 128 * 2 * 2


def test_the_t4_phi_4_mini_start(capsys: pytest.CaptureFixture[str]) -> None:
    """The T4 start of Phi-4-mini-instruct (torch_dtype bfloat16) at vLLM 0.10.2, its own launch: fp16 KV, as its
    'doesn't support torch.bfloat16' warning says; 32 layers × 8 KV heads × 128 × 2 × 2 B = 131,072 B a token."""
    out = _plan(capsys, "--model", PHI4_MINI, "--gpu", "T4", "--engine-version", "0.10.2",
                "--max-model-len", "4096", "--gpu-memory-utilization", "0.8")  # fmt: skip
    assert out["kv_cache_dtype"] == "fp16"
    assert out["kv_bytes_per_token"] == 32 * 8 * 128 * 2 * 2
