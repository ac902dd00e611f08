"""Which top-k/top-p path vLLM's profiled sampler takes decides most of its activation peak, and before v0.11.1 the
install decides it: V1 sampled with FlashInfer whenever FlashInfer was importable (vllm#11394), an optional install
(vllm#21959), until vllm#26859 made it opt-in; vllm#40376 made it the default again.

The figures are real starts' (tests/data/calibration/vllm.jsonl, dennislee22/vLLM-benchmarking): Qwen2-7B-Instruct
(Qwen2.5-7B-Instruct's tensors) on an A100 80GB, vLLM 0.10.1.1, `--max-model-len 16384`, 2,048 batched tokens and
256 seqs. The start that printed `Using FlashInfer for top-p & top-k sampling.` at utilisation 0.25 left
0.25 × 79.15 − 14.2488 − 5.01 = 0.53 GiB beside weights and KV (79.15 GiB: the A100 80GB's CUDA total, gpus.jsonl);
the start on the native path (two A100 40GB, TP 2) left 0.5 × 39.43 − 7.1217 − 11.03 = 1.56 GiB.
"""

from __future__ import annotations

from benchmarks.calibration.corpus import load_all
from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.calibration import FITS
from kvtop.domain.engines.vllm.calibration_activation import activation_estimate
from kvtop.domain.engines.vllm.sampler_path import PROFILE_WARMS_NATIVE, profiled_sampler_path, sampler_path
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.launch_line import parse_launch_command
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_config_file
from tests.data_paths import CONFIGS

QWEN2_7B = CONFIGS / "Qwen--Qwen2.5-7B-Instruct.json"
FLASHINFER_BESIDE_WEIGHTS = (0.25 * 79.15 - 14.2488 - 5.01) * GIB
NATIVE_BESIDE_WEIGHTS = (0.5 * 39.43 - 7.1217 - 11.03) * GIB
LOGITS = 256 * 152064 * 4  # one float32 copy of 256 seqs' logits over Qwen2's vocabulary


def _activation(version: str):  # type: ignore[no-untyped-def]
    model = load_config_file(QWEN2_7B)
    settings = parse_flags("vllm", ["--engine-version", version, "--max-model-len", "16384",
                                    "--gpu-memory-utilization", "0.25"])  # fmt: skip
    plan = planned_capacity(model, settings, gpu_total_bytes=gpu_total_bytes("A100-80GB"), gpu_name="A100-80GB",
                            measured=MeasuredInputs(weights_bytes=round(14.2488 * GIB)))  # fmt: skip
    term = plan.estimate.term(Term.ACTIVATION)
    assert term is not None and term.source == "calibrated"
    return term


def test_an_install_dependent_release_spans_both_sampler_paths() -> None:
    activation = _activation("0.10.1.1")
    assert activation.bytes > FLASHINFER_BESIDE_WEIGHTS  # the fits count the native path's copies
    # the interval reaches what the FlashInfer start left, below the figure only (session 72: FlashInfer's path only
    # holds fewer copies than the native centre, so the side above keeps the fit's own error)
    assert activation.bytes - activation.error_below_bytes < FLASHINFER_BESIDE_WEIGHTS
    assert activation.error_below_bytes > 5 * LOGITS  # several copies of the logits wide
    assert activation.error_bytes < LOGITS  # above: the fit's alone (vllm.activation.v1's 0.02 GiB)
    assert "not known before the start" in activation.basis


def test_a_release_where_the_path_is_known_keeps_the_fits_error() -> None:
    # FlashInfer's sampler opt-in (vllm#26859): the native path at defaults
    activation = _activation("0.13.0")
    # its interval is the V1 fit's held-out error, not widened by the logits copies: the A100-80GB is inside the fit's
    # support (a GPU model the fit's rows ran), so no `support.py` widening either (the fit's error itself is the
    # corpus's, recomputed by run.py and checked by tests/test_calibration_corpus.py)
    fit = FITS["vllm.activation.v1"]
    assert "A100-80GB" in fit.gpus
    assert activation.error_bytes == fit.error_bytes > 0
    assert activation.beyond is None
    assert "not known before the start" not in activation.basis
    # near what the native start left beside its weights
    assert activation.bytes < NATIVE_BESIDE_WEIGHTS + LOGITS


# A start of a release that serves on FlashInfer's sampler at its defaults (vllm#40376, from v0.21.0: sampler_path.py):
# Qwen3-14B-AWQ at TP 2 on two L4 (compute capability 8.9), vLLM 0.28.0, `vllm serve … --tensor-parallel-size 2`
# (search-index id 60168338778, tests/data/calibration/vllm.jsonl): '14.38 GiB (188,512 tok)' of KV a rank.
QWEN3_14B_AWQ = CONFIGS.parent / "calibration" / "configs" / "Qwen--Qwen3-14B-AWQ.RECONSTRUCTED.json"
L4_TP2_KV = 14.38 * GIB


def _l4_plan(gpu: str | None, version: str = "0.28.0"):  # type: ignore[no-untyped-def]
    model = load_config_file(QWEN3_14B_AWQ)
    settings = parse_flags("vllm", ["--engine-version", version, "--tensor-parallel-size", "2"])
    return planned_capacity(model, settings, gpu_total_bytes=gpu_total_bytes("L4"), gpu_name=gpu)


# v0.21.0-v0.23.x run this quantized Qwen3 on the V1 runner (v0.22.0-v0.23.x list Qwen3ForCausalLM for V2 only
# unquantized: eras.LISTED_V2_DENSE_ONLY_ERAS), whose dummy sampler sets top-k and top-p (the path matters); the
# start's own v0.28.0 runs it on V2, whose dummy batch asks for neither (v2_profile.py)
V1_RUNNER_FLASHINFER = "0.23.0"


def test_a_release_that_serves_on_flashinfers_sampler_profiles_the_native_path_too() -> None:
    """From v0.21.0 the V1 runner's `_dummy_sampler_run` samples a second time with a per-request generator, which
    FlashInfer's forward_cuda hands to forward_native (gpu_model_runner.py:5743-5765, topk_topp_sampler.py:143 at
    v0.21.0): the profile's peak is the native path's even where the server samples with FlashInfer."""
    version = ResolvedVersion(text=V1_RUNNER_FLASHINFER)
    assert sampler_path(version, "L4")[0] == "flashinfer"
    assert profiled_sampler_path(version, "L4", load_config_file(QWEN3_14B_AWQ))[0] == "native"
    activation = _l4_plan("L4", V1_RUNNER_FLASHINFER).estimate.term(Term.ACTIVATION)
    assert activation is not None and PROFILE_WARMS_NATIVE in activation.basis
    assert "taken off" not in activation.basis
    # the start itself (v0.28.0, V2): within 5 % of the log's KV a rank, and the interval holds it
    plan = _l4_plan("L4")
    assert abs(plan.ledger.engine.kv_budget_bytes / L4_TP2_KV - 1) < 0.05
    assert plan.kv_budget_min_bytes <= L4_TP2_KV <= plan.kv_budget_max_bytes


def test_from_v0_21_0_the_gpu_does_not_change_the_profiled_path() -> None:
    """A named GPU (FlashInfer's serving path) and an unnamed one (the path not known) profile alike: the warm-up
    runs the native path either way, nothing taken off and the interval not widened for FlashInfer's path. They
    differ by at most the Triton kernel's cached rows, counted where the GPU's SMs are known (the L4's 58 × Qwen3's
    151,936-token vocabulary × 4 B, sampler_peak.triton_buffer_bytes)."""
    named = _l4_plan("L4", V1_RUNNER_FLASHINFER).estimate.term(Term.ACTIVATION)
    unnamed = _l4_plan(None, V1_RUNNER_FLASHINFER).estimate.term(Term.ACTIVATION)
    assert named is not None and unnamed is not None
    assert "not known before the start" not in unnamed.basis and "taken off" not in unnamed.basis
    assert 0 <= named.bytes - unnamed.bytes <= 58 * 151936 * 4
    # both widened by what a cold compile's copy of the table holds above their count (session 70,
    # compile_benchmark.with_v1_compile_copy: 151,936 × 4,096 × 2 B less the peak), so error + peak is one figure
    assert named.error_bytes + named.bytes == unnamed.error_bytes + unnamed.bytes


def _stated(env: str):  # type: ignore[no-untyped-def]
    """The Qwen2-7B A100 launch at v0.10.1.1 with VLLM_USE_FLASHINFER_SAMPLER stated on its command line."""
    settings = parse_launch_command(f"{env} vllm serve Qwen/Qwen2-7B-Instruct --max-model-len 16384 "
                                    "--gpu-memory-utilization 0.25")  # fmt: skip
    assert settings is not None
    settings = settings.model_copy(update={"engine_version": "0.10.1.1"})
    plan = planned_capacity(load_config_file(QWEN2_7B), settings, gpu_total_bytes=gpu_total_bytes("A100-80GB"),
                            gpu_name="A100-80GB", measured=MeasuredInputs(weights_bytes=round(14.2488 * GIB)))  # fmt: skip
    term = plan.estimate.term(Term.ACTIVATION)
    assert term is not None
    return term


def test_the_launchs_flashinfer_sampler_setting_decides_the_path() -> None:
    """`VLLM_USE_FLASHINFER_SAMPLER=1 vllm serve …` takes FlashInfer's path where the install would decide (v0.10.1.1):
    the peak near the 0.53 GiB its FlashInfer start left beside weights and KV; `=0` the native path, the 1.56 GiB
    start's, with the fit's own error."""
    either, flashinfer, native = _activation("0.10.1.1"), _stated("VLLM_USE_FLASHINFER_SAMPLER=1"), _stated(
        "VLLM_USE_FLASHINFER_SAMPLER=0")
    assert "VLLM_USE_FLASHINFER_SAMPLER=1 in the launch" in flashinfer.basis
    assert abs(flashinfer.bytes - FLASHINFER_BESIDE_WEIGHTS) < abs(either.bytes - FLASHINFER_BESIDE_WEIGHTS)
    assert native.bytes == either.bytes and native.error_bytes < either.error_below_bytes
    assert native.error_bytes == either.error_bytes  # the unknown path widens only below the figure


# FlashInfer's sampler became the default at v0.21.0, not v0.20.0: the wheels' envs.py defaults
# VLLM_USE_FLASHINFER_SAMPLER to None at v0.20.0 / v0.20.1 (envs.py:716-720), so topk_topp_sampler.py:39-62 samples
# natively, and to True at v0.21.0 (envs.py:726-730). A v0.20.1 start on an L4 (search-index id 58922366826,
# tests/data/calibration/vllm.jsonl: Triton's vLLM backend, Qwen2.5-1.5B-Instruct, utilisation 0.70, max_model_len
# 2048) printed 'Model loading … 2.89 GiB' and 427,104 tokens of KV (11.4 GiB at 28,672 B a token).
QWEN25_1_5B = CONFIGS.parent / "calibration" / "configs" / "Qwen--Qwen2.5-1.5B-Instruct.RECONSTRUCTED.json"
L4_V0201_TOKENS = 427_104


def _l4_qwen25_plan(version: str):  # type: ignore[no-untyped-def]
    settings = parse_flags("vllm", ["--engine-version", version, "--gpu-memory-utilization", "0.70",
                                    "--max-model-len", "2048"])  # fmt: skip
    return planned_capacity(load_config_file(QWEN25_1_5B), settings, gpu_total_bytes=gpu_total_bytes("L4"),
                            gpu_name="L4", measured=MeasuredInputs(weights_bytes=round(2.89 * GIB)))  # fmt: skip


def test_flashinfers_sampler_is_the_default_from_v0_21_0_not_v0_20() -> None:
    """The serving path turns to FlashInfer at v0.21.0 (envs.py:726-730), the profiled one does not: v0.21.0's dummy
    sampler warms the native path too, so its peak is not lowered below v0.20.1's."""
    assert sampler_path(ResolvedVersion(text="0.20.1"), "L4")[0] == "native"
    assert sampler_path(ResolvedVersion(text="0.21.0"), "L4")[0] == "flashinfer"
    v0201, v0210 = _l4_qwen25_plan("0.20.1"), _l4_qwen25_plan("0.21.0")
    native, warmed = v0201.estimate.term(Term.ACTIVATION), v0210.estimate.term(Term.ACTIVATION)
    assert native is not None and warmed is not None
    assert "FlashInfer's top-k/top-p sampler" not in native.basis and "not known before the start" not in native.basis
    assert PROFILE_WARMS_NATIVE in warmed.basis and PROFILE_WARMS_NATIVE not in native.basis
    assert warmed.bytes >= native.bytes
    # the v0.20.1 start's tokens within 5 % (the FlashInfer path's central figure missed by +6.2 %), inside the interval
    assert abs(v0201.ledger.token_capacity / L4_V0201_TOKENS - 1) < 0.05
    assert v0201.token_capacity_min <= L4_V0201_TOKENS <= v0201.token_capacity_max


MISTRAL_V011 = "llmd-v011-mistral-small-3.2-24b"


def test_llm_d_planners_text_starts_ran_a_native_release_and_its_v0_11_0_image_start_flashinfers() -> None:
    """llm-d-planner's sweep (tests/data/calibration/SOURCES.md, session 51): its seven text starts ran on
    `vllm/vllm-openai:latest` in January 2026 (llm-d-benchmark beb38b5d), so the corpus resolves their release from
    2026-01-23 (v0.14.0 or older), a native-sampler release; their logs print 9.6-9.9 copies of 1,024 seqs × vocab ×
    4 B (Llama-3.1-8B: 4.76 GiB ÷ (1,024 × 128,256 × 4 B = 0.489 GiB) = 9.7), the sort-based path's. The
    Mistral-Small-3.2 start ran the v0.11.0 image, which installs FlashInfer, and printed 2.12 GiB; v0.11.0's
    FlashInfer path holds (gpu_model_runner.py:3183-3218, topk_topp_sampler.py:256-292) the bf16 logits (½ copy),
    the float32 copy, top_k_mask_logits' masked copy and the probabilities (FlashInfer 0.3.1
    sampling.py:979-982, :374): 3.5 × 1,024 × 131,072 × 4 B = 1.75 GiB,
    beside the forward's output and the dummy rows ((8,192 + 2 × 1,024) × 5,120 × 2 B = 0.098 GiB) and the encoder
    cache of two images, each expanded to the 8,192-token budget (2 × 8,192 × 5,120 × 2 B = 0.156 GiB), and the two
    returned 3,025-row outputs the expanding loop's variable still holds (gpu_model_runner.py:3377, rebound at :3397:
    2 × 3,025 × 5,120 × 2 B = 0.058 GiB): 2.06 GiB.
    The native path's 9.7 copies would be 4.85 GiB: a plan that cannot see the install keeps v0.11.0 'either'; the
    record carries its image (llm-d-benchmark 5977e162's template), so its plan samples with FlashInfer."""
    records = {record.id: record for record in load_all()["vllm"]}
    text = [record for key, record in records.items() if key.startswith("llmd-v011-") and key != MISTRAL_V011]
    assert len(text) == 7
    for record in text:
        assert record.version.text == "0.14.0" and record.version.approximate
        assert sampler_path(record.version, "H100")[0] == "native"
        model = record.model
        assert model is not None
        copies = record.figures["activation"] / (1024 * model.vocab_size * 4)
        assert 9.5 <= copies <= 10.0, record.id
    mistral = records[MISTRAL_V011]
    assert mistral.version.text == "0.11.0" and sampler_path(mistral.version, "H100")[0] == "either"
    logits = 1024 * 131072 * 4
    counted = 3.5 * logits + (8192 + 2 * 1024) * 5120 * 2 + 2 * 8192 * 5120 * 2 + 2 * 3025 * 5120 * 2
    assert abs(counted / GIB - 2.06) < 0.01
    assert abs(mistral.figures["activation"] / GIB - counted / GIB) < 0.1  # 2.12 printed
    assert 9.7 * logits / GIB > 2 * mistral.figures["activation"] / GIB  # the native path's copies: 4.85 GiB
    # the plan takes the text model's fit on FlashInfer's path (the image's: its copies beyond one off, no lower than
    # the forward's MLP transient) plus the encoder profile's two images, expanded to the budget (encoder_profile.py),
    # and says so; it lands within 0.2 GiB of the 2.12 printed, and its interval holds it
    assert mistral.settings.image == "vllm/vllm-openai:v0.11.0"
    planned = activation_estimate(mistral.inputs(), FITS)
    assert "the text model's fit" in planned.basis and "encoder profile keeps 2 image items" in planned.basis
    assert "FlashInfer's top-k/top-p sampler" in planned.basis
    assert abs(planned.bytes - mistral.figures["activation"]) < 0.2 * GIB
    assert planned.bytes - planned.error_bytes <= mistral.figures["activation"] <= planned.bytes + planned.error_bytes


def test_flashinfers_sampler_takes_a_t4_while_its_backend_does() -> None:
    """FlashInfer's sampler is taken where FlashInferBackend.supports_compute_capability passes (v0.21.0
    topk_topp_sampler.py:39-66), whose floor is sm75 at v0.20.0-v0.23.x (flashinfer.py:409-412 at v0.21.0, :407 at
    v0.23.0) and sm80 from v0.24.0 (:426-434, flashinfer#3620): a T4 (7.5) samples with FlashInfer at v0.21.0-v0.23.x,
    natively from v0.24.0 (final reader 1, session 71: once 8.0-12.1 in every release)."""
    for release in ("0.21.0", "0.22.0", "0.23.0"):
        assert sampler_path(ResolvedVersion(text=release), "T4")[0] == "flashinfer"
    path, why = sampler_path(ResolvedVersion(text="0.24.0"), "T4")
    assert path == "native" and "compute capability 7.5 is outside 8.0–12.1 at this release" in why
    assert sampler_path(ResolvedVersion(text="0.24.0"), "A100-80GB")[0] == "flashinfer"
