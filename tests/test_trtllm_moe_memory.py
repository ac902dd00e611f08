"""TensorRT-LLM's PyTorch backend on MoE launches (docs/engines/trtllm.md §24): the MXFP4 experts each MoE backend pads,
and the memory outside torch kvtop does not model, named in the interval.

Expected values: the quantization methods' arithmetic (quantization.py create_weights, hand-computed below) and the
starts' own lines (zufayu/ClaudeSkillsE2EPerf, tests/data/calibration/trtllm.jsonl; a DGX Spark start, case-trtllm-
dgxspark-gpt-oss-120b).
"""

from __future__ import annotations

import math

from benchmarks.calibration.corpus import load_all, resolve
from kvtop.domain.calibration.cuda_context import CUDA_CONTEXT_FITS, CUDA_CONTEXT_KEY
from kvtop.domain.calibration.terms import Term, TermEstimate
from kvtop.domain.engines.trtllm.allreduce_workspace import fusion_workspace_bytes
from kvtop.domain.engines.trtllm.calibration import fit_offset, terms
from kvtop.domain.engines.trtllm.moe_weights import held_beside

CORPUS = load_all()
TRTLLM = {record.id: record for record in CORPUS["trtllm"]}
GIB = 1 << 30
B200_OSS = "zufayu-e2eperf-gpt-oss-120b-b200-tp1-trtllm-130rc10"
B300_OSS = "zufayu-e2eperf-gpt-oss-120b-b300-tp1-trtllm-130rc10"
SPARK_OSS = "case-trtllm-dgxspark-gpt-oss-120b"
TP4_EP4 = "zufayu-e2eperf-dsr1-0528-nvfp4-b200-tp4-ep4-trtllm-130rc10"
TP2_B300 = "zufayu-e2eperf-dsr1-0528-nvfp4-b300-tp2-trtllm-130rc10"
MIB2 = 1 << 21  # IpcMemory's 2 MiB alignment (_ipc_utils.py open_ipc_memory)


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
    0.71 + 3.38 GiB and the all-reduce fusion workspace, 4 × 64 MiB × 4 + 2 MiB = 1,075,838,976 B: 2.50 GiB left. The
    figure is not moved by the MoE rule; its error widens by 1.0 × 4 doublings = 4.0 GiB (root of squares with the
    term's own 3.38 GiB), and the basis says so. A dense model's term is untouched, and so is a MoE at TP 1:
    gpt-oss-120b's 4.28 GiB less its 2.25 GiB pool is 2.03, under the plan's 0.71 + 1.88.
    The context and the rest move with the one-process CUDA context fit (session 69's refit, 2564963f, on 131
    records: 0.483063 GiB per 100 SMs of 2,048 threads, 0.483063 × 1.48 = 0.71 GiB on the B200's 148 SMs,
    0.483063 × 1.32 = 0.64 on bench3's H200, whose 2.52 GiB besides the weights less that context is the rest,
    1.88 GiB; session 68's on 125 records: 0.4797 GiB, 0.71, 0.63 and 1.89; session 54's on 76 records: 0.4694 GiB,
    0.69, 0.62 and 1.90; 0.64 and 1.95 before)."""
    non_torch = _non_torch(TRTLLM[TP4_EP4].raw)
    nccl = _non_torch({**TRTLLM[TP4_EP4].raw, "flags": [*TRTLLM[TP4_EP4].raw["flags"], "--allreduce_strategy", "NCCL"]})
    assert non_torch.bytes - nccl.bytes == 2 * (4 * 64 * 2**20 * 4 + MIB2)  # the two workspaces, error unchanged
    own = nccl.bytes  # bench3's rest (2.52 GiB less the committed context fit on its H200's 132 SMs) + 0.75 GiB × 2
    h200_context = CUDA_CONTEXT_FITS[CUDA_CONTEXT_KEY].predict((132 / 100,)) / GIB  # (§19, §20)
    assert abs(own / GIB - ((2.52 - h200_context) + 0.75 * 2)) < 0.005
    # (2.52 − 0.483063 × 1.32) + 1.5 = 3.382 GiB at session 69's context fit; 3.387 at session 68's (0.4797), 3.40 at
    # session 54's, 3.45 before its merges
    assert abs(CUDA_CONTEXT_FITS[CUDA_CONTEXT_KEY].coefficients[0] - 0.483063) < 0.000001
    assert abs(own / GIB - 3.382) < 0.001
    assert abs(non_torch.error_bytes - math.hypot(own, 4.0 * GIB)) < 0.01 * GIB
    assert "not modelled" in non_torch.basis
    for other in ("faradawn-bench3-llama-3-8b-h200-trtllm-120rc4-pytorch", B200_OSS):
        other_term = next(t for t in terms(TRTLLM[other].inputs()) if t.term is Term.NON_TORCH)
        assert other_term.error_bytes == other_term.bytes, other


def _non_torch(raw: dict[str, object]) -> TermEstimate:
    return next(t for t in terms(resolve(raw).inputs()) if t.term is Term.NON_TORCH)


def _workspace(record_id: str, **changes: object) -> int:
    return fusion_workspace_bytes(resolve({**TRTLLM[record_id].raw, **changes}).inputs())


def _flags(record_id: str, ep: int | None = None, extra: tuple[str, ...] = ()) -> list[str]:
    """The record's flags with --ep_size set to `ep` (None: left as launched) and `extra` appended."""
    flags = list(TRTLLM[record_id].raw["flags"])
    if ep is not None:
        flags[flags.index("--ep_size") + 1] = str(ep)
    return [*flags, *extra]


def test_the_all_reduce_fusion_workspace_is_4_x_64_mib_per_tp_rank_outside_torch() -> None:
    """`allocate_allreduce_fusion_workspace(mapping, 64 MiB)` on each rank: IpcMemory buffers of 64 MiB × TP, barriers
    of 256 B × TP and Lamport buffers of 3 × 64 MiB × TP, each cudaMalloc'd rounded up to 2 MiB. TP 4: 268,435,456 +
    2,097,152 + 805,306,368 = 1,075,838,976 B; TP 2: 538,968,064 B; TP 1: none. Added to the non-torch term with its
    error unchanged (1.3.0rc10 is past PR #9145). One workspace where the MoE is not expert parallel (EP 1)."""
    assert _workspace(TP4_EP4, flags=_flags(TP4_EP4, ep=1)) == 64 * 2**20 * 4 + MIB2 + 3 * 64 * 2**20 * 4
    assert _workspace(TP4_EP4, flags=_flags(TP4_EP4, ep=1)) == 1_075_838_976
    assert _workspace(TP2_B300) == 64 * 2**20 * 2 + MIB2 + 3 * 64 * 2**20 * 2 == 538_968_064
    assert _workspace(B200_OSS) == 0
    assert "fusion workspace" in _non_torch(TRTLLM[TP4_EP4].raw).basis


def test_expert_parallel_ranks_hold_a_second_workspace_for_the_attention_output() -> None:
    """`get_allreduce_workspace` caches one workspace per Mapping, and Mapping equality reads moe_ep_size: the
    attention output's `mapping_o` (no MoE sizes: moe_ep 1) differs from the model's at EP > 1, so each rank holds
    two. Measured by the zufayu B200 harness's nvidia-smi log (ClaudeSkillsE2EPerf at f655ecbe, `results/b200_dsr_fp4/
    b200_dsr_fp4_mtp0_ep{4_tp4,8_tp8}_post2/gpu_fp4_throughput_chat_ep{4,8}_c64.csv`, 1.2.0rc6.post2): every worker
    holds 2,926 MiB at TP 4 / EP 4 and 4,976 MiB at TP 8 / EP 8 before its weights are allocated (the 1.3.0rc10
    TP 4 / EP 4 start: 2,930). The 2,050 MiB between them is two workspaces' growth from TP 4 to TP 8, 2 × (4 × 64 MiB
    × 4) = 2,048 MiB (one workspace: 1,024); what is left, 874 and 876 MiB, is the same at either TP (the worker's
    context). With attention DP the attention's Mapping has TP 1: one workspace."""
    tp8_ep8 = "zufayu-e2eperf-dsr1-0528-nvfp4-b200-tp8-ep8-trtllm-120rc6post2"
    one_tp4 = _workspace(TP4_EP4, flags=_flags(TP4_EP4, ep=1))
    assert _workspace(TP4_EP4) == 2 * one_tp4 == 2_151_677_952
    assert _workspace(tp8_ep8) == 2 * (64 * 2**20 * 8 + MIB2 + 3 * 64 * 2**20 * 8) == 4_299_161_600
    measured_growth_mib = 4_976 - 2_926
    assert abs((_workspace(tp8_ep8) - _workspace(TP4_EP4)) / 2**20 - measured_growth_mib) <= 2
    assert abs((2_926 - _workspace(TP4_EP4) / 2**20) - (4_976 - _workspace(tp8_ep8) / 2**20)) <= 2  # 874, 876 MiB
    assert _workspace(TP4_EP4, flags=_flags(TP4_EP4, extra=("--enable_attention_dp",))) == one_tp4
    assert "two workspaces" in _non_torch(TRTLLM[TP4_EP4].raw).basis


def test_before_pr_9145_the_workspace_is_plugin_pys_16_or_8_mb() -> None:
    """plugin.py's `max_workspace_size_auto`: 16,000,000 B at TP ≤ 2, 8,000,000 B above. TP 4 at 1.2.0rc2:
    32,000,000 → 33,554,432 B aligned, the barriers 2,097,152, Lamport 96,000,000 → 96,468,992: 132,120,576 B (twice
    at EP 4)."""
    ep1 = _flags(TP4_EP4, ep=1)
    assert _workspace(TP4_EP4, version="1.2.0rc2", flags=ep1) == 16 * MIB2 + MIB2 + 46 * MIB2 == 132_120_576
    assert _workspace(TP4_EP4, version="1.2.0rc2") == 2 * 132_120_576
    assert _workspace(TP2_B300, version="1.2.0rc2") == 132_120_576  # 16 MB × 2: the same aligned sizes


def test_no_workspace_without_peer_access_on_one_node_or_with_an_nccl_strategy() -> None:
    """`IpcMemory.__init__` opens (allocates) only when `can_access_peer(mapping)` — every TP peer on this node and
    `cudaDeviceCanAccessPeer` true — and `tp_size <= gpus_per_node` (_ipc_utils.py); ops.py takes no workspace for
    allreduce_strategy UB, NCCL or NCCL_SYMMETRIC. An RTX 4090 (GeForce: no P2P) or an L40S at TP 2, TP 16 over
    nodes of 8 H100s, and NCCL: none; `--gpus_per_node 16` keeps the TP 16 group on one node:
    4 × 64 MiB × 16 + 2 MiB."""
    for gpu in ("RTX4090", "L40S"):
        assert _workspace(TP2_B300, gpu=gpu) == 0, gpu
    flags = TRTLLM[TP4_EP4].raw["flags"]
    at_16 = [*flags[: flags.index("--ep_size")], *flags[flags.index("--ep_size") + 2 :]]  # EP 1
    assert _workspace(TP4_EP4, gpu="H100", tp=16, flags=at_16) == 0
    one_node = [*at_16, "--gpus_per_node", "16"]
    assert _workspace(TP4_EP4, gpu="H100", tp=16, flags=one_node) == 4 * 64 * 2**20 * 16 + MIB2
    assert _workspace(TP4_EP4, flags=[*flags, "--allreduce_strategy", "NCCL"]) == 0
    assert "PCIe card" in _non_torch({**TRTLLM[TP2_B300].raw, "gpu": "RTX4090"}).basis


def test_the_fit_is_trained_without_the_workspace() -> None:
    """What a trtllm.non_torch fit reads off a log is the growth less the workspace the code sizes
    (benchmarks/calibration/evaluate.py `term_rows` takes `fit_offset` off): two workspaces of 1,075,838,976 B at
    TP 4 / EP 4, the same bytes the term adds."""
    inputs = TRTLLM[TP4_EP4].inputs()
    assert fit_offset("trtllm.non_torch", inputs) == 2 * 1_075_838_976 and fit_offset("trtllm.activation", inputs) == 0
