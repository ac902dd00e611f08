"""A launch that states its install holds FlashInfer (`plan --flashinfer installed`, LaunchSettings.flashinfer) is
planned on FlashInfer's sampler where importability decides the path (vLLM v0.9.0-v0.11.0, sampler_path.py
FLASHINFER_TAKEN_ERAS), and not read outside it.

The figures are a real start's (tests/data/calibration/vllm.jsonl, dennislee-qwen2-7b-a100-80gb-u025;
dennislee22/vLLM-benchmarking log/vllm-7B-1gpuA10080GB-0.25GRAM.log): Qwen2-7B-Instruct (Qwen2.5-7B-Instruct's
tensors) on an A100 80GB, vLLM 0.10.1.1 installed by `pip install vllm … flashinfer-python` (the source's README),
`--max-model-len 16384 --gpu-memory-utilization 0.25`; the log prints 'Using FlashInfer for top-p & top-k sampling.',
'Model loading took 14.2488 GiB', 'Available KV cache memory: 5.01 GiB', 'GPU KV cache size: 93,872 tokens': 0.25 ×
79.15 − 14.2488 − 5.01 = 0.53 GiB beside weights and KV (79.15 GiB: the A100 80GB's CUDA total, gpus.jsonl).
"""

from __future__ import annotations

import json

import pytest

from benchmarks.calibration.corpus import load_all
from kvtop.cli import main
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.sampler_path import sampler_path, taken_span
from tests.data_paths import CONFIGS

QWEN2_7B = CONFIGS / "Qwen--Qwen2.5-7B-Instruct.json"
LOGGED_TOKENS = 93_872
LOGGED_KV_GIB = 5.01


def _plan(capsys: pytest.CaptureFixture[str], version: str, *stated: str) -> dict[str, object]:
    assert main(["plan", "--json", "--no-calibration-store", "--model", str(QWEN2_7B), "--engine", "vllm",
                 "--engine-version", version, "--gpu", "A100-80GB", "--weights-memory", "14.2488GiB", *stated,
                 "--", "--max-model-len", "16384", "--gpu-memory-utilization", "0.25"]) == 0  # fmt: skip
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def test_the_u025_start_planned_with_its_install_lands_on_its_log(capsys: pytest.CaptureFixture[str]) -> None:
    stated = _plan(capsys, "0.10.1.1", "--flashinfer", "installed")
    tokens = int(stated["token_capacity"])  # type: ignore[call-overload]
    assert abs(tokens - LOGGED_TOKENS) / LOGGED_TOKENS < 0.05
    assert int(stated["token_capacity_min"]) <= LOGGED_TOKENS <= int(stated["token_capacity_max"])  # type: ignore[call-overload]
    assert abs(int(stated["kv_budget_bytes"]) / 2**30 - LOGGED_KV_GIB) < 0.05 * LOGGED_KV_GIB  # type: ignore[call-overload]
    activation = next(t for t in stated["terms"] if t["term"] == "activation")  # type: ignore[attr-defined]
    assert "the install holds FlashInfer, as the launch states it" in activation["basis"]
    # the same launch with nothing stated is planned on the native centre, more than 5 % short of the log
    unstated = _plan(capsys, "0.10.1.1")
    assert (LOGGED_TOKENS - int(unstated["token_capacity"])) / LOGGED_TOKENS > 0.05  # type: ignore[call-overload]


def test_the_statement_is_read_only_where_importability_decides() -> None:
    a100 = "NVIDIA A100-SXM4-80GB"
    assert sampler_path(ResolvedVersion(text="0.10.1.1"), a100, flashinfer="installed")[0] == "flashinfer"
    assert sampler_path(ResolvedVersion(text="0.9.0"), a100, flashinfer="absent")[0] == "native"
    # the launch's own VLLM_USE_FLASHINFER_SAMPLER=0 still decides
    assert sampler_path(ResolvedVersion(text="0.10.1.1"), a100, {"VLLM_USE_FLASHINFER_SAMPLER": "0"},
                        flashinfer="installed")[0] == "native"  # fmt: skip
    # before v0.9.0 the installed FlashInfer's version decides (>= 0.2.3 disables it, vllm#14815): both paths kept
    path, why = sampler_path(ResolvedVersion(text="0.8.5"), a100, flashinfer="installed")
    assert path == "either" and "not read" in why
    # from v0.11.1 opt-in (vllm#26859): native whatever the install holds, and said
    path, why = sampler_path(ResolvedVersion(text="0.13.0"), a100, flashinfer="installed")
    assert path == "native" and "not read" in why and "vllm#26859" in why


def test_the_dennislee_records_state_the_readme_install() -> None:
    records = {r.id: r for r in load_all()["vllm"] if r.id.startswith("dennislee-")}
    stated = {rid for rid, r in records.items() if r.settings.flashinfer == "installed"}
    # the four starts whose logs print FlashInfer's sampler; the two-node A100 40GB start printed none
    assert stated == {"dennislee-qwen2-7b-a100-80gb-u025", "dennislee-qwen2-7b-a100-80gb-u05",
                      "dennislee-qwen2-7b-2xa100-80gb-tp2-u05", "dennislee-gpt-oss-120b-4xa100-80gb-tp4-4nodes-u08"}  # fmt: skip


def test_a_statement_the_release_does_not_read_is_said(capsys: pytest.CaptureFixture[str]) -> None:
    # v0.13.0: FlashInfer's sampler opt-in (vllm#26859); the plan is the unstated one's, its activation says why
    stated, unstated = _plan(capsys, "0.13.0", "--flashinfer", "installed"), _plan(capsys, "0.13.0")
    assert stated["token_capacity"] == unstated["token_capacity"]
    activation = next(t for t in stated["terms"] if t["term"] == "activation")  # type: ignore[attr-defined]
    assert "the launch's FlashInfer installed not read: vllm#26859" in activation["basis"]


def test_plan_help_says_the_releases_that_read_the_statement() -> None:
    # `plan --flashinfer`'s help quotes FLASHINFER_TAKEN_ERAS's span: taken from v0.9.0 (topk_topp_sampler.py
    # v0.9.0:33-38, FlashInfer >= 0.2.3 taken where it imports), opt-in from v0.11.1 (vllm#26859)
    assert taken_span() == "v0.9.0 to before v0.11.1"
