"""vLLM's profiled sampler from v0.17.0, counted from its code (`sampler_peak.py`): the model-dtype logits, their
float32 copy, the probabilities and the exponential noise (3.5 × seqs × vocab × 4 B in bf16), and the forward's output.

The figures are llm-d-planner's v0.19.0 starts on one H100 at `vllm serve`'s defaults there (8,192 tokens, 1,024
seqs; tests/data/calibration/vllm.jsonl, accuracy/results/v0.19.0 of llm-d-incubation/llm-d-planner at 56dc5b7):
`PyTorch activation peak` 1.89 GiB for Llama-3.1-8B (vocabulary 128,256, hidden 4,096), 2.21 for Qwen2.5-7B (152,064,
3,584) and 3.99 for Gemma-3-27B (262,208, 5,376), each printed to 0.01 GiB.
"""

from __future__ import annotations

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.engines.vllm import calibration
from kvtop.domain.engines.vllm.calibration_activation import activation_features
from kvtop.domain.engines.vllm.sampler_peak import (
    counted_sampler_bytes,
    logits_copies,
    moe_workspace_bytes,
    sampler_copies_bytes,
    triton_buffer_bytes,
)
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_config_file
from tests.data_paths import CONFIGS

LLAMA = load_config_file(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")
QWEN = load_config_file(CONFIGS / "Qwen--Qwen2.5-7B-Instruct.json")
QWEN72 = load_config_file(CONFIGS / "Qwen--Qwen2.5-72B.json")
GEMMA = load_config_file(CONFIGS / "google--gemma-3-27b-it.json")
QWEN3_MOE = load_config_file(CONFIGS / "Qwen--Qwen3-30B-A3B.json")
MIXTRAL = load_config_file(CONFIGS / "mistralai--Mixtral-8x7B-v0.1.json")
TOKENS, SEQS = 8192, 1024
PRINTED = 0.005 * GIB  # a figure printed to 0.01 GiB
LOGGED = {"llama": 1.89 * GIB, "qwen": 2.21 * GIB, "gemma": 3.99 * GIB}


def _version(text: str) -> ResolvedVersion:
    return ResolvedVersion(text=text, source=VersionSource.FLAG, detail=f"--engine-version {text}")


def _counted(model, text: str = "0.19.0", gpu: str | None = "H100") -> int | None:  # type: ignore[no-untyped-def]
    return counted_sampler_bytes(model, ParallelLayout(), _version(text), gpu, TOKENS, SEQS)


def test_a_16_bit_model_holds_three_and_a_half_copies() -> None:
    assert logits_copies(LLAMA) == 0.5 + 1 + 1 + 1  # bf16 logits, float32 copy, probabilities, noise
    assert (
        logits_copies(LLAMA.model_copy(update={"dtype_bytes": 4})) == 1 + 1 + 1
    )  # no cast of float32 logits


def test_the_count_is_the_code_arithmetic() -> None:
    """The copies, the Triton kernel's cached buffer (min(SMs, seqs) float32 vocab rows: an H100's 132 SMs) and the
    hidden states."""
    expected = round(3.5 * SEQS * 128_256 * 4) + 132 * 128_256 * 4 + (TOKENS + SEQS) * 4_096 * 2
    assert _counted(LLAMA) == expected


def test_the_kernel_buffer_is_one_row_per_program() -> None:
    """apply_top_k_top_p_triton's `logits.new_empty((size, vocab))` with min(SMs, seqs) programs: an A100's 108 SMs,
    fewer seqs than SMs one row each, a GPU of unknown SMs none (the count stays a floor)."""
    assert triton_buffer_bytes(QWEN, "H100", SEQS) == 132 * 152_064 * 4
    assert triton_buffer_bytes(QWEN, "A100-80GB", SEQS) == 108 * 152_064 * 4
    assert triton_buffer_bytes(QWEN, "H100", 64) == 64 * 152_064 * 4
    assert triton_buffer_bytes(QWEN, "MI300X", SEQS) == 0


def test_the_72b_peak_is_the_same_at_tp_2_and_4() -> None:
    """Qwen2.5-72B (Kimi-Dev-72B) printed a 2.29 GiB activation peak at TP 2 and at TP 4 (llm-d-planner v0.19.0): the
    sampler's rows are whole-vocab on every rank and the forward's output is hidden-wide, so the count does not change
    with TP; with the kernel's buffer it is 2.25 GiB, within 0.05 of the log, where 2.17 without it missed by 0.12."""
    counts = [counted_sampler_bytes(QWEN72, ParallelLayout(tp=tp), _version("0.19.0"), "H100", TOKENS, SEQS)
              for tp in (2, 4)]  # fmt: skip
    assert counts[0] == counts[1] is not None
    buffer = triton_buffer_bytes(QWEN72, "H100", SEQS)
    assert counts[0] is not None and counts[0] <= 2.29 * GIB + PRINTED
    assert 2.29 * GIB - counts[0] < 0.05 * GIB < 2.29 * GIB - (counts[0] - buffer)


def test_the_count_grows_with_the_vocabulary_as_the_logs_do() -> None:
    """Between Llama-3.1-8B and Qwen2.5-7B the count grows by 3.5 × 1,024 × 23,808 × 4 B less the smaller hidden
    states: 0.31 GiB, where the logs grew by 2.21 − 1.89 = 0.32 (± 0.01 of their printing)."""
    llama, qwen = _counted(LLAMA), _counted(QWEN)
    assert llama is not None and qwen is not None
    assert abs((qwen - llama) - (LOGGED["qwen"] - LOGGED["llama"])) <= 2 * PRINTED + 0.01 * GIB


def test_the_count_is_below_every_logged_peak() -> None:
    """What the count leaves out (an encoder cache, the allocator's rounding) only adds."""
    for model, name in ((LLAMA, "llama"), (QWEN, "qwen"), (GEMMA, "gemma")):
        counted = _counted(model)
        assert counted is not None
        assert counted <= LOGGED[name] + PRINTED
        assert LOGGED[name] - counted < 0.5 * GIB


def test_the_count_holds_only_where_the_profile_takes_the_triton_path() -> None:
    assert _counted(LLAMA, "0.16.0") is None  # the sort-based path, left to the fits
    assert _counted(LLAMA, "0.11.0") is None  # FlashInfer's or the native path: the install decides
    # the launch's VLLM_USE_FLASHINFER_SAMPLER=1 before v0.21.0: the profile samples once, on FlashInfer's path
    stated = {"VLLM_USE_FLASHINFER_SAMPLER": "1"}
    assert counted_sampler_bytes(LLAMA, ParallelLayout(), _version("0.19.0"), "H100", TOKENS, SEQS, stated) is None
    # from v0.21.0 FlashInfer's sampler serves on an H100, but `_dummy_sampler_run` warms the native path after it
    # (sampler_path.NATIVE_WARMUP_ERAS): the count holds, as on a V100 (compute capability 7.0, native anyway), and
    # whatever the launch states
    # (v0.22.x: Llama still on the V1 runner, listed for V2 from v0.23.0: runner_eras.DEFAULT_V2_ARCHITECTURES_ERAS)
    h100 = _counted(LLAMA, "0.22.0")
    assert h100 is not None and h100 == _counted(LLAMA, "0.22.0", "V100-32GB") - 80 * 128_256 * 4 + 132 * 128_256 * 4
    assert counted_sampler_bytes(LLAMA, ParallelLayout(), _version("0.22.0"), "H100", TOKENS, SEQS, stated) == h100


def _inputs(model) -> CalibrationInputs:  # type: ignore[no-untyped-def]
    settings = parse_flags("vllm", ["--engine-version", "0.19.0", "--max-model-len", "8192",
                                    "--gpu-memory-utilization", "0.95"])  # fmt: skip
    return CalibrationInputs(model=model, settings=settings, layout=ParallelLayout(), gpu_name="H100",
                             gpu_total_bytes=gpu_total_bytes("H100"), version=_version("0.19.0"),
                             weights_bytes=0, context_length=8192)  # fmt: skip


def test_an_era_without_a_fit_takes_the_count_not_two_gib() -> None:
    """Fits that hold no v0.17+ log (a blind plan of a source that is the era's only one) leave the peak to the count:
    Gemma-3-27B's 3.72 GiB against 3.99 logged, where 2 GiB assumed missed by half; with what the encoder profile
    keeps through the text run (encoder_profile.py: 31 images of 896 px, 256 embeddings of 5,376 each, and their
    pixels, bf16: 31 × 256 × 5,376 × 2 + 31 × 3 × 896² × 2 B = 0.22 GiB), 3.94."""
    fits = {key: fit for key, fit in calibration.FITS.items() if key != "vllm.activation.v17"}
    activation = next(t for t in calibration.terms(_inputs(GEMMA), fits) if t.term is Term.ACTIVATION)
    assert activation.source == "assumed"
    counted = _counted(GEMMA)
    assert counted is not None
    assert activation.bytes == counted + 31 * 256 * 5376 * 2 + 31 * 3 * 896**2 * 2
    assert abs(activation.bytes - LOGGED["gemma"]) < abs(2 * GIB - LOGGED["gemma"])


def test_the_fit_never_charges_less_than_the_count() -> None:
    """Gemma-3's vocabulary makes the count exceed the v17 fit's text form (multimodal: the text model's fit)."""
    fit = calibration.FITS["vllm.activation.v17"]
    activation = next(t for t in calibration.terms(_inputs(GEMMA)) if t.term is Term.ACTIVATION)
    counted = _counted(GEMMA)
    assert counted is not None
    kept = 31 * 256 * 5376 * 2 + 31 * 3 * 896**2 * 2  # the encoder profile's images (encoder_profile.py)
    if fit.predict(activation_features(_inputs(GEMMA), GEMMA)) < counted:
        assert activation.bytes == counted + kept
    assert activation.bytes >= counted + kept


def test_an_unquantized_moe_keeps_its_fused_experts_workspaces() -> None:
    """TritonExperts.workspace_shapes (M, topk, max(I, K)) and (M, topk, max(2I, K)), bf16, kept by the
    WorkspaceManager: Qwen3-30B-A3B (8 of 128 experts, intermediate 768, hidden 2,048) at 8,192 tokens, TP 1; Mixtral
    (2 of 8, intermediate 14,336 over TP 2, hidden 4,096). Its v0.19.0 starts printed 2.68 and 1.21 GiB."""
    assert moe_workspace_bytes(QWEN3_MOE, ParallelLayout(), TOKENS, None) == TOKENS * 8 * (2048 + 2048) * 2
    assert moe_workspace_bytes(MIXTRAL, ParallelLayout(tp=2), TOKENS, None) == TOKENS * 2 * (7168 + 14336) * 2
    assert moe_workspace_bytes(LLAMA, ParallelLayout(), TOKENS, None) == 0


def test_under_expert_parallel_each_rank_runs_whole_experts() -> None:
    """vLLM's FusedMoEParallelConfig.make, EP on: `tp_size=1` for the experts ('each device owns a set of experts
    fully', config.py at v0.13.0 and v0.33.0), so Mixtral at TP 2 with --enable-expert-parallel (EP 2) holds
    intermediate_size_per_partition = 14,336, not 7,168: (M, topk, max(14,336, 4,096)) + (M, topk, max(28,672, 4,096))."""
    assert moe_workspace_bytes(MIXTRAL, ParallelLayout(tp=2, ep=2), TOKENS, None) == TOKENS * 2 * (14336 + 28672) * 2
    for model, layout, logged in ((QWEN3_MOE, ParallelLayout(), 2.68), (MIXTRAL, ParallelLayout(tp=2), 1.21)):
        counted = counted_sampler_bytes(model, layout, _version("0.19.0"), "H100", TOKENS, SEQS)
        assert counted is not None
        without = counted - moe_workspace_bytes(model, layout, TOKENS, None)
        # the workspaces close most of the gap
        assert abs(counted - logged * GIB) < abs(without - logged * GIB)
        assert counted <= logged * GIB + PRINTED


def test_the_kernel_buffer_rounds_its_rows_to_a_power_of_two() -> None:
    """`size = min(next_power_of_2(NUM_PROGRAMS), num_sm)` (topk_topp_triton.py:999 at v0.17.0, :1686 at v0.30.0):
    48 seqs on an H100 take 64 rows, 200 on an A100 its 108 SMs, one seq one row."""
    assert triton_buffer_bytes(QWEN, "H100", 48) == 64 * 152_064 * 4
    assert triton_buffer_bytes(QWEN, "A100-80GB", 200) == 108 * 152_064 * 4
    assert triton_buffer_bytes(QWEN, "H100", 1) == 1 * 152_064 * 4


def test_below_eight_seqs_v0_17_to_v0_29_sort_with_torch() -> None:
    """Below 8 rows `apply_top_k_top_p` sorts with torch (topk_topp_sampler.py:251 at v0.17.0, :360 at v0.29.0):
    bf16 logits (0.5) and their float32 copy (1) beside the sorted values (1), int64 indices (2), the two boolean
    masks (0.25 each) and the sorted probabilities (1) = 6 copies of seqs × vocab × 4 B, no kernel buffer; from
    v0.30.0 the kernel takes every row count (:374): 3.5 copies and a 4-row buffer (4 programs, a power of two)."""
    seqs, tokens = 4, 2048
    hidden = (tokens + seqs) * 4_096 * 2
    row = 128_256 * 4
    for text in ("0.17.0", "0.20.0"):  # the V1 runner's profile (Llama-3.1-8B runs V2 from v0.24.0)
        assert counted_sampler_bytes(LLAMA, ParallelLayout(), _version(text), "H100", tokens, seqs) == (
            round(6 * seqs * row) + hidden
        )
    for text in ("0.25.1", "0.29.0"):
        assert sampler_copies_bytes(LLAMA, _version(text), "H100", seqs) == round(6 * seqs * row)
    assert sampler_copies_bytes(LLAMA, _version("0.30.0"), "H100", seqs) == round(3.5 * seqs * row) + 4 * row
    # a float32 model has no cast: 1 + 4.5 copies
    assert sampler_copies_bytes(LLAMA.model_copy(update={"dtype_bytes": 4}), _version("0.17.0"), "H100", seqs) == (
        round(5.5 * seqs * row)
    )
    # at 8 seqs v0.17.0 takes the kernel: 3.5 copies and 8 rows
    assert counted_sampler_bytes(LLAMA, ParallelLayout(), _version("0.17.0"), "H100", tokens, 8) == (
        round(3.5 * 8 * row) + 8 * row + (tokens + 8) * 4_096 * 2
    )


def test_an_unfitted_peak_says_the_sort_paths_copies_below_eight_seqs() -> None:
    """The basis words read the copies the bytes are counted from (`sampler_peak.sampler_copies`): at 4 seqs v0.19.0
    sorts with torch (topk_topp_sampler.py:251 at v0.17.0), 0.5 + 1 + 4.5 = 6 copies of 4 × 128,256 × 4 B; at 1,024
    the kernel's 3.5."""
    fits = {key: fit for key, fit in calibration.FITS.items() if key != "vllm.activation.v17"}
    for seqs, copies in ((4, "6"), (1024, "3.5")):
        settings = parse_flags("vllm", ["--engine-version", "0.19.0", "--max-model-len", "8192",
                                        "--max-num-seqs", str(seqs)])  # fmt: skip
        inputs = _inputs(LLAMA).model_copy(update={"settings": settings})
        activation = next(t for t in calibration.terms(inputs, fits) if t.term is Term.ACTIVATION)
        assert f"the sampler's {copies} copies of {seqs:,} seqs × 128,256 × 4 B" in activation.basis


def test_the_two_sort_counts_are_named_apart() -> None:
    # session 70: one name held two counts. V1's torch top-k/top-p (v1/sample/ops/topk_topp_sampler.py:279-299 at
    # v0.17.0) holds 1 (sorted float32) + 2 (int64 indices) + 0.25 + 1 (probabilities) + 0.25 = 4.5 copies; V0's
    # `logits.sort` from 128 rows 0.5 + 1 + 3 + 2 + 3 = 9.5 (v0_profile.py's reading of SortStable.cu)
    from kvtop.domain.engines.vllm import sampler_peak, spec_methods, v0_profile

    assert sampler_peak.TORCH_TOPK_TOPP_COPIES == 4.5 and not hasattr(sampler_peak, "SORT_COPIES")
    assert v0_profile.V0_SEGMENTED_SORT_COPIES == 9.5 and not hasattr(v0_profile, "SORT_COPIES")
    assert v0_profile.sort_sampler_copies(128) == 9.5 and v0_profile.sort_sampler_copies(127) == 8
    assert spec_methods.EAGLE3 == "eagle3" and spec_methods.EAGLE3 in spec_methods.V0_33
