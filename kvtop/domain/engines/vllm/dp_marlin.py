"""vLLM 0.29.0-0.34.x's MXFP4 MoE layer on the batch gathered over the DP ranks, with Marlin experts (dp_gather.py prices
it through here): the modular kernel `MoEPrepareAndFinalizeNaiveDPEPModular` + `MarlinExperts` over the worker's
workspace manager.

Read in the v0.29.0 wheel (vllm-0.29.0-cp38-abi3-manylinux_2_28_x86_64.whl, PyPI):
- Without --enable-expert-parallel the experts are split over TP × DP ranks (`flatten_tp_across_dp_and_pcp`,
  fused_moe/config.py:1121-1130, :1221-1240), each rank holding I ÷ (TP × DP) of each expert's width; MXFP4's Marlin
  backend rounds that width up to 128 and the hidden size up to 256 (`mxfp4_round_up_hidden_size_and_intermediate_
  size`, fused_moe/oracle/mxfp4.py:734-739; set as moe_config.hidden_dim, fused_moe/routed_experts.py:128-141).
- The runner pads the rank's hidden states to that width (`_maybe_pad_hidden_states`, runner/moe_runner.py:524-551),
  routes them on the rank's own rows (`select_experts`, :592-640) and calls the modular kernel, whose `forward`
  takes an output of the padded own rows (`torch.empty_like`, modular_kernel.py:1479); the prepare all-gathers the
  padded hidden states (bf16: MXFP4 w4a16 quantizes no input) and the top-k weights and ids over the DP group
  (prepare_finalize/naive_dp_ep.py:112-185, `AgRsAll2AllManager.dispatch`, all2all.py:101-136, pynccl's
  all_gatherv: dp × tokens rows).
- `_fused_experts` asks `_allocate_buffers` for the whole gathered M, no chunk (modular_kernel.py:1314-1326;
  VLLM_FUSED_MOE_CHUNK_SIZE gone since v0.18.0): `MarlinExperts.workspace_shapes` (experts/marlin_moe.py:704-734)
  gives workspace1 (M × top-k, max(N, K)), workspace2 M × top-k × max(2N, K) and output (M, K), N the rank's rounded
  width (`marlin_moe_intermediate_size`), K the padded hidden; workspace1 and the output share one buffer of the
  larger, beside workspace2 (modular_kernel.py:1170-1180), in the activation dtype (:830-834), from
  `WorkspaceManager.get_simultaneous` (each part rounded up to 256 B; the buffer only grows and stays:
  v1/worker/workspace.py:116-210).
- The finalize (TopKWeightAndReduceNoOP: Marlin sums the top-k itself) reduce-scatters the gathered output into a
  new tensor of the rank's own rows (all2all.py:138-149) and copies it into the output (naive_dp_ep.py:187-209),
  the gathered inputs still referenced: the layer's peak.
The workspace stays through the rest of the profile, the V2 sampler's pass included, so the peak is the larger of
this layer and the profile's counted peak plus the workspace. Not counted: moe_align_block_size's sorted ids and
Marlin's lock workspace (under 1 MiB here). The DP group's pynccl communicator is made at init, before the worker's
snapshot (dp_gather.COMMUNICATOR_ERAS), and V2 pads on Gloo: no communicator in the profile's growth.
v0.30.0 and v0.31.0 (their wheels read, session 60) hold this path as v0.29.0 does (`MARLIN_DP_ERAS`); v0.32.0 (read,
session 61) reduce-scatters into the layer's output, one tensor of own rows fewer (`SCATTER_INTO_OUTPUT`); v0.33.0 and
v0.34.0 (read, session 63) hold v0.32.0's bytes.
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.engines.vllm.dp_workspace import HELD_ROWS, TOPK_BYTES
from kvtop.domain.engines.vllm.moe_workspace import ALIGNMENT
from kvtop.domain.engines.vllm.mxfp4_backend import MARLIN, mxfp4_backend
from kvtop.domain.engines.vllm.runner_eras import runs_v2
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.rounding import round_up

# Where the MXFP4 Marlin experts' DP layer was read (module docstring); the rest are dp_eras.PRICED_ERAS' words
MARLIN_DP_ERAS: Eras[bool] = Eras((
    Era("", False, "not read before v0.29.0 (from v0.16.0 the modular kernel changed: dp_eras.PRICED_ERAS)"),
    Era("0.29.0", True, "read at v0.29.0: prepare_finalize/naive_dp_ep.py:71-209, modular_kernel.py:1120-1180 and "
                        ":1285-1330, experts/marlin_moe.py:704-734, fused_moe/oracle/mxfp4.py:734-739, "
                        "v1/worker/workspace.py:116-210"),
    Era("0.30.0", True, "read at v0.30.0 and v0.31.0 against v0.29.0: prepare_finalize/naive_dp_ep.py the same "
                        "(docstrings at v0.31.0), MarlinExperts.workspace_shapes the same (experts/marlin_moe.py:658 "
                        "/ :686), modular_kernel.py's _allocate_buffers (:1117 / :1087) and apply (output "
                        "empty_like, :1494 / :1476) changed for CPU and a deferred finalize Marlin does not take, "
                        "oracle/mxfp4.py's Marlin rounding 128 / 256 (:744 / :752), AgRsAll2AllManager the same "
                        "but for EP and PCP groups (all2all.py:46 / :52), v1/worker/workspace.py's scratch the same "
                        "(v0.31.0 adds keyed persistent resources beside it), V2's profile_run and _dummy_run the "
                        "same batch (max_num_tokens) and DP padding on Gloo (v1/worker/gpu/dp_utils.py)"),
    Era("0.32.0", True, "read at v0.32.0 against v0.31.0 (session 61): the finalize reduce-scatters into the layer's "
                        "output (prepare_finalize/naive_dp_ep.py:210-245, all2all.py:193 `combine_into_output`, "
                        "cuda_communicator.py:538-583 writing the preallocated output: `SCATTER_INTO_OUTPUT`); the "
                        "combine input from NCCL symmetric memory only under VLLM_USE_NCCL_SYMM_MEM, off by default "
                        "(all2all.py:175, cuda_communicator.py:747-764, envs.py:2099-2100), else _allocate_buffers as "
                        "before (modular_kernel.py:1058-1108); MarlinExperts.workspace_shapes (experts/marlin_moe.py:"
                        "686) and the Marlin rounding (oracle/mxfp4.py:844-846) the same; workspace.py's scratch the "
                        "same but for an allocation context (nullcontext by default)"),
    Era("0.33.0", True, "read at v0.33.0 and v0.34.0 against v0.32.0 (session 63): naive_dp_ep.py's changes are "
                        "DBO's comm region (no-op without DBO) and an a1_scale assert, combine_into_output still "
                        "(:280); MarlinExperts.workspace_shapes byte-identical (experts/marlin_moe.py:691 / :638; "
                        "v0.33.0 adds a model's post-GEMM2 hook, v0.34.0 drops Marlin's int8/FP8 input quantization), "
                        "oracle/mxfp4.py's rounding the same (:837 / :822), modular_kernel.py's output new_empty of "
                        "output_hidden_dim, which MarlinExperts does not override (:1536 / :1596), get_simultaneous "
                        "(:1207 / :1267) as before; the runner's hidden padding (runner/moe_runner.py:530 / :538) and "
                        "the TP × DP split (config.py:1106 / :1143) the same; AgRsAll2AllManager byte-identical"),
))  # fmt: skip
# Whether the finalize's reduce-scatter writes into the layer's output (no tensor of the rank's own rows of its own)
SCATTER_INTO_OUTPUT: Eras[bool] = Eras((
    Era("", False, "all2all.py:138-149 at v0.29.0: reduce_scatterv into a new tensor, copied into the output"),
    Era("0.32.0", True, "prepare_finalize/naive_dp_ep.py:241-245 at v0.32.0: combine_into_output"),
))  # fmt: skip
MARLIN_WIDTH_ROUND = 128  # the rank's expert width, rounded up (oracle/mxfp4.py:735)
MARLIN_HIDDEN_ROUND = 256  # the hidden size, rounded up on CUDA (oracle/mxfp4.py:739)


def marlin_dp_read(model: ModelSpec, layout: ParallelLayout, version: ResolvedVersion, gpu_name: str | None,
                   settings: LaunchSettings, backend: str | None) -> str | None:  # fmt: skip
    """The release's source where this module prices the launch's gathered layer: DP replicas of an MXFP4 MoE whose
    experts run Marlin, at TP 1, PP 1, without expert parallelism, with the default 'allgather_reducescatter'
    all-to-all (`backend`), on the V2 model runner (which pads on Gloo), in a release read; else None."""
    era = MARLIN_DP_ERAS.era(version)
    if not era.value or model.moe is None or model.quant.method != "mxfp4" or layout.replicas < 2:
        return None
    if layout.tp != 1 or layout.pp != 1 or layout.ep > 1 or backend != "allgather_reducescatter":
        return None
    if not runs_v2(version, model, settings):
        return None
    found = mxfp4_backend(settings, gpu_name, version)  # Marlin beyond doubt (SM 8.x, or stated/printed): not where
    # the install may run Triton instead (`other`), whose DP layer (gpt_oss_triton_kernels_moe.py) was not read
    return era.source if found is not None and found.name == MARLIN and found.other is None else None


def marlin_workspace_bytes(model: ModelSpec, layout: ParallelLayout, rows: int) -> int:
    """The workspace manager's buffer after one Marlin MoE layer on `rows` gathered rows (module docstring)."""
    moe = model.moe
    assert moe is not None
    dtype, topk = model.dtype_bytes, moe.experts_per_token
    width = round_up(moe.expert_intermediate_size // max(layout.moe_shards, 1), MARLIN_WIDTH_ROUND)
    hidden = round_up(model.hidden_size, MARLIN_HIDDEN_ROUND)
    shared = max(rows * topk * max(width, hidden), rows * hidden) * dtype
    second = rows * topk * max(2 * width, hidden) * dtype
    return round_up(shared, ALIGNMENT) + round_up(second, ALIGNMENT)


def marlin_layer_bytes(model: ModelSpec, layout: ParallelLayout, tokens: int, *, scatter_rows: bool = True) -> int:
    """One rank's Marlin MoE layer at its largest in the DP profile (`tokens` its own rows): the held residual and
    normed input, the padded hidden states, router logits and top-k of its own rows, the kernel's output, the
    gathered padded hidden states and top-k, the workspace, and the reduce-scatter's own rows (`scatter_rows`; none
    where it writes into the output: `SCATTER_INTO_OUTPUT`)."""
    moe = model.moe
    assert moe is not None
    dtype, topk = model.dtype_bytes, moe.experts_per_token
    hidden = round_up(model.hidden_size, MARLIN_HIDDEN_ROUND)
    rows = layout.replicas * tokens
    padded = 3 if scatter_rows else 2  # the padded input, the kernel's output (and the reduce-scatter's own rows)
    own = (HELD_ROWS * tokens * model.hidden_size * dtype + tokens * moe.num_routed_experts * dtype
           + tokens * topk * TOPK_BYTES + padded * tokens * hidden * dtype)
    gathered = rows * hidden * dtype + rows * topk * TOPK_BYTES
    return own + gathered + marlin_workspace_bytes(model, layout, rows)
