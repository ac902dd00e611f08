"""vLLM's V2 model runner's profiled peak, per pipeline stage, counted from its code (`v2_profile.py`).

V2's `profile_run` (v1/worker/gpu/model_runner.py:702-735 at v0.27.1) runs the forward over `max_num_batched_tokens`
on every stage and the dummy sampler on the last only ("Only run sampler/pooler on last PP rank", :723), and the
dummy batch's sampling states are `SamplingStates.__init__`'s (temperature 0, top-k the vocabulary, top-p 1.0:
sample/states.py:17-35), so `Sampler.apply_sampling_params` returns the model-dtype logits uncopied (sampler.py:155-158,
200-216; before v0.26.0 it copies them to float32 whatever the states) and `gumbel_sample` adds an int64 and a float32 per row and 1,024-entry block (gumbel.py:215-264).

The start: Qwen3-32B at PP 2 on two RTX PRO 6000 (tests/data/cases/vllm/blog-v0271-qwen3-32b-pp2-rtxpro6000, vLLM
0.27.1, `--gpu-memory-utilization 0.426 --max-model-len 32768`, so 8,192 batched tokens and 1,024 seqs): stage 0's
lines print 30.52 GiB of weights and 6.92 GiB of KV (3,540 blocks of 16 × 131,072 B a token at its 32 layers), and the
pool, the least of both stages', is 3,540 × 16 = 56,640 tokens, so the last stage, which runs the sampler, kept at least
as many blocks: its peak is at most one block (2 MiB) plus the rounding of 6.92 (10 MiB) above stage 0's forward.
Qwen3-32B: hidden 5,120, intermediate 25,600, vocabulary 151,936, bf16.
"""

from __future__ import annotations

from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.engines.vllm.v2_profile import (
    V2_LOGITS_FLOAT32_COPY,
    V2_SAMPLER_COUNTED,
    v2_sampler_bytes,
    v2_stage_peaks,
)
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.wording import GIB, MIB
from kvtop.sources.hub import load_config_file
from tests.data_paths import CONFIGS

QWEN3_32B = load_config_file(CONFIGS / "Qwen--Qwen3-32B.json")
TOKENS, SEQS = 8192, 1024
# the forward at a decoder layer's MLP: gate-up output and SiluAndMul's output (8,192 × 3 × 25,600 × 2 B) and the
# down projection's (8,192 × 5,120 × 2 B), beside the residual and the normed input (2 × 8,192 × 5,120 × 2 B)
FORWARD = 8192 * (3 * 25600 + 5120) * 2 + 2 * 8192 * 5120 * 2  # 1,509,949,440 B = 1.41 GiB
# the sampler: bf16 logits (1,024 × 151,936 × 2 B), gumbel's blocks (1,024 × ⌈151,936 ÷ 1,024⌉ = 149 × 12 B), the
# forward's output and the sampled rows ((8,192 + 1,024) × 5,120 × 2 B)
SAMPLER = 1024 * 151936 * 2 + 1024 * 149 * 12 + (8192 + 1024) * 5120 * 2  # 407,367,680 B = 0.38 GiB
V1_SAMPLER_COPIES = 3.48  # the V1 runner's v17 fit: float32 copies of seqs × vocab × 4 B (docs/engines/vllm.md §9)


def _version(text: str) -> ResolvedVersion:
    return ResolvedVersion(text=text, source=VersionSource.FLAG, detail=f"--engine-version {text}")


def _activation(version: str, *flags: str):  # type: ignore[no-untyped-def]
    settings = parse_flags("vllm", ["--engine-version", version, "--gpu-memory-utilization", "0.426",
                                    "--max-model-len", "32768", *flags])  # fmt: skip
    plan = planned_capacity(QWEN3_32B, settings, gpu_total_bytes=97887 * MIB, gpu_name="RTXPRO6000",
                            measured=MeasuredInputs(weights_bytes=round(30.52 * GIB)))  # fmt: skip
    activation = plan.estimate.term(Term.ACTIVATION)
    assert activation is not None
    return activation


def test_the_count_is_the_code_arithmetic() -> None:
    assert v2_sampler_bytes(QWEN3_32B, TOKENS, SEQS) == SAMPLER
    peaks = v2_stage_peaks(QWEN3_32B, ParallelLayout(pp=2), TOKENS, SEQS)
    assert peaks.before_last == FORWARD
    assert peaks.last == max(FORWARD, SAMPLER) == FORWARD  # the forward binds on the last stage too


def test_the_last_stage_holds_no_more_than_the_log_allows() -> None:
    """Stage 0 (the forward alone) sized the pool's 3,540 blocks, so the last stage's peak is within 12 MiB of it: the
    count says 0 above, where the V1 runner's 3.48 float32 copies of the logits alone (1.97 GiB) would put the last
    stage 0.56 GiB above stage 0, and the pool below 3,540 blocks."""
    peaks = v2_stage_peaks(QWEN3_32B, ParallelLayout(pp=2), TOKENS, SEQS)
    assert 0 <= peaks.last - peaks.before_last <= 12 * MIB
    v1_sampler = round(V1_SAMPLER_COPIES * SEQS * 151936 * 4)
    assert v1_sampler - peaks.before_last > 12 * MIB


def test_a_v2_pipeline_start_is_charged_the_count() -> None:
    activation = _activation("0.27.1", "--pp", "2")
    assert activation.bytes == FORWARD
    assert activation.source == "assumed"  # no V2 start prints its peak
    assert "stages before the last" in activation.basis and "V2 model runner" in activation.basis
    # the V1 runner's form stays in the interval: the text model's fit stood in for the stages (2.29 GiB in session 51)
    assert activation.error_bytes >= 0.8 * GIB


def test_the_v1_runner_keeps_the_fits() -> None:
    """V2 runs listed classes from v0.22.0 (v0.21.0 is the V1 runner's); from v0.33.0 its warm-up pass is counted too
    (test_v2_sampler_warmup.py)."""
    assert not V2_SAMPLER_COUNTED.at(_version("0.21.0"))
    assert all(V2_SAMPLER_COUNTED.at(_version(v)) for v in ("0.22.0", "0.32.0", "0.33.0", "0.34.0"))
    assert "V2 model runner" not in _activation("0.21.0").basis
    assert "V2 model runner" in _activation("0.33.0").basis


def test_before_v0_26_the_sampler_holds_a_float32_copy_of_the_logits() -> None:
    """`Sampler.apply_sampling_params` copies the logits to a new float32 tensor whatever the states at v0.22.0
    (sample/sampler.py:132) to v0.25.0 (:157), beside the model-dtype logits `_dummy_sampler_run` holds; v0.26.0
    (:162-167) works in place, v0.27.1 (:155-159) copies only for processing the dummy states do not ask for."""
    copy = 1024 * 151936 * 4
    assert v2_sampler_bytes(QWEN3_32B, TOKENS, SEQS, float32_copy=True) == SAMPLER + copy
    assert [V2_LOGITS_FLOAT32_COPY.at(_version(v)) for v in ("0.22.0", "0.24.0", "0.25.0", "0.26.0", "0.27.1")] == [
        True, True, True, False, False]  # fmt: skip
    # at TP 2 the copy beside the gathered logits outweighs the gather's transient (2 + ½ copies of the bf16 logits)
    logits, hidden = 1024 * 151936 * 2, (8192 + 1024) * 5120 * 2
    gumbel = 1024 * 149 * 12
    tp2 = v2_sampler_bytes(QWEN3_32B, TOKENS, SEQS, ParallelLayout(tp=2), float32_copy=True)
    assert tp2 == logits + copy + gumbel + hidden


def test_the_v0_23_qwen3_8b_start_is_charged_the_copy_within_what_it_held() -> None:
    """The hosseinbv start (tests/data/calibration/vllm.jsonl: Qwen3-8B, vLLM 0.23.0, 'Using V2 Model Runner', H100,
    `--gpu-memory-utilization 0.3 --max-model-len 16384`: 8,192 batched tokens, 1,024 seqs) held 0.3 × 79.19 − 15.27
    − 6.98 = 1.51 GiB beside weights and KV. V2's count: bf16 logits (1,024 × 151,936 × 2 B), their float32 copy
    (× 4 B), gumbel's blocks (149 × 12 B a row) and the held hidden states ((8,192 + 1,024) × 4,096 × 2 B) = 0.94 GiB,
    above the forward (8,192 × (3 × 12,288 + 4,096) × 2 B + 2 × 8,192 × 4,096 × 2 B = 0.75 GiB); the V1 runner's 3.48
    float32 copies alone (1.96 GiB) would not fit."""
    qwen3_8b = load_config_file(CONFIGS / "Qwen--Qwen3-8B.json")
    settings = parse_flags("vllm", ["--engine-version", "0.23.0", "--gpu-memory-utilization", "0.3",
                                    "--max-model-len", "16384"])  # fmt: skip
    plan = planned_capacity(qwen3_8b, settings, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100",
                            measured=MeasuredInputs(weights_bytes=round(15.27 * GIB)))  # fmt: skip
    activation = plan.estimate.term(Term.ACTIVATION)
    assert activation is not None and "float32 copy" in activation.basis
    sampler = 1024 * 151936 * (2 + 4) + 1024 * 149 * 12 + (8192 + 1024) * 4096 * 2
    forward = 8192 * (3 * 12288 + 4096) * 2 + 2 * 8192 * 4096 * 2
    assert activation.bytes == sampler > forward
    held = 0.3 * 79.19 - 15.27 - 6.98
    assert sampler / GIB < held < V1_SAMPLER_COPIES * 1024 * 151936 * 4 / GIB


def test_at_tp_2_the_logits_gather_holds_two_copies_and_the_slice() -> None:
    """CudaCommunicator.all_gather (cuda_communicator.py:355-389 at v0.27.1) holds the rank's vocab slice, the gathered
    output and its movedim'd reshape at once: (2 + ½) × 1,024 × 151,936 × 2 B at TP 2, above the sampling's one copy
    and gumbel's blocks."""
    logits = 1024 * 151936 * 2
    hidden = (8192 + 1024) * 5120 * 2
    assert v2_sampler_bytes(QWEN3_32B, TOKENS, SEQS, ParallelLayout(tp=2)) == 2 * logits + logits // 2 + hidden
