"""The PyTorch backend's assumed terms by their mechanism (docs/engines/trtllm.md §19, §20; sessions 50–51, #27).

* Its context before the model: issue 5872's start (Qwen3-235B-A22B-FP8 at TP 8 on H200s, TensorRT-LLM 1.0.0rc1,
  tests/data/cases/trtllm/trtllm-5872-qwen3-235b-kv-not-created) printed `Total GPU memory (GiB): 140.06` and
  `Model: 139.55 / 110.70` (py_executor_creator.py's free memory before and after each component): 0.51 GiB taken
  before the model, at TP 8, where the engines' assumption (0.75 GiB + 0.75 per doubling) said 3.00. The NCCL of
  its TP group comes up with the model: its 0.75 GiB per doubling is charged to the profiled non-torch term.
* Its activation peak (§20, §23): the profiling run is a context batch of max_num_tokens, run after the CUDA graphs
  and the autotuner (the logs print `Creating CUDA graph instances` before `Memory used after loading model weights`),
  so the printed activation is that forward alone: its MLP transient, tokens × (3 × intermediate + hidden) × 2 B
  (routed experts × the same for a MoE), the decoder layer's residual and normed input held while the MLP runs
  (2 × tokens × hidden × 2 B; an FP8 per-tensor model's quantized down-projection input, tokens × intermediate × 1 B,
  beside them), and one float32 logits row per dummy request.
* What else the peak holds (§20): read off faradawn/bench3's 1.2.0rc4 start (logs/trtllm-serve-egine.log at 64ae4f53,
  Meta-Llama-3-8B-Instruct on an H200, TP 1, `--max_num_tokens 1024 --max_seq_len 1024`), whose profiling lines are:
  `Memory used after loading model weights (inside torch) …: 15.06 GiB`, `(outside torch) …: 2.52 GiB`,
  `Memory dynamically allocated during inference (inside torch) …: 0.14 GiB`, `Memory used outside torch (e.g., NCCL
  and CUDA graphs) …: 2.55 GiB`, `Peak memory … (torch + non-torch): 17.76 GiB, … tmp kv_mem 0.13 GiB` and
  `Use 14.96 GB for model weights`.
"""

from __future__ import annotations

from benchmarks.calibration.corpus import load
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.trtllm.calibration import terms

GIB = 1 << 30
RECORDS = {record.id: record for record in load("trtllm")}
TP8 = "case-trtllm-5872-qwen3-235b-fp8-h200-tp8"
BENCH = "trtllm-issue6294-llama-3.1-8b-fp8-h100-bench"
FARADAWN = "faradawn-bench3-llama-3-8b-h200-trtllm-120rc4-pytorch"
SPARK = "case-trtllm-dgxspark-gpt-oss-120b"  # TensorRT-LLM 1.1.0rc3; its activation line is inside torch
SRO_SA = "sro-sa-tinyllama-1.1b-rtx6000ada-trtllm-110-pytorch"
RTX5060TI = "file44114613687-trtllm-qwen3-8b-fp8-5060ti"


def _by_term(record_id: str) -> dict[Term, tuple[int, int]]:
    found = terms(RECORDS[record_id].inputs())
    return {estimate.term: (estimate.bytes, estimate.error_bytes) for estimate in found}


def test_the_context_before_the_model_holds_no_nccl_and_holds_issue_5872() -> None:
    """One process's CUDA context by the H200's 132 SMs (cuda_context.py, docs/engines/trtllm.md §22) holds the 0.51
    GiB issue 5872's stage summary measured before 'Model' at TP 8; the NCCL per doubling rides on the non-torch term,
    which with the context gives faradawn's 2.52 GiB besides weights and activation (§20) + 0.75 GiB × 3, + the
    all-reduce fusion workspace the non-torch term carries since §24 (allreduce_workspace.py): at TP 8 on H200s
    (NVLink, one node) under 1.0.0rc1, before PR #9145, plugin.py's `max_workspace_size_auto` is 8,000,000 B above
    TP 2, and a rank cudaMallocs its IPC buffer, barriers and Lamport triple buffer each rounded up to 2 MiB
    (`align_size(size, 1 << 21)`): 8,000,000 × 8 = 64,000,000 B → 31 × 2 MiB; 256 × 8 B → 1 × 2 MiB; 3 × 8,000,000
    × 8 = 192,000,000 B → 92 × 2 MiB: 124 × 2 MiB = 260,046,848 B (0.24 GiB), twice at EP 8 (§31: the model's
    Mapping carries moe_ep_size 8, the attention's own Mapping none, and `get_allreduce_workspace` caches by Mapping)."""
    taken = round((140.06 - 139.55) * GIB)  # the log's total less its free memory before 'Model'
    (context, error), (non_torch, _) = _by_term(TP8)[Term.CONTEXT], _by_term(TP8)[Term.NON_TORCH]
    assert context - error <= taken <= context + error
    # the TP group's NCCL, 0.75 GiB per doubling (log2 8 = 3), and its fusion workspace are charged with the profiled
    # non-torch term; the context is charged once (the rest read off faradawn is 2.52 GiB less the H200's context)
    besides_read = (2.52 - 0.13 + 0.10 + 0.03) * GIB
    fusion_workspace = 2 * (31 + 1 + 92) * (2 << 20)
    assert abs(context + non_torch - (besides_read + 0.75 * 3 * GIB + fusion_workspace)) <= 1


def test_the_activation_is_the_forward_of_max_num_tokens_and_holds_the_logs_that_print_it() -> None:
    """faradawn: 1,024 tokens of Llama-3-8B (intermediate 14,336, hidden 4,096, vocab 128,256; the config), cut into
    requests of min(1,024, 1,024 − 1) tokens: 2 requests. gpt-oss-120b on the DGX Spark: 8,192 tokens (the default),
    4 experts per token of intermediate 2,880, hidden 2,880, vocab 201,088, max_seq_len 131,072 (1 request). Each
    charges beside the MLP the decoder layer's residual and normed input, 2 × tokens × hidden × 2 B (§23)."""
    llama = 1_024 * (3 * 14_336 + 4_096) * 2 + 2 * 1_024 * 4_096 * 2 + 2 * 128_256 * 4
    gpt_oss = 8_192 * 4 * (3 * 2_880 + 2_880) * 2 + 2 * 8_192 * 2_880 * 2 + 1 * 201_088 * 4
    for record_id, expected, logged_gib in ((FARADAWN, llama, 0.14), (SPARK, gpt_oss, 0.85)):
        activation, error = _by_term(record_id)[Term.ACTIVATION]
        assert abs(activation - expected) <= 1  # GiB rounding of the transient
        assert error == activation
        assert activation - error <= logged_gib * GIB <= activation + error  # the printed line
    # the issue 6294 bench: 23,552 tokens of Llama-3.1-8B FP8 (ModelOpt, per tensor) in requests of 156 (max_seq_len
    # 157 − 1): 151 requests; its down projection's FP8 input, 23,552 × 14,336 × 1 B, beside the decoder's two rows
    activation, _ = _by_term(BENCH)[Term.ACTIVATION]
    bench = (23_552 * (3 * 14_336 + 4_096) * 2 + 2 * 23_552 * 4_096 * 2 + 23_552 * 14_336 * 1
             + 151 * 128_256 * 4)  # fmt: skip
    assert abs(activation - bench) <= 1


def test_what_the_decoder_holds_beside_the_mlp_brings_the_printed_activations_closer() -> None:
    """The three logs that print `Memory dynamically allocated during inference (inside torch)` (§20, §23): faradawn
    0.14 GiB (1.2.0rc4, Llama-3-8B, 1,024 tokens), SRO-SA's server.log 0.39 GiB (1.1.0, TinyLlama-1.1B: hidden 2,048,
    intermediate 5,632, 8,192 tokens: 0.29 GiB of MLP transient + 0.06 of decoder rows), the DGX Spark 0.85 GiB
    (1.1.0rc3, gpt-oss-120b). The MLP transient alone reads 0.09, 0.29, 0.70; with the decoder's two rows, 0.11, 0.35,
    0.79: each still at or below the log (the forward's smaller transients are not counted) and each closer."""
    tinyllama = 8_192 * (3 * 5_632 + 2_048) * 2 + 2 * 8_192 * 2_048 * 2 + 5 * 32_000 * 4
    activation, _ = _by_term(SRO_SA)[Term.ACTIVATION]
    assert abs(activation - tinyllama) <= 1
    mlp_only = {FARADAWN: 1_024 * (3 * 14_336 + 4_096) * 2, SRO_SA: 8_192 * (3 * 5_632 + 2_048) * 2,
                SPARK: 8_192 * 4 * (3 * 2_880 + 2_880) * 2}  # fmt: skip
    for record_id, logged_gib in ((FARADAWN, 0.14), (SRO_SA, 0.39), (SPARK, 0.85)):
        activation, _ = _by_term(record_id)[Term.ACTIVATION]
        logged = logged_gib * GIB
        assert activation <= logged + 0.005 * GIB  # the line's rounding
        assert logged - activation < logged - mlp_only[record_id]


def test_an_fp8_per_tensor_model_holds_its_quantized_down_projection_input() -> None:
    """The RTX 5060 Ti start (1.2.0rc2, nvidia/Qwen3-8B-FP8: ModelOpt FP8 per tensor, hidden 4,096, intermediate
    12,288, vocab 151,936; max_num_tokens 8,192 by default, max_seq_len 9,192: one request): MLP transient 8,192 ×
    (3 × 12,288 + 4,096) × 2 B = 0.625 GiB, decoder rows 2 × 8,192 × 4,096 × 2 B = 0.125 GiB, the FP8 input of
    down_proj 8,192 × 12,288 × 1 B = 0.094 GiB, logits 151,936 × 4 B."""
    expected = 8_192 * (3 * 12_288 + 4_096) * 2 + 2 * 8_192 * 4_096 * 2 + 8_192 * 12_288 + 151_936 * 4
    activation, _ = _by_term(RTX5060TI)[Term.ACTIVATION]
    assert abs(activation - expected) <= 1


def test_the_peak_besides_the_weights_reproduces_the_1_2_0rc4_log() -> None:
    """The budget's peak less the weights: 17.76 GiB − 14.96 GiB of weights − 0.13 GiB temporary pool (added back by
    `_cal_max_memory`) = 2.67 GiB. kvtop's context and non-torch terms with the printed activation (0.14 GiB) give it
    within the 2-decimal printing of the lines (± 0.03 GiB); with its own activation (the arithmetic, 0.11 GiB since §23)
    it charges 0.04 GiB less, the forward's smaller transients."""
    by_term = _by_term(FARADAWN)
    besides = by_term[Term.CONTEXT][0] + by_term[Term.NON_TORCH][0]
    peak_less_weights = (17.76 - 14.96 - 0.13) * GIB
    assert abs(besides + 0.14 * GIB - peak_less_weights) <= 0.03 * GIB
    charged = besides + by_term[Term.ACTIVATION][0]
    assert 0.03 * GIB <= peak_less_weights - charged <= 0.08 * GIB
