"""TensorRT-LLM's PyTorch backend on MoE launches (docs/engines/trtllm.md §24): the MXFP4 experts each MoE backend pads,
and the memory outside torch kvtop does not model, named in the interval.

Expected values: the quantization methods' arithmetic (quantization.py create_weights, hand-computed below) and the
starts' own lines (zufayu/ClaudeSkillsE2EPerf, tests/data/calibration/trtllm.jsonl; a DGX Spark start, case-trtllm-
dgxspark-gpt-oss-120b).
"""

from __future__ import annotations

from benchmarks.calibration.corpus import load_all, resolve
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.trtllm.calibration import terms
from kvtop.domain.engines.trtllm.moe_weights import held_beside

CORPUS = load_all()
TRTLLM = {record.id: record for record in CORPUS["trtllm"]}
GIB = 1 << 30
B200_OSS = "zufayu-e2eperf-gpt-oss-120b-b200-tp1-trtllm-130rc10"
B300_OSS = "zufayu-e2eperf-gpt-oss-120b-b300-tp1-trtllm-130rc10"
SPARK_OSS = "case-trtllm-dgxspark-gpt-oss-120b"
TP4_EP4 = "zufayu-e2eperf-dsr1-0528-nvfp4-b200-tp4-ep4-trtllm-130rc10"


def _padding(record_id: str, backend: str | None) -> int:
    raw = dict(TRTLLM[record_id].raw)
    flags = [f for f in raw["flags"] if f not in ("--moe_config.backend", "TRTLLM", "CUTLASS")]
    raw["flags"] = flags + (["--moe_config.backend", backend] if backend else [])
    inputs = resolve(raw).inputs()
    found = held_beside(inputs.model, inputs.layout, inputs.settings)
    return found[0] if found else 0


def test_trtllm_gen_pads_gpt_oss_experts_as_its_create_weights() -> None:
    """gpt-oss-120b at TP 1, 36 layers × 128 experts, I = H = 2,880, MXFP4 (0.5 B a weight + 1 B per 32 scales).
    Checkpoint per expert: w13 5,760 × 2,880 → 8,294,400 + 518,400 B; w2 2,880 × 2,880 → 4,147,200 + 259,200 B;
    bf16 biases (5,760 + 2,880) × 2 = 17,280 B: 13,236,480 B. TRTLLM-Gen: I → 2,944 (128), H in → 3,072 (512),
    H out → 2,944 (128): w13 5,888 × 3,072 → 9,043,968 + 565,248; w2 2,944 × 2,944 → 4,333,568 + 270,848; float32
    biases (5,888 + 2,944) × 4 = 35,328: 14,248,960 B. 1,012,480 B more × 4,608 experts = 4,665,507,840 B."""
    assert _padding(B200_OSS, "TRTLLM") == 4_665_507_840


def test_cutlass_pads_both_to_128_with_model_dtype_biases() -> None:
    """CUTLASS (weight_alignment 128): w13 5,888 × 2,944 → 8,667,136 + 541,696; w2 2,944 × 2,944 → 4,333,568 +
    270,848; bf16 biases 8,832 × 2 = 17,664: 13,830,912 B, 594,432 B more per expert × 4,608 = 2,739,142,656 B.
    Unset, the backend is MoeConfig's default, CUTLASS (assumed)."""
    assert _padding(B300_OSS, "CUTLASS") == 2_739_142_656
    assert _padding(B300_OSS, None) == 2_739_142_656
    assert _padding(B300_OSS, "DEEPGEMM") == 0  # a layout kvtop does not read: the book alone


def test_the_logged_weights_are_the_book_with_the_backends_padding() -> None:
    """The starts' torch memory after the load: B200 TRTLLM 65.40 GiB, B300 CUTLASS 64.12 GiB (1.3.0rc10), the DGX
    Spark's 1.1.0rc3 start (CUTLASS by default) 63.52 GiB. The weights term now lands within 0.3, 0.8 and 0.2 GiB of
    them, where the book alone (60.77 GiB) was 4.6, 3.4 and 2.8 GiB short."""
    for record_id, logged, within in ((B200_OSS, 65.40, 0.3), (B300_OSS, 64.12, 0.81)):
        weights = next(t for t in terms(TRTLLM[record_id].inputs()) if t.term is Term.WEIGHTS)
        assert abs(weights.bytes / GIB - logged) < within, record_id
    book = TRTLLM[B300_OSS].inputs().weights_bytes  # the same config at TP 1: the book's 60.77 GiB
    spark = TRTLLM[SPARK_OSS].inputs()  # its own launch: no moe_config.backend, so CUTLASS
    padding = held_beside(spark.model, spark.layout, spark.settings)
    assert padding is not None and abs((book + padding[0]) / GIB - 63.52) < 0.21


def test_a_moe_launch_names_its_unmodelled_memory_outside_torch_in_the_interval() -> None:
    """DeepSeek-R1 at TP 4 / EP 4: 'Memory used after loading model weights (outside torch) … 9.74 GiB', of which the
    temporary KV pool 'Allocated 2.14 GiB for max tokens in paged KV cache (65536)': 7.60 GiB where the plan keeps
    0.64 + 3.45 GiB (+ 1.00 GiB of all-reduce fusion workspace since session 54). The figure is not moved by the
    MoE rule; its error widens by 1.0 × 4 doublings = 4.0 GiB (root of squares with
    the term's own 3.45 GiB), and the basis says so. A dense model's term is untouched, and so is a MoE at TP 1:
    gpt-oss-120b's 4.28 GiB less its 2.25 GiB pool is 2.03, under the plan's 0.64 + 1.95."""
    import math

    record = TRTLLM[TP4_EP4]
    non_torch = next(t for t in terms(record.inputs()) if t.term is Term.NON_TORCH)
    own = round((1.95 + 0.75 * 2) * GIB)  # bench3's 1.95 GiB + NCCL per doubling of TP 4 (§19, §20)
    workspace = 4 * 64 * 2**20 * 4 + 256 * 4  # the all-reduce fusion workspace at TP 4 (allreduce_workspace.py)
    assert abs(non_torch.bytes - own - workspace) < 0.01 * GIB
    assert abs(non_torch.error_bytes - math.hypot(own, 4.0 * GIB)) < 0.01 * GIB
    assert "not modelled" in non_torch.basis
    for other in ("faradawn-bench3-llama-3-8b-h200-trtllm-120rc4-pytorch", B200_OSS):
        other_term = next(t for t in terms(TRTLLM[other].inputs()) if t.term is Term.NON_TORCH)
        assert other_term.error_bytes == other_term.bytes, other
