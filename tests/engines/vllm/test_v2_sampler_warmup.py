"""V2's dummy sampler from v0.33.0: a second, warmup-param pass on the serving path (`v2_profile.py`,
`sampler_path.V2_WARMUP_PASS_ERAS`).

vLLM 0.33.0's `_dummy_sampler_run` (v1/worker/gpu/model_runner.py:993-1014) samples the logits once with the dummy
batch's greedy states and again after `add_request(req_idx, SamplingParams.for_sampler_warmup())` for every row
(temperature 0.9, top-k 50, top-p 0.9, min-p, penalties, logit bias, bad words, 5 logprobs: sampling_params.py:1477-1493).
The second pass copies the logits to float32 (`torch.empty_like(logits, dtype=torch.float32).copy_(logits)`,
sample/sampler.py:242) and, no row greedy or seeded, takes FlashInfer's fused sampler where `use_flashinfer`
(:88-90, :307-317, :340-345): `top_k_top_p_sampling_from_logits` with a top-k tensor masks a float32 copy and softmaxes
it (flashinfer 0.7.2.post1 sampling.py:1795-1796, the version vLLM 0.33.0 pins); else the Triton mask in place, its
cached buffer of min(SMs, seqs) float32 rows (v1/sample/ops/topk_topp_triton.py:1688-1698) and gumbel's int64 and
float32 per 1,024-entry block (sample/gumbel.py:384-388). v0.32.0's `_dummy_sampler_run` (:972-983) samples once.

Qwen3-8B (hidden 4,096, intermediate 12,288, vocabulary 151,936, bf16) at 8,192 batched tokens and 1,024 seqs on an
H100 (compute capability 9.0, 132 SMs).
"""

from __future__ import annotations

from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.engines.vllm.calibration import FITS
from kvtop.domain.engines.vllm.sampler_path import v2_warmup_path
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch_line import parse_launch_command
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_config_file
from tests.data_paths import CONFIGS

QWEN3_8B = load_config_file(CONFIGS / "Qwen--Qwen3-8B.json")
VOCAB, SEQS, TOKENS, HIDDEN = 151936, 1024, 8192, 4096
LOGITS = SEQS * VOCAB * 2  # compute_logits' bf16 logits, held by _dummy_sampler_run through both passes
COPY = SEQS * VOCAB * 4  # the warm-up pass's float32 copy
HELD = (TOKENS + SEQS) * HIDDEN * 2  # the forward's output and the sampled rows, held by profile_run
FLASHINFER = LOGITS + 3 * COPY + HELD  # the copy, the masked copy and its softmax: 2,253,651,968 B
NATIVE = LOGITS + COPY + 132 * VOCAB * 4 + SEQS * 149 * 12 + HELD  # the Triton buffer, gumbel's blocks
GREEDY = LOGITS + SEQS * 149 * 12 + HELD  # v0.32.0's one pass: no copy, gumbel's blocks
FORWARD = TOKENS * (3 * 12288 + HIDDEN) * 2 + 2 * TOKENS * HIDDEN * 2  # the MLP transient, residual, normed input


def _version(text: str) -> ResolvedVersion:
    return ResolvedVersion(text=text, source=VersionSource.FLAG, detail=f"--engine-version {text}")


def _activation(version: str, env: str = ""):  # type: ignore[no-untyped-def]
    settings = parse_launch_command(f"{env} vllm serve Qwen/Qwen3-8B --max-num-seqs {SEQS} --max-num-batched-tokens "
                                    f"{TOKENS} --max-model-len 16384")  # fmt: skip
    assert settings is not None
    settings = settings.model_copy(update={"engine_version": version})
    plan = planned_capacity(QWEN3_8B, settings, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100",
                            measured=MeasuredInputs(weights_bytes=round(15.27 * GIB)))  # fmt: skip
    activation = plan.estimate.term(Term.ACTIVATION)
    assert activation is not None
    return activation


def test_the_warm_up_pass_runs_from_v0_33_on_the_serving_path() -> None:
    assert v2_warmup_path(_version("0.32.0"), "H100") is None
    assert v2_warmup_path(_version("0.33.0"), "H100")[0] == "flashinfer"  # type: ignore[index]
    assert v2_warmup_path(_version("0.34.0"), "T4")[0] == "native"  # type: ignore[index]  # SM 7.5: outside 8.0-12.1
    assert v2_warmup_path(_version("0.33.0"), "H100", {"VLLM_USE_FLASHINFER_SAMPLER": "0"})[0] == "native"  # type: ignore[index]


def test_flashinfer_s_pass_is_the_code_arithmetic() -> None:
    """2,253,651,968 B (2.10 GiB) on FlashInfer's path, above the forward (0.75 GiB); the V2 count of v0.32.0 was
    0.36 GiB, so the forward bound there. The native path's count (1.02 GiB) stays in the interval: a start whose
    FlashInfer JIT build fails samples natively."""
    assert FLASHINFER > FORWARD > GREEDY
    greedy = _activation("0.32.0")
    assert greedy.bytes == FORWARD
    flashinfer = _activation("0.33.0")
    assert flashinfer.bytes == FLASHINFER
    assert "warm-up pass" in flashinfer.basis and "flashinfer" in flashinfer.basis
    assert flashinfer.error_bytes >= FLASHINFER - NATIVE


def test_the_native_pass_where_the_launch_says_so() -> None:
    """VLLM_USE_FLASHINFER_SAMPLER=0 (the launch's own): the float32 copy masked in place, the Triton buffer and
    gumbel's blocks: 1,091,045,376 B; stated, the interval keeps no other path: it is the V2-era fit's held-out
    error alone (vllm.activation.v17, 1.760 GiB in docs/calibration.md since session 70's refit, 1.814 from session 67's; 0.956 GiB before, when
    it was also below the paths' gap), where the unstated launch's is the larger of it and the gap (1.08 GiB)."""
    native = _activation("0.33.0", "VLLM_USE_FLASHINFER_SAMPLER=0")
    assert native.bytes == NATIVE
    stated = _activation("0.33.0", "VLLM_USE_FLASHINFER_SAMPLER=1")
    assert stated.bytes == FLASHINFER and "VLLM_USE_FLASHINFER_SAMPLER=1 in the launch" in stated.basis
    fit_error = FITS["vllm.activation.v17"].error_bytes
    assert round(fit_error / GIB, 3) == 1.760  # docs/calibration.md's table
    assert stated.error_bytes == fit_error
    assert _activation("0.33.0").error_bytes == max(fit_error, FLASHINFER - NATIVE)
