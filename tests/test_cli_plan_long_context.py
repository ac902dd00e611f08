"""`kvtop plan --cmd` with a context above the model's positions: refused, unless the launch line sets the engine's
long-context variable as its release reads it; then planned at the stated length with one named note.

vLLM: `_get_and_verify_max_len` warns and returns the stated length where `envs.VLLM_ALLOW_LONG_MAX_MODEL_LEN`
(`os.environ.get(…, "0").strip().lower() in ("1", "true")`: v0.5.4 envs.py:340-343, v0.33.0 envs.py:1115-1118), else
raises ValueError; v0.5.3 has no such variable (config.py:1532-1538). SGLang: `ModelConfig` warns and takes it where
SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN reads true: get_bool_env_var's "true" / "1" before 0.5.3rc2 (0.4.0
model_config.py:72), EnvBool's "true" / "1" / "yes" / "y" from it (0.5.3rc2 :265, environ.py:82-89); from 0.4.4 to
0.5.0rc2 the default was "True" (0.4.4 :83-85), so an unset variable takes it too.
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from tests.conftest import CONFIGS

# Qwen3.5-122B-A10B's config.json (heldout/SOURCES.md): max_position_embeddings 262,144
QWEN35_122B = str(CONFIGS / "heldout" / "Qwen--Qwen3.5-122B-A10B.json")
QWEN25_7B = str(CONFIGS / "Qwen--Qwen2.5-7B-Instruct.json")  # max_position_embeddings 32,768 (configs/SOURCES.md)
VLLM_ENV, SGLANG_ENV = "VLLM_ALLOW_LONG_MAX_MODEL_LEN", "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN"
# the Red Hat AI Inference Server 3.4.1 start (vLLM 0.18.0+rhaiv.11, 4 × L40S; calibration/SOURCES.md, 66923849123)
RHAIIS = ("vllm serve Qwen/Qwen3.5-122B-A10B --tensor-parallel-size 4 --max-model-len 1010000 "
          "--gpu-memory-utilization 0.95 --max-num-seqs 1 --max-num-batched-tokens 32768 --kv-cache-dtype fp8 "
          "--enable-chunked-prefill --enforce-eager --disable-custom-all-reduce --language-model-only")  # fmt: skip


def plan(capsys: pytest.CaptureFixture[str], model: str, version: str, gpu: str, cmd: str) -> tuple[int, dict, str]:
    args = ["plan", "--json", "--no-calibration-store", "--model", model, "--engine-version", version, "--gpu", gpu,
            "--cmd", cmd]  # fmt: skip
    code = main(args)
    captured = capsys.readouterr()
    return code, json.loads(captured.out) if code == 0 else {}, captured.err


def test_the_rhaiis_launch_with_vllms_variable_is_planned_at_its_million_tokens(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The launch sets VLLM_ALLOW_LONG_MAX_MODEL_LEN=1, as the Red Hat start did: vLLM 0.18.0 takes 1,010,000 above
    the 262,144 positions and logs its warning. KV a token on a rank (the config's arithmetic): 12 full-attention
    layers (every 4th of 48) × 2 (K, V) × 1 KV head (2 over TP 4, replicated) × 256 head dim × 1 B (fp8) = 6,144 B."""
    code, out, _ = plan(capsys, QWEN35_122B, "0.18.0", "L40S", f"{VLLM_ENV}=1 {RHAIIS}")
    assert code == 0 and out["context_length"] == 1_010_000 and out["kv_bytes_per_token"] == 6144
    (note,) = [n for n in out["notes"] if n.startswith("long context allowed")]
    assert note == ("long context allowed: VLLM_ALLOW_LONG_MAX_MODEL_LEN=1, so vLLM 0.18.0 starts at --max-model-len "
                    "1,010,000 above the model's 262,144 positions (max_position_embeddings) and logs its warning; "
                    "planned at the stated length")  # fmt: skip


@pytest.mark.parametrize(("env", "why"), [
    ("", "; it starts anyway with VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"),
    (f"{VLLM_ENV}=0 ", "the launch's VLLM_ALLOW_LONG_MAX_MODEL_LEN=0 reads false (true: 1, true)"),
    (f"{VLLM_ENV}=yes ", "the launch's VLLM_ALLOW_LONG_MAX_MODEL_LEN=yes reads false (true: 1, true)"),
])  # fmt: skip
def test_the_rhaiis_launch_without_a_true_variable_is_refused(
    capsys: pytest.CaptureFixture[str], env: str, why: str
) -> None:
    """Unset, or a value vLLM's envs.py does not read as true ("yes" is not): `_get_and_verify_max_len` raises."""
    code, _, err = plan(capsys, QWEN35_122B, "0.18.0", "L40S", env + RHAIIS)
    assert code == 2
    assert "vLLM 0.18.0 refuses --max-model-len 1,010,000 above the model's 262,144 positions" in err and why in err


def test_vllm_strips_and_lowercases_its_variable(capsys: pytest.CaptureFixture[str]) -> None:
    """`.strip().lower() in ("1", "true")`: "True" takes the length at 0.33.0 as "1" does."""
    code, out, _ = plan(capsys, QWEN25_7B, "0.33.0", "H100", f"{VLLM_ENV}=True vllm serve x --max-model-len 131072")
    assert code == 0 and out["context_length"] == 131_072


def test_vllm_reads_its_variable_from_v054(capsys: pytest.CaptureFixture[str]) -> None:
    """v0.5.3's `_get_and_verify_max_len` raises whatever the environment; v0.5.4 reads the variable. KV a token:
    28 layers × 2 × 4 KV heads × 128 × 2 B (bf16) = 57,344 B."""
    cmd = f"{VLLM_ENV}=1 vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 131072"
    code, _, err = plan(capsys, QWEN25_7B, "0.5.3", "A100-80GB", cmd)
    assert code == 2 and "this release does not read the launch's VLLM_ALLOW_LONG_MAX_MODEL_LEN=1" in err
    assert "it starts anyway" not in err
    code, out, _ = plan(capsys, QWEN25_7B, "0.5.4", "A100-80GB", cmd)
    assert code == 0 and out["context_length"] == 131_072 and out["kv_bytes_per_token"] == 57_344


SGLANG = "python -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct --context-length 131072"


@pytest.mark.parametrize(("version", "env", "planned"), [
    ("0.5.23", "", False), ("0.5.23", "=1", True), ("0.5.23", "=yes", True), ("0.5.23", "=0", False),
    ("0.5.3rc2", "=y", True),  # EnvBool from 0.5.3rc2
    ("0.5.3rc0", "=yes", False), ("0.5.1", "=TRUE", True), ("0.5.1", "", False),  # get_bool_env_var: true / 1
    ("0.4.6", "", True), ("0.5.0rc2", "", True), ("0.4.6", "=0", False), ("0.4.4", "=yes", False),  # default "True"
    ("0.4.3", "", False), ("0.4.3", "=1", True),
])  # fmt: skip
def test_sglang_takes_a_longer_context_as_its_release_reads_the_variable(
    capsys: pytest.CaptureFixture[str], version: str, env: str, planned: bool
) -> None:
    cmd = f"{SGLANG_ENV}{env} {SGLANG}" if env else SGLANG
    code, out, err = plan(capsys, QWEN25_7B, version, "H100", cmd)
    if not planned:
        assert code == 2 and f"SGLang {version} refuses --context-length 131,072 above the model's 32,768" in err
        return
    assert code == 0 and out["context_length"] == 131_072 and out["kv_bytes_per_token"] == 57_344
    (note,) = [n for n in out["notes"] if n.startswith("long context allowed")]
    told = f"{SGLANG_ENV}{env}" if env else f"{SGLANG_ENV} unset (this release's default: allowed)"
    assert note.startswith(f"long context allowed: {told}, so SGLang {version} starts at --context-length 131,072")


def test_the_rhaiis_model_under_sglang_with_its_variable(capsys: pytest.CaptureFixture[str]) -> None:
    """The same million tokens under SGLang 0.5.23: refused unset, planned with the variable."""
    cmd = "python -m sglang.launch_server --model-path Qwen/Qwen3.5-122B-A10B --tp 4 --context-length 1010000"
    code, _, err = plan(capsys, QWEN35_122B, "0.5.23", "H100", cmd)
    assert code == 2 and "it starts anyway with SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1" in err
    code, out, _ = plan(capsys, QWEN35_122B, "0.5.23", "H100", f"{SGLANG_ENV}=1 {cmd}")
    assert code == 0 and out["context_length"] == 1_010_000
    assert sum(n.startswith("long context allowed") for n in out["notes"]) == 1
