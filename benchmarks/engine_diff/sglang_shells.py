"""SGLang's model shell and the path for releases before the KVCacheConfigurator (late 2025), where
ModelRunner.__init__ sizes the pools itself. Imported by sglang_runner.py inside the engine's venv;
the stand-ins are listed in that file's docstring."""

from __future__ import annotations

import contextlib
import inspect
import traceback
from typing import Any

from standins import FREE_BYTES, cuda_to_meta, refusal_or_harness_error


class _PoolsReached(Exception):
    """pool-sentinel: the first request pool is where sizing ends and GPU allocation starts."""

    def __init__(self, size: int) -> None:
        super().__init__(f"request pool of {size}")
        self.size = size


def _pool_sentinel(*args: Any, size: int, **kwargs: Any) -> None:
    raise _PoolsReached(size)


class _LegacyGroup:
    """parallel-groups (older releases): rank 0 of a group of `size` ranks."""

    def __init__(self, size: int) -> None:
        self.world_size = size
        self.rank_in_group = 0
        self.rank = 0
        self.local_rank = 0
        self.ranks = list(range(size))
        self.cpu_group = None
        self.device_group = None
        self.is_first_rank = True
        self.is_last_rank = True


def run_case_legacy(case: dict[str, Any]) -> dict[str, Any]:
    """Releases before the KVCacheConfigurator (late 2025): ModelRunner.__init__ sizes the pools
    in init_memory_pool (profile_max_num_token, max_num_reqs, page alignment, hybrid SWA split)
    and then allocates them. The engine's __init__ runs as it is, with three stand-ins:
    init_distributed_environment / initialize_model_parallel (parallel-groups), get_model (the
    model-shell, after which free memory reads as after weight load) and the request pool
    constructors (pool-sentinel: the run stops where allocation starts)."""
    import sglang.srt.distributed.parallel_state as ps
    import sglang.srt.model_executor.model_runner as mr
    from sglang.srt.configs.model_config import ModelConfig
    from sglang.srt.server_args import prepare_server_args

    keys = (
        "config",
        "tp",
        "kv_dtype",
        "gpu",
        "max_model_len",
        "free_before_bytes",
        "free_after_bytes",
        "mem_fraction_static",
    )
    out: dict[str, Any] = {k: case[k] for k in keys}
    tp = case["tp"]
    FREE_BYTES["now"] = case["free_before_bytes"]

    def initialize_model_parallel(*args: Any, **kwargs: Any) -> None:
        for name in ("_TP", "_PP", "_WORLD", "_MOE_EP", "_MOE_TP", "_ATTN_TP", "_ATTN_CP"):
            if hasattr(ps, name):
                setattr(ps, name, _LegacyGroup(1 if name == "_PP" else tp))

    def get_model(*, model_config: Any, **kwargs: Any) -> Any:
        from sglang.srt.model_loader.utils import get_model_architecture

        model_class, _ = get_model_architecture(model_config)
        model = model_shell(model_class, model_config)
        FREE_BYTES["now"] = case["free_after_bytes"]  # the weights are now resident
        return model

    ps._WORLD = _LegacyGroup(tp)
    with contextlib.suppress(ImportError):  # process-wide state of the previous case
        import sglang.srt.eplb.expert_location as expert_location

        expert_location._global_expert_location_metadata = None
    import sglang.srt.layers.dp_attention as dp_attention
    import torch.distributed

    torch.distributed.get_backend = lambda *a, **k: "nccl"  # type: ignore[assignment]
    dp_attention.GroupCoordinator = lambda group_ranks, *a, **k: _LegacyGroup(len(group_ranks[0]))
    mr.init_distributed_environment = lambda *a, **k: None
    mr.initialize_model_parallel = initialize_model_parallel
    mr.get_model = get_model
    for name in ("ReqToTokenPool", "HybridReqToTokenPool"):
        setattr(mr, name, _pool_sentinel)
    try:
        argv = [
            "--model-path",
            case["dir"],
            "--tp-size",
            str(tp),
            "--kv-cache-dtype",
            case["kv_dtype"],
            "--mem-fraction-static",
            str(case["mem_fraction_static"]),
            "--context-length",
            str(case["max_model_len"]),
        ]
        server_args = prepare_server_args(argv)
        with contextlib.suppress(ImportError, AttributeError):
            from sglang.srt.server_args import set_global_server_args_for_scheduler

            set_global_server_args_for_scheduler(server_args)
        model_config = ModelConfig.from_server_args(server_args)
        runner = mr.ModelRunner.__new__(mr.ModelRunner)
        try:
            with cuda_to_meta("cpu"):  # cpu-device: the constructor's small cuda tensors (read back with
                # .item()) go to the CPU; the run stops before the pools, the only large allocations
                mr.ModelRunner.__init__(
                    runner,
                    model_config=model_config,
                    mem_fraction_static=server_args.mem_fraction_static,
                    gpu_id=0,
                    tp_rank=0,
                    tp_size=tp,
                    moe_ep_rank=0,
                    moe_ep_size=server_args.ep_size,
                    pp_rank=0,
                    pp_size=1,
                    nccl_port=0,
                    server_args=server_args,
                )
            raise RuntimeError("ModelRunner finished without building a request pool")
        except _PoolsReached as reached:
            pool_size = reached.size
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
        )
    except BaseException as exc:  # noqa: BLE001 — a refusal is a result
        if isinstance(exc, KeyboardInterrupt):
            raise
        text = str(exc).strip()
        out.update(
            status=refusal_or_harness_error(exc, "sglang"),
            error_type=type(exc).__name__,
            message=text.splitlines()[0][:600] if text else type(exc).__name__,
            traceback_tail=traceback.format_exc().strip().splitlines()[-14:],
        )
    return out


def model_shell(model_class: Any, model_config: Any) -> Any:
    """model-shell: the model class without its __init__, holding what its __init__ stores and
    SGLang reads back when sizing: the HF config, and the quantization config the loader hands the
    constructor (`_get_quantization_config`; its kv_cache_quant_algo decides an FP8 KV cache)."""
    import torch.nn
    from sglang.srt.configs.load_config import LoadConfig
    from sglang.srt.model_loader import loader

    model = model_class.__new__(model_class)
    torch.nn.Module.__init__(model)
    model.config = model_config.hf_config
    get_quantization_config = loader._get_quantization_config
    args: list[Any] = [model_config, LoadConfig(load_format="dummy")]
    if "packed_modules_mapping" in inspect.signature(get_quantization_config).parameters:  # older releases
        args.append(getattr(model_class, "packed_modules_mapping", {}))
    model.quant_config = get_quantization_config(*args)
    return model
