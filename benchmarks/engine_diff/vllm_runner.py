"""Runs vLLM's own KV-cache sizing path on a machine without a GPU, one case per forked process.

Runs inside the (engine, version) venv that `run.py` makes: it imports vLLM and the standard
library only, never kvtop. vLLM is imported once; each case then runs in a child forked from that
parent (isolation.py), so nothing one case writes (environment, module globals, caches) reaches
another. For each case (a config folder, the engine's own command-line flags, TP and PP, KV dtype,
max_model_len and a fixed KV memory budget) it runs the engine's own code in the engine's order:

  EngineArgs.add_cli_args / from_cli_args        the command line, parsed by vLLM's own parser
  create_engine_config()                         ModelConfig, CacheConfig, ParallelConfig, quantization
  for each pipeline stage (TP rank 0 of it):
    initialize_model(vllm_config) on "meta"      the stage's Attention / MLA / Mamba layers (PP split)
    Platform.update_block_size_for_backend       the attention backend and its block size
    Worker(vllm_config, …)                       vLLM's own worker, its own __init__
  EngineCore._initialize_kv_caches               through vLLM's own Executor methods over the
                                                 workers: specs, groups, get_kv_cache_configs (the
                                                 MIN of num_blocks over workers), the scheduler's
                                                 config and the "GPU KV cache size" figure

and writes what the engine decided: bytes per block, block size, num_blocks, the logged tokens,
the groups, each stage's KV specs layer by layer and the parameter bytes of its model; or the
refusal and its message.

Stand-ins (each minimal; none computes a number the comparison reads): listed in vllm_standins.py's docstring.
Not a stand-in: engine-failures (vllm_config_failures.py) names the failures of vLLM's own code on what a config.json
holds, which every launch meets on any device: the row is the engine's refusal with its reason, not a harness error.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import os
import sys
import time
import traceback
from typing import Any

import vllm_readings as readings
from checkpoint_config_classes import custom_code_reason, install_checkpoint_configs
from engine_failures import first_line
from isolation import run_in_child, warm_imports
from standins import (
    PLACEHOLDER_READS,
    cuda_to_meta,
    fields_assigned,
    refusal_or_harness_error,
    shell,
    shell_check,
)
from vllm_config_failures import classify
from vllm_standins import (
    clear_parallel_groups,
    host_values,
    install_import_stand_ins,
    install_parallel_groups,
)

# load-rewires: classes whose own load_weights swaps a module for another where the checkpoint lacks its tensor,
# which `--load-format dummy` never runs. Phi3VForCausalLM (phi3v.py, 0.33.0): without
# `model.vision_embed_tokens.wte.weight` its top-level embed_tokens becomes the language model's; Phi-3-vision's
# checkpoints hold only `model.embed_tokens.weight` (transformers' convert_phi3v weight MAPPINGS list no wte).
LOAD_REWIRES = ("Phi3VForCausalLM",)

CHECKPOINT_HEAD = (
    "checkpoint_lm_head"  # checkpoint-head: the model folder's marker (registry_sweep._model_dir)
)

STAND_INS = [
    "compiled-extensions",
    "absent-packages",
    "torch-ops",
    "cuda-platform",
    "model-inspection",
    "parallel-groups",
    "meta-device",
    "worker-device",
    "model-runner",
    "profile-run",
    "executor",
    "checkpoint-head",
    "checkpoint-config",
    "host-values",
    "gemm-rs-ar",
    "tokenizer-vocab",
    "processor-free-info",
    "token-id-tokenizer",
    "load-rewires",
]


_param_bytes = readings.param_bytes  # a module global: param_shapes_runner wraps it


class CommandLineRefused(ValueError):
    """vLLM's own argument parser refused the command line (it exits; the launch never starts)."""


KEYS = ("config", "variant", "flags", "tp", "pp", "kv_dtype", "gpu", "max_model_len", "budget_bytes")


class _Capture(logging.Handler):
    """The engine's own log records of one case (the `GPU KV cache size` line among them)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        with contextlib.suppress(Exception):
            self.messages.append(record.getMessage())


def _engine_args(case: dict[str, Any]) -> Any:
    """EngineArgs from the command line a person would type, parsed by vLLM's own parser."""
    import dataclasses

    from vllm.engine.arg_utils import EngineArgs

    try:
        from vllm.utils.argparse_utils import FlexibleArgumentParser
    except ImportError:  # older releases
        from vllm.utils import FlexibleArgumentParser  # type: ignore[attr-defined,no-redef]

    argv = [
        "--model", case["dir"], "--tensor-parallel-size", str(case["tp"]),
        "--kv-cache-dtype", case["kv_dtype"], "--max-model-len", str(case["max_model_len"]),
        "--kv-cache-memory-bytes", str(case["budget_bytes"]), "--load-format", "dummy", "--skip-tokenizer-init",
        *case.get("flags", ()),
    ]  # fmt: skip
    if "swap_space" in {f.name for f in dataclasses.fields(EngineArgs)}:
        argv += ["--swap-space", "0"]  # older releases check CPU swap against this machine's host memory
    parser = EngineArgs.add_cli_args(FlexibleArgumentParser())
    errors = io.StringIO()
    try:
        with contextlib.redirect_stderr(errors):
            namespace = parser.parse_args(argv)
    except SystemExit as exit_:
        lines = [line for line in errors.getvalue().splitlines() if line.strip()]
        raise CommandLineRefused(lines[-1] if lines else f"exit {exit_.code}") from None
    return EngineArgs.from_cli_args(namespace)


def _runner_shell(worker: Any) -> Any:
    """model-runner: the runner class the worker would build, holding what its get_kv_cache_spec reads."""
    vllm_config = worker.vllm_config
    if getattr(worker, "use_v2_model_runner", False):
        from vllm.v1.worker.gpu.model_runner import GPUModelRunner as Runner
    else:
        from vllm.v1.worker.gpu_model_runner import GPUModelRunner as Runner  # type: ignore[no-redef]
    parallel = vllm_config.parallel_config
    return shell(
        Runner,
        "model-runner",
        vllm_config=vllm_config,
        model_config=vllm_config.model_config,
        cache_config=vllm_config.cache_config,
        parallel_config=parallel,
        shared_kv_cache_layers={},
        speculator=None,  # no speculative decoding in the sweep
        dcp_size=parallel.decode_context_parallel_size,
        methods={"profile_run": lambda *args, **kwargs: None},  # profile-run
    )


def _engine_config(case: dict[str, Any], args: Any) -> Any:
    """create_engine_config(), then (checkpoint-head) the untying a launch that reads the checkpoint does."""
    from unittest import mock

    from vllm.usage.usage_lib import UsageContext

    vllm_config = args.create_engine_config(usage_context=UsageContext.OPENAI_API_SERVER)
    untie = getattr(vllm_config.model_config, "maybe_untie_word_embeddings", None)
    if callable(untie) and os.path.exists(os.path.join(case["dir"], CHECKPOINT_HEAD)):
        import vllm.config.model as model_module

        with mock.patch.object(model_module, "checkpoint_has_lm_head", lambda *args, **kwargs: True):
            untie()
    return vllm_config


def _stage(case: dict[str, Any], args: Any, pp_rank: int, platform: Any) -> tuple[Any, Any]:
    """One pipeline stage: its config, its model on meta, its block size, vLLM's own Worker."""
    import torch
    from vllm.config import set_current_vllm_config
    from vllm.model_executor.model_loader.utils import initialize_model
    from vllm.utils.torch_utils import set_default_torch_dtype
    from vllm.v1.worker.gpu_worker import Worker

    tp, pp = case["tp"], case.get("pp", 1)
    install_parallel_groups(tp, pp, pp_rank)
    vllm_config = _engine_config(case, args)
    with contextlib.suppress(ImportError, TypeError):  # the worker makes it in init_device (newer releases)
        from vllm.v1.worker.workspace import init_workspace_manager

        init_workspace_manager(torch.device("meta"))
    with (
        set_default_torch_dtype(vllm_config.model_config.dtype),
        torch.device("meta"),
        cuda_to_meta(),
        host_values(),
    ):
        model = initialize_model(vllm_config=vllm_config)
    if type(model).__name__ in LOAD_REWIRES:  # load-rewires: what its load_weights does with such a checkpoint
        with set_current_vllm_config(vllm_config):
            model.load_weights(iter(()))
    with set_current_vllm_config(vllm_config):
        update_block_size = getattr(platform, "update_block_size_for_backend", None)
        if callable(update_block_size):  # newer releases; older ones decide in check_and_update_config
            update_block_size(vllm_config)
    rank = pp_rank * tp
    worker = Worker(vllm_config, local_rank=rank % 8, rank=rank, distributed_init_method="tcp://stand-in")
    worker.model_runner = _runner_shell(worker)
    worker.init_snapshot = _memory_snapshot(platform)
    return worker, model


def _memory_snapshot(platform: Any) -> Any:
    """worker-device: init_device's memory snapshot, as on an idle GPU (read for a log line only)."""
    try:
        from vllm.utils.mem_utils import MemorySnapshot
    except ImportError:  # older releases
        from vllm.utils import MemorySnapshot  # type: ignore[attr-defined,no-redef]
    total = platform.get_device_total_memory()
    return shell(MemorySnapshot, "memory-snapshot", free_memory=total, total_memory=total)


def _executor(vllm_config: Any, workers: list[Any], tp: int) -> Any:
    """executor: vLLM's own Executor methods; collective_rpc calls each rank's worker in rank order,
    in that worker's parallel groups (its own process on a GPU node)."""
    from vllm.v1.executor.abstract import Executor

    class StandInExecutor(Executor):
        kv_cache_configs: list[Any] = []

        def _init_executor(self) -> None:
            return None

        def collective_rpc(self, method: Any, timeout: Any = None, args: tuple[Any, ...] = (),
                           kwargs: dict[str, Any] | None = None, non_block: bool = False, **rest: Any) -> Any:  # fmt: skip
            results = []
            for stage, worker in enumerate(workers):  # rank order: stage by stage, TP ranks of a stage alike
                install_parallel_groups(tp, len(workers), stage)
                if isinstance(method, str):
                    answer = getattr(worker, method)(*args, **(kwargs or {}))
                else:
                    answer = method(worker, *args, **(kwargs or {}))
                results += [answer] * tp
            _engine_core_groups(tp * len(workers))
            return results

        def initialize_from_config(self, kv_cache_configs: list[Any]) -> None:
            self.kv_cache_configs = list(kv_cache_configs)

        def compile_or_warm_up_model(self) -> Any:
            return None

        def check_health(self) -> None:
            return None

    return StandInExecutor(vllm_config)


def _engine_core_groups(world: int) -> None:
    """One process (world 1): the engine core is the worker's process and keeps its groups; with
    worker processes, the engine core's process has none."""
    if world > 1:
        clear_parallel_groups()


def _engine_core(executor: Any) -> Any:
    from vllm.v1.engine.core import EngineCore

    return shell(EngineCore, "engine-core", model_executor=executor, collective_rpc=executor.collective_rpc,
                 available_gpu_memory_for_kv_cache=-1)  # fmt: skip


def _stage_rows(stages: list[tuple[Any, Any]], tp: int) -> list[dict[str, Any]]:
    """Each stage's KV specs layer by layer and its parameter bytes, each taken in that stage's own
    parallel groups, as its worker process takes them (a Mamba layer's state shape reads the TP group's
    size; the engine core's process, where the sizing ended, has no groups)."""
    rows = []
    for stage, (worker, model) in enumerate(stages):
        install_parallel_groups(tp, len(stages), stage)
        rows.append(
            {"layer_specs": readings.layer_specs(worker.get_kv_cache_spec()), "param_bytes": _param_bytes(model)}
        )
    return rows


def run_case(case: dict[str, Any], platform: Any) -> dict[str, Any]:
    from vllm.config import set_current_vllm_config
    from vllm.v1.engine.core import EngineCore

    out: dict[str, Any] = {k: case[k] for k in KEYS if k in case}
    PLACEHOLDER_READS.clear()  # what the parent's imports read is not this case's
    capture = _Capture()
    vllm_logger = logging.getLogger("vllm")
    vllm_logger.addHandler(capture)
    try:
        args = _engine_args(case)
        stages = [_stage(case, args, r, platform) for r in range(case.get("pp", 1))]
        workers = [worker for worker, _ in stages]
        _RUNNER_V2[0] = bool(getattr(workers[0], "use_v2_model_runner", False))
        vllm_config = workers[0].vllm_config  # one process: the engine core shares the worker's config
        if case["tp"] * case.get("pp", 1) > 1:  # worker processes: the engine core keeps its own
            vllm_config = _engine_config(case, args)
        vllm_logger.removeHandler(capture)  # again: building the model may reconfigure vLLM's logging
        vllm_logger.addHandler(capture)
        # each stage's specs as the engine core collects them, before its sizing sets cache_config.block_size
        # to the least group block (v1/engine/core.py _initialize_kv_caches; at TP 1 the worker shares that
        # config, so specs read after it carry DeepSeek-V4's 4-token state block, not the 256 it sized)
        stage_rows = _stage_rows(stages, case["tp"])
        executor = _executor(vllm_config, workers, case["tp"])
        _engine_core_groups(case["tp"] * case.get("pp", 1))
        with set_current_vllm_config(vllm_config):
            scheduler_config = EngineCore._initialize_kv_caches(_engine_core(executor), vllm_config)
        if isinstance(scheduler_config, tuple):  # older releases: (gpu blocks, cpu blocks, config)
            scheduler_config = scheduler_config[-1]
        worker = executor.kv_cache_configs[0]
        groups = worker.kv_cache_groups
        cache = vllm_config.cache_config
        block = min(g.kv_cache_spec.block_size for g in groups) if groups else None
        tensors = worker.kv_cache_tensors
        if tensors and hasattr(tensors[0], "layer_stride"):  # one backing allocation that the groups alias
            pool_bytes = max(t.size for t in tensors)
        else:  # older releases: one tensor per layer slot, each shared by one layer of every group
            pool_bytes = sum(t.size for t in tensors)
        page_bytes_per_block = pool_bytes // max(worker.num_blocks, 1)
        logged = [m for m in capture.messages if "KV cache size:" in m]
        out.update(
            status="ok",
            block_size=block,
            num_blocks=worker.num_blocks,
            num_blocks_per_worker=sorted({c.num_blocks for c in executor.kv_cache_configs}),
            bytes_per_block=page_bytes_per_block,
            pool_bytes=pool_bytes,
            bytes_per_token=page_bytes_per_block / block if block else None,
            tokens_logged=readings.tokens_from_log(logged[-1]) if logged else None,
            kv_cache_size_tokens=getattr(cache, "kv_cache_size_tokens", None),
            max_concurrency=getattr(cache, "kv_cache_max_concurrency", None),
            cache_dtype=cache.cache_dtype,
            kv_cache_memory_bytes=cache.kv_cache_memory_bytes,
            max_model_len=vllm_config.model_config.max_model_len,
            max_num_seqs=vllm_config.scheduler_config.max_num_seqs,
            groups=[{"layers": len(g.layer_names), **readings.spec_row(g.kv_cache_spec)} for g in groups],
            scheduler_groups=[readings.spec_row(g.kv_cache_spec) for g in scheduler_config.kv_cache_groups],
            attention_backends=readings.backends(vllm_config),
            async_scheduling=getattr(vllm_config.scheduler_config, "async_scheduling", None),
            model_runner="V2" if getattr(workers[0], "use_v2_model_runner", False) else "V1",
            max_num_batched_tokens=vllm_config.scheduler_config.max_num_batched_tokens,
            max_in_flight_tokens=getattr(vllm_config, "max_in_flight_tokens", None),
            stages=stage_rows,
            log=[m for m in capture.messages if readings.worth_keeping(m)][-12:],
        )
    except BaseException as exc:  # noqa: BLE001 — a refusal is a result
        if isinstance(exc, KeyboardInterrupt):
            raise
        status = (
            "refused" if isinstance(exc, CommandLineRefused) else refusal_or_harness_error(exc, "vllm", case.get("dir"))
        )
        status, message = classify(exc, case) or (status, first_line(exc))  # engine-failures
        out.update(
            status=status,
            error_type=type(exc).__name__,
            message=(custom_code_reason(exc, case.get("dir")) or message)[:600],
            traceback_tail=traceback.format_exc().strip().splitlines()[-14:],
        )
    finally:
        vllm_logger.removeHandler(capture)
    out["shells"] = _shell_check()
    out["placeholder_reads"] = sorted(PLACEHOLDER_READS)
    if out["status"] == "ok" and any(c["not_in_class"] for c in out["shells"].values()):
        out.update(status="harness-error", message="a stand-in held a field its real class never assigns")
    return out


def _shell_classes(v2: bool) -> dict[str, type]:
    """The engine's real class of each shell (the runner's: V1 or V2, as the config picked)."""
    from vllm.v1.engine.core import EngineCore
    from vllm.v1.worker.gpu_model_runner import GPUModelRunner

    try:
        from vllm.utils.mem_utils import MemorySnapshot
    except ImportError:  # older releases
        from vllm.utils import MemorySnapshot  # type: ignore[attr-defined,no-redef]
    classes: dict[str, type] = {
        "engine-core": EngineCore, "model-runner": GPUModelRunner, "memory-snapshot": MemorySnapshot,
    }  # fmt: skip
    if v2:
        from vllm.v1.worker.gpu.model_runner import GPUModelRunner as V2

        classes["model-runner"] = V2
    return classes


def _shell_check() -> dict[str, Any]:
    return shell_check(_shell_classes(_RUNNER_V2[0]))


_RUNNER_V2 = [False]  # which runner class this case's workers took (set in run_case)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--cases", required=True, help="JSON list of cases (one GPU generation)")
    parser.add_argument("--out", required=True, help="JSON-lines output, appended case by case")
    parser.add_argument(
        "--in-process", action="store_true",
        help="run the cases one after another in this process (the order check's control: state leaks)",
    )  # fmt: skip
    args = parser.parse_args()
    with open(args.cases) as fh:
        cases = json.load(fh)
    gpus = {c["gpu"] for c in cases}
    if len(gpus) != 1:
        raise SystemExit("one GPU generation per run (the platform is fixed at import)")
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "INFO")
    platform = install_import_stand_ins(gpus.pop())
    import vllm.engine.arg_utils  # noqa: F401  (vLLM configures its loggers on import)
    import vllm.transformers_utils.configs as engine_configs
    import vllm.v1.engine.core  # noqa: F401  (imported once, before the cases fork)
    import vllm.v1.worker.gpu_worker  # noqa: F401
    from vllm.transformers_utils.config import _CONFIG_REGISTRY

    install_checkpoint_configs(frozenset(_CONFIG_REGISTRY), engine_configs)

    logging.getLogger("vllm").setLevel(logging.INFO)
    for v2 in (False, True):  # the shells' classes read once here, before the cases fork
        with contextlib.suppress(ImportError):
            for cls in _shell_classes(v2).values():
                fields_assigned(cls)
    for case in cases:
        started = time.monotonic()
        if args.in_process:
            result = run_case(case, platform)
        else:
            result = run_in_child(lambda c: run_case(c, platform), case)
            warm_imports(result)
        result = {**{k: case[k] for k in KEYS if k in case}, **result}
        result["seconds"] = round(time.monotonic() - started, 2)
        with open(args.out, "a") as fh:
            fh.write(json.dumps(result) + "\n")
        print(
            f"{case['config']} {case.get('variant', 'default')} tp{case['tp']} pp{case.get('pp', 1)} "
            f"{case['kv_dtype']} {case['gpu']}: {result['status']} "
            f"{result.get('tokens_logged') or result.get('message', '')} ({result['seconds']} s)",
            flush=True,
        )
    if args.in_process:  # threads the engine started in this process would keep it alive
        sys.stdout.flush()
        os._exit(0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
