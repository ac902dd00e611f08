"""Data-parallel starts by release (dp_gather.py, dp_dispatch.py): v0.11.0's default all-to-all and DP padding, and
DP replicas of a dense model.

Expected values are vLLM's code and a real start. The code, read in the v0.11.0 wheel: `VLLM_ALL2ALL_BACKEND`
defaults to 'allgather_reducescatter' (envs.py:1240-1246); `AgRsAll2AllManager.dispatch` all-gathers dp × tokens rows
of hidden states and router logits and `combine` reduce-scatters them into the rank's own rows (all2all.py:97-140,
cuda_communicator.py:186-220, 260-300); `fused_experts_impl` is v0.10.2's (fused_moe.py:1484-1706); FP8 block experts
take DeepGEMM by default (envs.py:1148-1149 `VLLM_USE_DEEP_GEMM` '1'); the worker snapshots after the distributed init
(gpu_worker.py:165-182), and the DP padding all-reduces on the DP group's device group (forward_context.py:89-114),
where v0.10.2 used its Gloo CPU group (forward_context.py:72-85). The start: ray-project/kuberay#4366, Qwen2.5-0.5B at
DP 2 over two one-T4 nodes at v0.11.0, printed 10.74 GiB of KV on each rank.
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.calibration.estimate import CapacityPlan, planned_capacity
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.vllm.calibration import FITS
from kvtop.domain.engines.vllm.dp_gather import gathered_forward_bytes
from kvtop.domain.engines.vllm.dp_workspace import modular_layer_bytes, workspace_bytes
from kvtop.domain.engines.vllm.flags import VllmFlags
from kvtop.domain.errors import InputError
from kvtop.domain.launch import parse_flags
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.wording import GIB
from tests.data_paths import CONFIGS, DATA

MIB = 1 << 20
H100 = 81559 * MIB  # nvidia-smi's total of an H100 80GB HBM3
T4 = 15360 * MIB
KUBERAY_LOGGED_KV_GIB = 10.74  # kuberay#4366: 'Available KV cache memory: 10.74 GiB' on both ranks


def load(path: str) -> ModelSpec:
    return model_from_config(json.loads(path_text(path)), source=path)


def path_text(path: str) -> str:
    return (DATA / path).read_text() if path.startswith("calibration/") else (CONFIGS / path).read_text()


QWEN3_30B = load("Qwen--Qwen3-30B-A3B.json")  # bf16, hidden 2,048, 128 experts, top-8, expert intermediate 768
QWEN3_CODER_480B_FP8 = load("calibration/configs/Qwen--Qwen3-Coder-480B-A35B-Instruct-FP8.RECONSTRUCTED.json")
LLAMA8B = load("meta-llama--Llama-3.1-8B-Instruct.json")
QWEN25_05B = load("calibration/configs/Qwen--Qwen2.5-0.5B.RECONSTRUCTED.json")


def capacity(model: ModelSpec, flags: list[str], gpu: str = "H100", total: int = H100) -> CapacityPlan:
    settings = parse_flags("vllm", flags, strict=True)
    return planned_capacity(model, settings, gpu_total_bytes=total, gpu_name=gpu, measured=MeasuredInputs())


def non_torch(plan: CapacityPlan) -> int:
    term = plan.estimate.term(Term.NON_TORCH)
    assert term is not None
    return term.bytes


def dp_lines(plan: CapacityPlan) -> list[str]:
    return [line for line in plan.ledger.not_modelled if "DP" in line]


CONSTANT = FITS["vllm.non_torch.v1"].coefficients[0]
PYNCCL_PART = FITS["vllm.context"].coefficients[1]  # stands in for the DP group's pynccl communicator
TORCH_PART = FITS["vllm.non_torch.v1"].coefficients[1]  # for torch's on a device group


def test_allgather_reducescatter_combines_into_the_ranks_own_rows() -> None:
    """Qwen3-30B-A3B at DP 8 with EP, 8,192 tokens a rank: 65,536 rows gathered (all_gatherv), two chunks of 32,768
    through the experts, and a combine whose output is the rank's 8,192 rows, not the naive all-reduce's 65,536."""
    held = 2 * 8192 * 2048 * 2
    gathered = 65536 * 2048 * 2 + 65536 * 128 * 2  # all_gatherv's hidden states and router logits
    experts = gathered + 65536 * 8 * (4 + 4) + 32768 * 8 * max(1536, 2048) * 2 + 32768 * 8 * 768 * 2
    layout = ParallelLayout(dp=8, ep=8)
    agrs = gathered_forward_bytes(QWEN3_30B, layout, 8192, "allgather_reducescatter")
    assert agrs == held + max(experts, gathered + 8192 * 2048 * 2)
    naive = gathered_forward_bytes(QWEN3_30B, layout, 8192, "naive")
    assert naive == held + max(experts, gathered + 65536 * 2048 * 2)


def test_v0110_unquantized_moe_is_priced_with_the_padding_communicator_alone() -> None:
    """At v0.11.0 the DP group's pynccl communicator precedes the snapshot: only torch's, made at the DP padding's
    all-reduce, is charged; at v0.10.2 (naive dispatch) both are."""
    later = capacity(QWEN3_30B, ["-dp", "2", "--enable-expert-parallel", "--engine-version", "0.11.0"])
    assert not dp_lines(later)
    assert abs(non_torch(later) - (CONSTANT + TORCH_PART) * GIB) <= 2
    earlier = capacity(QWEN3_30B, ["-dp", "2", "--enable-expert-parallel", "--engine-version", "0.10.2"])
    assert abs(non_torch(earlier) - (CONSTANT + PYNCCL_PART + TORCH_PART) * GIB) <= 2


def test_v0110_fp8_block_experts_are_named_for_deepgemm() -> None:
    plan = capacity(QWEN3_CODER_480B_FP8, ["-dp", "8", "--enable-expert-parallel", "--max-model-len", "32768",
                                           "--engine-version", "0.11.0"], gpu="H20", total=143771 * MIB)  # fmt: skip
    lines = dp_lines(plan)
    assert len(lines) == 1 and "'allgather_reducescatter'" in lines[0] and "DeepGEMM" in lines[0]
    assert abs(non_torch(plan) - CONSTANT * GIB) <= 2


def test_dense_dp_charges_the_communicator_its_release_makes_after_the_snapshot() -> None:
    """Llama-3.1-8B at DP 2 on one H100 node: v0.10.2 its pynccl communicator, v0.11.0 and v0.13.0 torch's at the DP
    padding (v0.13.0: `_dummy_run` -> coordinate_batch_across_dp on the DP device group, gpu_model_runner.py:4064,
    v1/worker/dp_utils.py:23; async scheduling off by default)."""
    alone = non_torch(capacity(LLAMA8B, ["--engine-version", "0.11.0"]))
    assert abs(alone - CONSTANT * GIB) <= 2
    v0102 = capacity(LLAMA8B, ["-dp", "2", "--engine-version", "0.10.2"])
    assert not dp_lines(v0102) and abs(non_torch(v0102) - (CONSTANT + PYNCCL_PART) * GIB) <= 2
    for version in ("0.11.0", "0.13.0"):
        plan = capacity(LLAMA8B, ["-dp", "2", "--engine-version", version])
        assert not dp_lines(plan) and abs(non_torch(plan) - (CONSTANT + TORCH_PART) * GIB) <= 2


def test_from_v0140_dense_dp_ranks_are_independent_engines() -> None:
    """v0.14.0's engine core runs a dense model's DP rank as its own engine of DP size 1 ('Non-MoE DP ranks are
    completely independent, so treat like DP=1', v1/engine/core.py:916-927; :1546-1555 at v0.33.0): no DP group to
    pad on, so DP 2's non-torch memory is DP 1's with or without async scheduling."""
    for version in ("0.14.0", "0.24.0"):
        for extra in ([], ["--no-async-scheduling"]):
            alone = non_torch(capacity(LLAMA8B, [*extra, "--engine-version", version]))
            plan = capacity(LLAMA8B, ["-dp", "2", *extra, "--engine-version", version])
            assert not dp_lines(plan) and non_torch(plan) == alone


def test_from_v0140_async_scheduling_by_default_pads_a_moe_on_gloo() -> None:
    """A MoE's DP ranks still share a DP group; v0.14.0's VllmConfig sets disable_nccl_for_dp_synchronization to async
    scheduling's value, on by default (config/vllm.py:635-644): the unpriced MoE line names no DP communicator; with
    --no-async-scheduling the padding all-reduces on the DP device group again (v1/worker/dp_utils.py:23/29) and the
    line names torch's communicator (v0.25.0: its MoE batch not read, so the line is there to say it)."""
    flags = ["-dp", "2", "--enable-expert-parallel", "--engine-version", "0.25.0"]
    default = dp_lines(capacity(QWEN3_30B, flags))
    assert len(default) == 1 and "no DP group's NCCL communicator is made" in default[0]
    sync = dp_lines(capacity(QWEN3_30B, [*flags, "--no-async-scheduling"]))
    assert len(sync) == 1 and "the DP padding's all-reduce makes torch's NCCL communicator" in sync[0]
    priced = ["-dp", "2", "--enable-expert-parallel", "--engine-version", "0.14.0"]  # v0.14.x priced: the charge
    assert abs(non_torch(capacity(QWEN3_30B, priced)) - CONSTANT * GIB) <= 2
    assert abs(non_torch(capacity(QWEN3_30B, [*priced, "--no-async-scheduling"])) - (CONSTANT + TORCH_PART) * GIB) <= 2


def test_the_v2_model_runner_pads_on_gloo() -> None:
    """From v0.29.0 a MoE runs the V2 model runner too (VllmConfig.use_v2_model_runner, runner_eras.runs_v2), whose
    `dispatch_cg_and_sync_dp` all-reduces on the DP group's cpu_group (v1/worker/gpu/dp_utils.py:55 at v0.29.0,
    cpu_all_reduce_ :79 at v0.33.0): even without async scheduling the MoE line names no DP communicator, where v0.28.0's
    V1 runner pads on the device group (v1/worker/dp_utils.py:24/30)."""
    flags = ["-dp", "2", "--enable-expert-parallel", "--no-async-scheduling"]
    v1 = dp_lines(capacity(QWEN3_30B, [*flags, "--engine-version", "0.28.0"]))
    assert len(v1) == 1 and "the DP padding's all-reduce makes torch's NCCL communicator" in v1[0]
    for version in ("0.29.0", "0.33.0"):
        v2 = dp_lines(capacity(QWEN3_30B, [*flags, "--engine-version", version]))
        assert len(v2) == 1 and "no DP group's NCCL communicator is made" in v2[0]


def test_kuberay_4366_dense_dp_over_two_nodes_is_named_and_unpriced() -> None:
    """Two one-T4 nodes (no NVLink, DP ranks apart): the padding's communicator is named, the plan is DP 1's, and it
    lands within 5 % of the 10.74 GiB both ranks printed."""
    flags = ["--data-parallel-size", "2", "--data-parallel-size-local", "1", "--engine-version", "0.11.0"]
    plan = capacity(QWEN25_05B, flags, gpu="T4", total=T4)
    lines = dp_lines(plan)
    assert len(lines) == 1 and "DP padding's all-reduce" in lines[0] and "one node of NVLink GPUs" in lines[0]
    alone = capacity(QWEN25_05B, ["--engine-version", "0.11.0"], gpu="T4", total=T4)
    assert plan.ledger.engine.kv_budget_bytes == alone.ledger.engine.kv_budget_bytes
    assert abs(plan.ledger.engine.kv_budget_bytes / GIB / KUBERAY_LOGGED_KV_GIB - 1) < 0.05


def test_v0112_and_v0120_pad_on_nccl_unless_async_scheduling_moves_it_to_gloo() -> None:
    """v0.11.2 and v0.12.0's `_dummy_run` coordinates the DP padding on the DP device group (v1/worker/dp_utils.py);
    v0.12.0's --async-scheduling sets disable_nccl_for_dp_synchronization (engine/arg_utils.py:1574-1578): Gloo, no
    communicator in the profile, nothing charged and nothing named."""
    for version in ("0.11.2", "0.12.0"):
        plan = capacity(LLAMA8B, ["-dp", "2", "--engine-version", version])
        assert not dp_lines(plan) and abs(non_torch(plan) - (CONSTANT + TORCH_PART) * GIB) <= 2
    gloo = capacity(LLAMA8B, ["-dp", "2", "--async-scheduling", "--engine-version", "0.12.0"])
    assert not dp_lines(gloo) and abs(non_torch(gloo) - CONSTANT * GIB) <= 2
    still_nccl = capacity(LLAMA8B, ["-dp", "2", "--async-scheduling", "--engine-version", "0.11.2"])
    assert abs(non_torch(still_nccl) - (CONSTANT + TORCH_PART) * GIB) <= 2


def test_v0112_and_v0120_layers_by_their_code() -> None:
    """v0.12.0's chunk is 16,384 rows (envs.py:789-791); v0.11.2 runs shared experts after the routed ones
    (fused_moe/layer.py:1757-1799), so their output sits beside the combine, not the experts' caches. A Qwen3-30B-A3B
    given a 768-wide shared expert at DP 8, 8,192 tokens a rank."""
    moe = QWEN3_30B.moe
    assert moe is not None
    shared_model = QWEN3_30B.model_copy(update={"moe": moe.model_copy(update={"shared_intermediate_size": 768})})
    layout = ParallelLayout(dp=8, ep=8)
    held, shared = 2 * 8192 * 2048 * 2, 8192 * 2048 * 2
    gathered = 65536 * 2048 * 2 + 65536 * 128 * 2
    topk = 65536 * 8 * (4 + 4)
    experts_16k = gathered + topk + 16384 * 8 * 2048 * 2 + 16384 * 8 * 768 * 2
    combine = gathered + 8192 * 2048 * 2
    assert gathered_forward_bytes(shared_model, layout, 8192, "allgather_reducescatter", chunk_rows=16384) == (
        held + shared + max(experts_16k, combine))
    experts_32k = gathered + topk + 32768 * 8 * 2048 * 2 + 32768 * 8 * 768 * 2
    assert gathered_forward_bytes(shared_model, layout, 8192, "allgather_reducescatter", shared_first=False) == (
        held + max(experts_32k, combine + shared))


def test_v0111_and_v0130_read_as_v0120_and_v0140_moe_is_named() -> None:
    """v0.11.1's wheel holds v0.11.2's DP path (dp_utils.py, all2all.py, fused_moe/ byte-identical) and v0.13.0's MoE
    layer is v0.12.0's (all2all.py unchanged; unquantized apply still `fused_experts`, unquantized_fused_moe_method.py:
    324-325): priced with the padding's communicator alone. v0.14.x's modular kernel is priced (dp_workspace.py) with
    no communicator (async scheduling pads on Gloo), and so are v0.15.x's to v0.19.x's (the same layer:
    dp_gather.PRICED_ERAS), and v0.20.0-v0.24.x's kernel-gathered layer (dp_kernel_gather.py); v0.25.0 is named,
    not read."""
    flags = ["-dp", "2", "--enable-expert-parallel"]
    for version in ("0.11.1", "0.12.0", "0.13.0"):
        plan = capacity(QWEN3_30B, [*flags, "--engine-version", version])
        assert not dp_lines(plan) and abs(non_torch(plan) - (CONSTANT + TORCH_PART) * GIB) <= 2
    for version in ("0.14.0", "0.14.1", "0.15.0", "0.15.1", "0.16.0", "0.17.0", "0.17.1", "0.18.0", "0.18.1", "0.19.0",
                    "0.19.1"):
        plan = capacity(QWEN3_30B, [*flags, "--engine-version", version])
        alone = capacity(QWEN3_30B, ["--enable-expert-parallel", "--engine-version", version])  # one replica
        assert not dp_lines(plan) and non_torch(plan) == non_torch(alone)  # no DP communicator charged
    unread = dp_lines(capacity(QWEN3_30B, [*flags, "--engine-version", "0.25.0"]))
    assert len(unread) == 1 and "not read from v0.25.0" in unread[0]


def test_the_moe_line_words_the_communicator_as_the_dense_line_does() -> None:
    """Off one NVLink node (L40S) a MoE's gathered batch is unpriced and its line names the DP communicator the
    release makes: torch's at the padding's all-reduce on the DP device group, none where
    --disable-nccl-for-dp-synchronization (v1/worker/dp_utils.py:20-34 at v0.11.2) or v0.12.0's --async-scheduling
    (engine/arg_utils.py:1574-1578) puts it on Gloo."""
    flags = ["-dp", "2", "--enable-expert-parallel"]
    for version, gloo in (("0.11.2", "--disable-nccl-for-dp-synchronization"), ("0.12.0", "--async-scheduling")):
        nccl = dp_lines(capacity(QWEN3_30B, [*flags, "--engine-version", version], gpu="L40S", total=46068 * MIB))
        assert len(nccl) == 1 and "the DP padding's all-reduce makes torch's NCCL communicator" in nccl[0]
        on_gloo = dp_lines(capacity(QWEN3_30B, [*flags, gloo, "--engine-version", version], gpu="L40S",
                                    total=46068 * MIB))  # fmt: skip
        assert len(on_gloo) == 1 and "torch's NCCL communicator" not in on_gloo[0]
        assert "no DP group's NCCL communicator is made" in on_gloo[0]


KUBERAY_LOGGED_TOKENS = 938_544  # kuberay#4366: rank 1 'GPU KV cache size: 938,544 tokens'


def test_kuberay_4366_ray_dp_backend_at_tp_pp_1_plans_as_mp() -> None:
    """The start was launched with `--data-parallel-backend ray`: at TP × PP = 1 the Ray actor runs mp's engine core
    (DPEngineCoreActor subclasses DPEngineCoreProc, v1/engine/core.py:1133-1193 at v0.11.0; in-process executor,
    config/parallel.py:447), so the plan is mp's and lands within 5 % of the tokens and GiB both ranks printed."""
    flags = ["--data-parallel-size", "2", "--data-parallel-size-local", "1", "--engine-version", "0.11.0"]
    ray = capacity(QWEN25_05B, [*flags, "--data-parallel-backend", "ray"], gpu="T4", total=T4)
    mp = capacity(QWEN25_05B, flags, gpu="T4", total=T4)
    assert ray.ledger.engine.kv_budget_bytes == mp.ledger.engine.kv_budget_bytes
    # v0.13.0's DPEngineCoreActor is v0.11.0's (v1/engine/core.py:1347-1394; in-process executor, parallel.py:547);
    # v0.16.0's EngineCoreActor runs EngineCoreProc of DP size 1 (core.py:1653-1670; parallel.py:600)
    for version in ("0.13.0", "0.16.0"):
        later = ["--data-parallel-size", "2", "--data-parallel-size-local", "1", "--engine-version", version]
        assert (capacity(QWEN25_05B, [*later, "--data-parallel-backend", "ray"], gpu="T4", total=T4).ledger.engine
                .kv_budget_bytes == capacity(QWEN25_05B, later, gpu="T4", total=T4).ledger.engine.kv_budget_bytes)
    assert abs(ray.ledger.engine.kv_budget_bytes / GIB / KUBERAY_LOGGED_KV_GIB - 1) < 0.05
    tokens = ray.ledger.engine.token_capacity
    assert abs(tokens / KUBERAY_LOGGED_TOKENS - 1) < 0.05
    assert "--data-parallel-backend" in VllmFlags().to_flags(parse_flags("vllm", ["--data-parallel-backend", "ray"]))


def test_ray_dp_backend_is_refused_by_name_where_not_read() -> None:
    """At TP × PP > 1 Ray's executor runs the workers (config/parallel.py:465-468 at v0.11.0): not modelled; a release
    whose engine core was not read (v0.10.2) and a value other than mp / ray are refused by name too."""
    for flags, words in ((["-tp", "2", "--engine-version", "0.11.0"], "TP × PP = 2"),
                         (["--engine-version", "0.10.2"], "not read before v0.11.0"),
                         (["--engine-version", "0.17.0"], "not read from v0.17.0"),
                         (["-pp", "2", "--engine-version", "0.11.0"], "TP × PP = 2")):  # fmt: skip
        with pytest.raises(InputError, match=words):
            capacity(QWEN25_05B, ["-dp", "2", "--data-parallel-backend", "ray", *flags])
    with pytest.raises(InputError, match="only mp and ray"):
        capacity(QWEN25_05B, ["-dp", "2", "--data-parallel-backend", "nccl", "--engine-version", "0.11.0"])


def test_disable_nccl_for_dp_synchronization_pads_on_gloo() -> None:
    """`--disable-nccl-for-dp-synchronization` (v0.11.1 on: engine/arg_utils.py:839-842 at v0.11.1, :1348 at v0.33.0)
    puts the DP padding's all-reduce on the Gloo CPU group (v1/worker/dp_utils.py:20-34 at v0.11.2): no torch NCCL
    communicator in the profile, so Llama-3.1-8B at DP 2 charges the one-rank non-torch constant alone; v0.11.0 has no
    such flag (its arg_utils.py)."""
    for version in ("0.11.1", "0.11.2", "0.12.0"):
        plan = capacity(LLAMA8B, ["-dp", "2", "--disable-nccl-for-dp-synchronization", "--engine-version", version])
        assert not dp_lines(plan) and abs(non_torch(plan) - CONSTANT * GIB) <= 2
    with pytest.raises(InputError, match="no --disable-nccl-for-dp-synchronization"):
        capacity(LLAMA8B, ["-dp", "2", "--disable-nccl-for-dp-synchronization", "--engine-version", "0.11.0"])


def test_padding_on_gloo_off_one_nvlink_node_names_no_communicator() -> None:
    """Off one NVLink node (kuberay#4366's two one-T4 nodes) the DP communicators are not priced, so the line names
    the one the release makes: from v0.11.2 `--disable-nccl-for-dp-synchronization`, and at v0.12.0
    `--async-scheduling`, put the padding's all-reduce on Gloo (v1/worker/dp_utils.py:20-34 at v0.11.2,
    engine/arg_utils.py:1574-1578 at v0.12.0) and the snapshot follows the distributed init: no DP communicator is
    made in the growth, so none is named, and the KV budget stays DP 1's either way."""
    spread = ["--data-parallel-size", "2", "--data-parallel-size-local", "1"]
    for version, gloo in (("0.11.2", "--disable-nccl-for-dp-synchronization"),
                          ("0.12.0", "--disable-nccl-for-dp-synchronization"), ("0.12.0", "--async-scheduling")):  # fmt: skip
        nccl = capacity(QWEN25_05B, [*spread, "--engine-version", version], gpu="T4", total=T4)
        lines = dp_lines(nccl)
        assert len(lines) == 1 and "DP padding's all-reduce" in lines[0] and "one node of NVLink GPUs" in lines[0]
        padded_on_gloo = capacity(QWEN25_05B, [*spread, gloo, "--engine-version", version], gpu="T4", total=T4)
        assert not dp_lines(padded_on_gloo)
        alone = capacity(QWEN25_05B, [gloo, "--engine-version", version], gpu="T4", total=T4)
        assert padded_on_gloo.ledger.engine.kv_budget_bytes == alone.ledger.engine.kv_budget_bytes


def test_a_removed_naive_backend_falls_back_to_allgather_reducescatter() -> None:
    """v0.19.0's ParallelConfig replaces --all2all-backend naive with 'allgather_reducescatter' ("The 'naive' all2all
    backend has been removed. Falling back to 'allgather_reducescatter'", config/parallel.py:344-350): no naive
    broadcast, so with the padding on Gloo (async scheduling's default) the line names no communicator (v0.25.0, its
    batch not read) and v0.19.0 prices the AgRs layer as without the flag; at v0.18.1 naive still broadcasts on the DP
    device group."""
    flags = ["-dp", "2", "--enable-expert-parallel", "--all2all-backend", "naive"]
    removed = dp_lines(capacity(QWEN3_30B, [*flags, "--engine-version", "0.25.0"]))
    assert len(removed) == 1 and "no DP group's NCCL communicator is made" in removed[0]
    fell_back = capacity(QWEN3_30B, [*flags, "--engine-version", "0.19.0"])
    agrs = capacity(QWEN3_30B, [*flags[:3], "--engine-version", "0.19.0"])
    assert not dp_lines(fell_back) and fell_back.ledger.engine.kv_budget_bytes == agrs.ledger.engine.kv_budget_bytes
    kept = dp_lines(capacity(QWEN3_30B, [*flags, "--engine-version", "0.18.1"]))
    assert len(kept) == 1 and "the naive dispatch's first broadcast makes torch's NCCL communicator" in kept[0]


def test_v014x_pp2_turns_async_scheduling_off_so_a_moe_pads_on_nccl() -> None:
    """v0.14.0's VllmConfig turns default async scheduling off at PP > 1 (config/vllm.py:590-596), so
    disable_nccl_for_dp_synchronization is False (:635-644) and the MoE's DP padding all-reduces on the DP device group
    (v1/worker/dp_utils.py:23/29): the line names torch's communicator. v0.15.0 dropped the PP check (:589-622):
    async scheduling stays on and the padding is on Gloo: no torch communicator charged (its MoE batch priced too)."""
    flags = ["-dp", "2", "--pp", "2", "--enable-expert-parallel"]
    for version in ("0.14.0", "0.14.1"):  # priced: torch's communicator charged, as --disable-nccl-… would not
        nccl = capacity(QWEN3_30B, [*flags, "--engine-version", version])
        gloo = capacity(QWEN3_30B, [*flags, "--disable-nccl-for-dp-synchronization", "--engine-version", version])
        assert not dp_lines(nccl) and abs(non_torch(nccl) - non_torch(gloo) - TORCH_PART * GIB) <= 2
    default = capacity(QWEN3_30B, [*flags, "--engine-version", "0.15.0"])
    gloo = capacity(QWEN3_30B, [*flags, "--disable-nccl-for-dp-synchronization", "--engine-version", "0.15.0"])
    assert not dp_lines(default) and abs(non_torch(default) - non_torch(gloo)) <= 2


def test_no_disable_nccl_for_dp_synchronization_keeps_nccl_under_async_scheduling_from_v0140() -> None:
    """From v0.14.0 the field is None unless stated (config/parallel.py:186) and only None follows async scheduling
    (config/vllm.py:635-644): `--no-disable-nccl-for-dp-synchronization` keeps the padding on the DP device group. At
    v0.13.0 async scheduling sets it True whatever the flag said (config/vllm.py:594-601): Gloo."""
    flags = ["-dp", "2", "--enable-expert-parallel", "--no-disable-nccl-for-dp-synchronization"]
    nccl = capacity(QWEN3_30B, [*flags, "--engine-version", "0.14.0"])
    assert not dp_lines(nccl) and abs(non_torch(nccl) - (CONSTANT + TORCH_PART) * GIB) <= 2
    gloo = dp_lines(capacity(QWEN3_30B, [*flags, "--async-scheduling", "--engine-version", "0.13.0"],
                             gpu="L40S", total=46068 * MIB))  # fmt: skip
    assert len(gloo) == 1 and "the DP padding's all-reduce" not in gloo[0]


def test_v014x_modular_layer_by_its_code() -> None:
    """v0.14.0's unquantized experts (dp_workspace.py): Qwen3-30B-A3B at DP 2 with EP, 8,192 tokens a rank, 16,384 rows
    gathered, one chunk of VLLM_FUSED_MOE_CHUNK_SIZE 16,384. TritonExperts.workspace_shapes (fused_moe.py:2324-2339):
    workspace13 16,384 × 8 × max(768, 2,048), workspace2 16,384 × 8 × max(1,536, 2,048), bf16; one chunk's workspace13
    holds the 16,384 × 2,048 output, but the profile's worst chunk under DP + EP asks for the output beside them
    (modular_kernel.py:797-821): 3 parts. Beside the buffer: the all_gatherv'd hidden states and router logits, the
    kernel's zeroed output (torch 2.9: modular_kernel.py:1210-1213) and the reduce-scatter's own rows."""
    layout = ParallelLayout(dp=2, ep=2)
    held = 2 * 8192 * 2048 * 2
    gathered = 16384 * 2048 * 2 + 16384 * 128 * 2
    zeroed = 16384 * 2048 * 2
    worst = 16384 * 8 * 2048 * 2 + 16384 * 8 * 2048 * 2 + 16384 * 2048 * 2
    own_rows = 8192 * 2048 * 2  # larger than the top-k's 16,384 × 8 × 8 B
    assert workspace_bytes(QWEN3_30B, layout, 16384, 16384) == worst == 1_140_850_688
    assert modular_layer_bytes(QWEN3_30B, layout, 8192, 16384) == held + gathered + zeroed + worst + own_rows
    # DP 8: 65,536 rows in 4 chunks, the whole output beside one chunk's workspaces, larger than the worst chunk
    asked = 16384 * 8 * 2048 * 2 * 2 + 65536 * 2048 * 2
    assert workspace_bytes(QWEN3_30B, ParallelLayout(dp=8, ep=8), 65536, 16384) == asked


def test_v015x_prices_the_gathered_modular_layer_by_its_code() -> None:
    """v0.15.0 and v0.15.1 run v0.14.x's layer (dp_gather.PRICED_ERAS): the AgRs dispatch of dp × tokens rows
    (fused_moe/layer.py:1792-1821 at v0.15.0), select_experts on them (:1876), the kernel's zeroed output under torch
    2.9.1 (modular_kernel.py:1321-1324), TritonExperts' buffers from the workspace manager (:875-980; one chunk's
    workspace13 and output share one buffer, more chunks put the whole output beside them) and the reduce-scatter's own
    rows (:1913). Qwen3-30B-A3B at DP 8 with EP, 8,192 tokens a rank: 65,536 rows in 4 chunks of 16,384; 8 seqs, so
    the layer is above the fitted sampler peak and sets the profile's."""
    held = 2 * 8192 * 2048 * 2  # the rank's residual and normed input
    gathered = 65536 * 2048 * 2 + 65536 * 128 * 2  # all_gatherv'd hidden states and router logits
    zeroed = 65536 * 2048 * 2
    chunks = 16384 * 8 * 2048 * 2 * 2 + 65536 * 2048 * 2  # both chunk buffers and the whole output (> the worst chunk)
    own_rows = 8192 * 2048 * 2  # the combine's, above the top-k's 65,536 × 8 × 8 B
    layer = held + gathered + zeroed + chunks + own_rows
    assert layer == 1_996_488_704
    flags = ["-dp", "8", "--enable-expert-parallel", "--max-num-seqs", "8"]
    # v0.16.0: modular_kernel.py:883, :1333, layer.py:1875-1965; v0.17.x: runner/default_moe_runner.py:650-719,
    # modular_kernel.py:1055, :1519-1522 (dp_workspace.py)
    for version in ("0.15.0", "0.15.1", "0.16.0", "0.17.0", "0.17.1"):
        activation = capacity(QWEN3_30B, [*flags, "--engine-version", version]).estimate.term(Term.ACTIVATION)
        assert activation is not None and activation.bytes == layer
        assert f"gathered over 8 DP ranks (8 × 8,192 tokens: {layer / GIB:.2f} GiB" in activation.basis
    # v0.18.0 unchunked (modular_kernel.py:1009): all 65,536 rows in one ask, workspace13 (65,536 × 8 × 2,048) holding
    # the output beside workspace2 (65,536 × 8 × max(1,536, 2,048)), no worst-chunk ask
    unchunked = held + gathered + zeroed + 2 * (65536 * 8 * 2048 * 2) + own_rows
    assert unchunked == 4_949_278_720
    for version in ("0.18.0", "0.18.1", "0.19.0", "0.19.1"):  # v0.19.x: the same bytes, runner helpers
        activation = capacity(QWEN3_30B, [*flags, "--engine-version", version]).estimate.term(Term.ACTIVATION)
        assert activation is not None and activation.bytes == unchunked
    unread = capacity(QWEN3_30B, [*flags, "--engine-version", "0.25.0"]).estimate.term(Term.ACTIVATION)
    assert unread is not None and "gathered over" not in unread.basis
