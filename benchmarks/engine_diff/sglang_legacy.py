"""SGLang releases before the KVCacheConfigurator (late 2025), where ModelRunner.__init__ sizes the
pools itself: one pipeline stage of one case, run in its own process. Imported by sglang_runner.py
inside the engine's venv; the stand-ins are listed in that file's docstring."""

from __future__ import annotations

import traceback
from typing import Any

from sglang_standins import (
    build_model,
    group_shell,
    join_stage_group,
    param_bytes,
    placeholder_reads,
    server_argv,
)
from standins import FREE_BYTES, cuda_to_meta, refusal_or_harness_error


def remote_model_refusal(exc: BaseException, folder: str | None) -> str | None:
    """The engine's own refusal where the release's Transformers fallback needs the checkpoint's modeling code.

    SGLang 0.5.6.post2 srt/model_loader/utils.py resolve_transformers_arch (an architecture SGLang has no class for)
    loads every auto_map class (get_class_from_dynamic_module), then, with the default model_impl auto, raises
    "{arch} has no SGlang implementation and the Transformers implementation is not compatible with SGLang." where
    the modeling class's is_backend_compatible() (transformers 4.57 PreTrainedModel: its _supports_attention_backend,
    False by default) is False. A config folder holds no modeling code, so the load fails first (OSError "does not
    appear to have a file named …"); for a class REMOTE_CODE_WITHOUT_BACKEND lists (its published file read: it sets
    no _supports_attention_backend) the launch's answer is that refusal, quoted with the reading."""
    import json
    import os

    from sglang_config_failures import REMOTE_CODE_WITHOUT_BACKEND

    if not folder or "does not appear to have a file named" not in str(exc):
        return None
    if "resolve_transformers_arch" not in "".join(traceback.format_tb(exc.__traceback__)):
        return None
    try:
        with open(os.path.join(folder, "config.json")) as fh:
            config = json.load(fh)
    except (OSError, ValueError):
        return None
    model_class = (config.get("auto_map") or {}).get("AutoModel")
    if model_class not in REMOTE_CODE_WITHOUT_BACKEND:  # resolve_transformers_arch takes auto_map's AutoModel
        return None
    arch = (config.get("architectures") or ["?"])[0]
    return (f"{arch} has no SGlang implementation and the Transformers implementation is not compatible with SGLang. "
            f"({model_class}: {REMOTE_CODE_WITHOUT_BACKEND[model_class]})")  # fmt: skip


class _PoolsReached(Exception):
    """pool-sentinel: the first request pool is where sizing ends and GPU allocation starts."""

    def __init__(self, size: int) -> None:
        super().__init__(f"request pool of {size}")
        self.size = size


def _pool_sentinel(*args: Any, size: int, **kwargs: Any) -> None:
    raise _PoolsReached(size)


def _stage_ranks(rank: int, size: int, in_group: int, stride: int) -> list[int]:
    return [rank + (i - in_group) * stride for i in range(size)]


def run_rank_legacy(case: dict[str, Any], pp_rank: int) -> dict[str, Any]:
    """ModelRunner.__init__ of pipeline stage `pp_rank` (TP rank 0), as the engine runs it: it
    profiles the memory (the MIN over the stages' processes is SGLang's own all_reduce), builds the
    model (on meta), sizes the pools in init_memory_pool and stops where allocation starts. Stand-ins:
    init_distributed_environment / initialize_model_parallel build SGLang's own GroupCoordinator
    class (without its __init__) as the engine's arguments lay the groups out (parallel-groups),
    get_model builds the model on meta (after which free memory reads as after weight load), and
    the request pool constructors stop the run (pool-sentinel)."""
    import sglang.srt.distributed.parallel_state as ps
    import sglang.srt.layers.dp_attention as dp_attention
    import sglang.srt.model_executor.model_runner as mr
    import torch.distributed as dist
    from sglang.srt.configs.model_config import ModelConfig
    from sglang.srt.server_args import prepare_server_args

    out: dict[str, Any] = {}
    tp, pp = case["tp"], case.get("pp", 1)
    rank = pp_rank * tp
    FREE_BYTES["now"] = case["free_before_bytes"]
    stage_groups = join_stage_group(case["store"], pp_rank, pp)
    Coordinator = ps.GroupCoordinator

    def init_distributed_environment(*args: Any, **kwargs: Any) -> None:
        ps._WORLD = group_shell(Coordinator, "world", list(range(tp * pp)), rank, dist.group.WORLD)

    def initialize_model_parallel(
        tensor_model_parallel_size: int = 1, expert_model_parallel_size: int = 1,
        pipeline_model_parallel_size: int = 1, *args: Any, **kwargs: Any,
    ) -> None:  # fmt: skip
        ep = expert_model_parallel_size
        own = stage_groups[pp_rank]
        ps._TP = group_shell(Coordinator, "tp", _stage_ranks(rank, tp, 0, 1), rank, own)
        ps._MOE_EP = group_shell(Coordinator, "moe_ep", _stage_ranks(rank, ep, 0, tp // ep), rank, own)
        ps._MOE_TP = group_shell(Coordinator, "moe_tp", _stage_ranks(rank, tp // ep, 0, 1), rank, own)
        ps._PP = group_shell(Coordinator, "pp", _stage_ranks(rank, pp, pp_rank, tp), rank, dist.group.WORLD)

    def coordinator(group_ranks: list[list[int]], *args: Any, **kwargs: Any) -> Any:  # initialize_dp_attention's
        ranks = next(r for r in group_ranks if rank in r)
        return group_shell(Coordinator, kwargs.get("group_name") or "attn", ranks, rank, stage_groups[pp_rank])

    model_holder: dict[str, Any] = {}

    def get_model(*, model_config: Any, **kwargs: Any) -> Any:
        model_holder["model"] = build_model(model_config)
        FREE_BYTES["now"] = case["free_after_bytes"]  # the weights are now resident
        return model_holder["model"]

    dp_attention.GroupCoordinator = coordinator
    mr.init_distributed_environment = init_distributed_environment
    mr.initialize_model_parallel = initialize_model_parallel
    mr.get_model = get_model
    for name in ("ReqToTokenPool", "HybridReqToTokenPool"):
        setattr(mr, name, _pool_sentinel)
    with placeholder_reads() as reads:
        try:
            server_args = prepare_server_args(server_argv(case))
            try:
                from sglang.srt.server_args import set_global_server_args_for_scheduler

                set_global_server_args_for_scheduler(server_args)
            except ImportError:
                pass
            model_config = ModelConfig.from_server_args(server_args)
            runner = mr.ModelRunner.__new__(mr.ModelRunner)
            try:
                with cuda_to_meta("cpu"):  # cpu-device: the constructor's small cuda tensors (read back with
                    # .item()) go to the CPU; the run stops before the pools, the only large allocations
                    mr.ModelRunner.__init__(
                        runner, model_config=model_config, mem_fraction_static=server_args.mem_fraction_static,
                        gpu_id=0, tp_rank=0, tp_size=tp, moe_ep_rank=0, moe_ep_size=server_args.ep_size,
                        pp_rank=pp_rank, pp_size=pp, nccl_port=0, server_args=server_args,
                    )  # fmt: skip
                raise RuntimeError("ModelRunner finished without building a request pool")
            except _PoolsReached as reached:
                pool_size = reached.size
            model = model_holder["model"]
            out.update(
                status="ok",
                max_total_num_tokens=runner.max_total_num_tokens,
                full_max_total_num_tokens=getattr(runner, "full_max_total_num_tokens", None),
                swa_max_total_num_tokens=getattr(runner, "swa_max_total_num_tokens", None),
                max_running_requests=None,  # TpModelWorker derives it after the pools exist (not run)
                request_pool_size=pool_size,
                page_size=server_args.page_size,
                cell_size=None,  # a local of profile_max_num_token in these releases
                kv_cache_dtype=str(runner.kv_cache_dtype),
                max_mamba_cache_size=getattr(server_args, "max_mamba_cache_size", None),
                attention_backend=getattr(server_args, "attention_backend", None),
                is_hybrid_swa=bool(runner.is_hybrid_swa),
                use_mla_backend=bool(runner.use_mla_backend),
                sliding_window_size=getattr(runner, "sliding_window_size", None),
                stage={
                    "pp_rank": pp_rank,
                    "layers": [runner.start_layer, runner.end_layer],
                    "param_bytes": param_bytes(model),
                    "max_total_num_tokens": runner.max_total_num_tokens,
                },
            )
        except BaseException as exc:  # noqa: BLE001 — a refusal is a result
            if isinstance(exc, KeyboardInterrupt):
                raise
            text = str(exc).strip()
            out.update(
                status="refused" if isinstance(exc, SystemExit) else refusal_or_harness_error(exc, "sglang"),
                error_type=type(exc).__name__,
                message=text.splitlines()[0][:600] if text else type(exc).__name__,
                traceback_tail=traceback.format_exc().strip().splitlines()[-14:],
            )
            refusal = remote_model_refusal(exc, case.get("dir"))
            if refusal is not None:
                out.update(status="refused", message=refusal)
        out["placeholder_reads"] = sorted(reads)
    out["shells"] = {}  # no shell: ModelRunner's own __init__ runs
    return out
