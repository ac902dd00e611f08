"""Runs vLLM's own KV-cache sizing path on a machine without a GPU, one case per line of output.

Runs inside the (engine, version) venv that `run.py` makes: it imports vLLM and the standard
library only, never kvtop. For each case (a config folder, TP, KV dtype, max_model_len and a fixed
KV memory budget) it runs the engine's own code in the order the engine runs it:

  EngineArgs(...).create_engine_config()        ModelConfig, CacheConfig, ParallelConfig, quantization
  initialize_model(vllm_config) on "meta"       every Attention / MLA / Mamba layer, as on rank 0 of TP
  Platform.update_block_size_for_backend        the attention backend and its block size
  EngineCore._initialize_kv_caches              specs, groups, get_kv_cache_configs, num_blocks, the
                                                scheduler's config and the "GPU KV cache size" figure

and writes what the engine decided: bytes per token per rank (Σ page bytes of one block / block
size), block size, num_blocks, the logged tokens, the groups; or the refusal and its message.

Stand-ins (each minimal; none computes a number the comparison reads):
  compiled-extensions    vLLM's compiled modules (`vllm/*.so`: _C, _moe_C, flash-attn, FlashMLA, …)
                         load as empty modules (and `torch.ops.load_library` of them does
                         nothing): they need libcuda.so.1. Availability checks that import
                         them (FA2/FA3, FlashMLA, DeepGEMM) answer as on a GPU machine with
                         the same wheel.
  absent-packages        torchvision (its CUDA build cannot sit beside CPU torch 2.13; transformers'
                         image processors import it at module level) and flashinfer.comm (its
                         import opens libcudart; all-reduce fusion only) resolve to placeholders.
  torch-ops              the `torch.ops` namespaces of those libraries answer any op with a callable
                         returning False (import-time capability queries; layer constructors only
                         look ops up); fake-tensor registrations for them are skipped.
  triton-config          only where Triton is not installed (a fresh venv has it: xgrammar needs
                         it): vLLM's Triton placeholder gets a `Config` keeping its fields.
  cuda-platform          a CUDA platform reporting the case's compute capability (sm80 A100, sm90
                         H100, sm100 B200), its name and memory, without NVML.
  model-inspection       the model registry inspects a model class in-process (vLLM uses a
                         subprocess only to keep CUDA uninitialised; the subprocess lacks these stand-ins).
  parallel-groups        torch.distributed groups: rank 0 of each group with the case's TP size.
  meta-device            the model is built under `torch.device("meta")`; the `cuda` device and
                         CUDA streams/events created in constructors go to meta / a placeholder.
  executor               EngineCore's model executor: answers get_kv_cache_specs with
                         GPUModelRunner.get_kv_cache_spec (the engine's own), determine_available_memory
                         with the case's fixed budget (what the worker returns when
                         kv_cache_memory_bytes is set), the supported KV layouts with the worker's
                         own method; allocation, warm-up and compilation do nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import logging
import os
import sys
import time
import traceback
import types
from typing import Any

from standins import cuda_to_meta, refusal_or_harness_error
from vllm_standins import install_import_stand_ins, install_parallel_groups

STAND_INS = [
    "compiled-extensions",
    "absent-packages",
    "torch-ops",
    "triton-config",
    "cuda-platform",
    "model-inspection",
    "parallel-groups",
    "meta-device",
    "executor",
]


# GPU generation -> (compute capability, device name, total bytes) the stood-in platform reports.
class _Capture(logging.Handler):
    """The engine's own log records of one case (the `GPU KV cache size` line among them)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        with contextlib.suppress(Exception):
            self.messages.append(record.getMessage())


def _clear_once_caches() -> None:
    import vllm.logger as vlog

    for name in ("_print_debug_once", "_print_info_once", "_print_warning_once", "_print_error_once"):
        fn = getattr(vlog, name, None)
        if fn is not None and hasattr(fn, "cache_clear"):
            fn.cache_clear()


class _Executor:
    """executor: the parts of the model executor that EngineCore's KV initialisation calls."""

    def __init__(self, vllm_config: Any, budget: int) -> None:
        self.vllm_config = vllm_config
        self.budget = budget
        self.shared_kv_cache_layers: dict[str, str] = {}
        self.kv_cache_configs: list[Any] = []

    def get_kv_cache_specs(self) -> list[dict[str, Any]]:
        from vllm.v1.worker.gpu_model_runner import GPUModelRunner

        return [GPUModelRunner.get_kv_cache_spec(self)]  # type: ignore[arg-type]

    def determine_available_memory(self) -> list[int]:
        return [self.budget]

    def get_supported_kv_cache_layouts(self) -> list[list[str]]:
        from vllm.v1.worker.worker_base import WorkerBase

        return [WorkerBase.get_supported_kv_cache_layouts(self)]  # type: ignore[arg-type]

    def set_kv_cache_layout(self, layout: str, interleave: int) -> None:
        from vllm.v1.worker.worker_base import WorkerBase

        WorkerBase.set_kv_cache_layout(self, layout, interleave)  # type: ignore[arg-type]

    def initialize_from_config(self, kv_cache_configs: list[Any]) -> None:
        self.kv_cache_configs = list(kv_cache_configs)

    def compile_or_warm_up_model(self) -> None:
        return None

    def collective_rpc(self, method: str, *args: Any, **kwargs: Any) -> list[Any]:
        return [None]


def _spec_row(spec: Any) -> dict[str, Any]:
    inner = getattr(spec, "kv_cache_specs", None)
    kind = type(spec).__name__
    if inner:
        kind += "[" + ",".join(sorted({type(s).__name__ for s in inner.values()})) + "]"
    row = {"kind": kind, "block_size": spec.block_size, "page_size_bytes": spec.page_size_bytes}
    for attr in ("sliding_window", "attention_chunk_size", "dtype"):
        value = getattr(spec, attr, None)
        if value is not None:
            row[attr] = str(value)
    return row


def run_case(case: dict[str, Any], platform: Any) -> dict[str, Any]:
    import torch
    from vllm.engine.arg_utils import EngineArgs
    from vllm.model_executor.model_loader.utils import initialize_model
    from vllm.usage.usage_lib import UsageContext
    from vllm.utils.torch_utils import set_default_torch_dtype
    from vllm.v1.engine.core import EngineCore

    out: dict[str, Any] = {
        k: case[k] for k in ("config", "tp", "kv_dtype", "gpu", "max_model_len", "budget_bytes")
    }
    capture = _Capture()
    vllm_logger = logging.getLogger("vllm")
    vllm_logger.addHandler(capture)
    _clear_once_caches()
    try:
        install_parallel_groups(case["tp"])
        extra: dict[str, Any] = {}
        if "swap_space" in {f.name for f in dataclasses.fields(EngineArgs)}:
            extra["swap_space"] = 0  # older releases check CPU swap against this machine's host memory
        args = EngineArgs(
            model=case["dir"],
            tensor_parallel_size=case["tp"],
            kv_cache_dtype=case["kv_dtype"],
            max_model_len=case["max_model_len"],
            kv_cache_memory_bytes=case["budget_bytes"],
            load_format="dummy",
            skip_tokenizer_init=True,
            trust_remote_code=False,
            **extra,
        )
        vllm_config = args.create_engine_config(usage_context=UsageContext.OPENAI_API_SERVER)
        with contextlib.suppress(ImportError):  # the worker makes it in init_device (newer releases)
            from vllm.v1.worker.workspace import init_workspace_manager

            init_workspace_manager(torch.device("meta"))
        with set_default_torch_dtype(vllm_config.model_config.dtype), torch.device("meta"), cuda_to_meta():
            initialize_model(vllm_config=vllm_config)
        from vllm.config import set_current_vllm_config

        with set_current_vllm_config(vllm_config):
            update_block_size = getattr(platform, "update_block_size_for_backend", None)
            if callable(update_block_size):  # newer releases; older ones decide in check_and_update_config
                update_block_size(vllm_config)
            vllm_logger.removeHandler(capture)  # again: building the model may reconfigure vLLM's logging
            vllm_logger.addHandler(capture)
            executor = _Executor(vllm_config, case["budget_bytes"])
            core = types.SimpleNamespace(model_executor=executor, collective_rpc=executor.collective_rpc)
            scheduler_config = EngineCore._initialize_kv_caches(core, vllm_config)  # type: ignore[arg-type]
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
            bytes_per_block=page_bytes_per_block,
            pool_bytes=pool_bytes,
            bytes_per_token=page_bytes_per_block / block if block else None,
            tokens_logged=_tokens_from_log(logged[-1]) if logged else None,
            kv_cache_size_tokens=getattr(cache, "kv_cache_size_tokens", None),
            max_concurrency=getattr(cache, "kv_cache_max_concurrency", None),
            cache_dtype=cache.cache_dtype,
            kv_cache_memory_bytes=cache.kv_cache_memory_bytes,
            max_model_len=vllm_config.model_config.max_model_len,
            groups=[{"layers": len(g.layer_names), **_spec_row(g.kv_cache_spec)} for g in groups],
            scheduler_groups=[_spec_row(g.kv_cache_spec) for g in scheduler_config.kv_cache_groups],
            attention_backends=_backends(vllm_config),
            async_scheduling=getattr(vllm_config.scheduler_config, "async_scheduling", None),
            max_num_batched_tokens=vllm_config.scheduler_config.max_num_batched_tokens,
            max_in_flight_tokens=getattr(vllm_config, "max_in_flight_tokens", None),
            log=[m for m in capture.messages if _worth_keeping(m)][-12:],
        )
    except BaseException as exc:  # noqa: BLE001 — a refusal is a result
        if isinstance(exc, KeyboardInterrupt):
            raise
        out.update(
            status=refusal_or_harness_error(exc, "vllm"),
            error_type=type(exc).__name__,
            message=str(exc).strip().splitlines()[0][:600] if str(exc).strip() else type(exc).__name__,
            traceback_tail=traceback.format_exc().strip().splitlines()[-14:],
        )
    finally:
        vllm_logger.removeHandler(capture)
    return out


def _tokens_from_log(message: str) -> int | None:
    import re

    match = re.search(r"KV cache size: ([\d,]+) tokens", message)
    return int(match.group(1).replace(",", "")) if match else None


def _worth_keeping(message: str) -> bool:
    words = ("block size", "KV cache", "padding", "Padding", "mamba", "Mamba", "backend", "fp8", "window")
    return any(w in message for w in words)


def _backends(vllm_config: Any) -> list[str]:
    names = set()
    for layer in vllm_config.compilation_config.static_forward_context.values():
        get = getattr(layer, "get_attn_backend", None)
        if get is not None:
            with contextlib.suppress(Exception):
                names.add(get().get_name())
    return sorted(names)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", required=True, help="JSON list of cases (one GPU generation)")
    parser.add_argument("--out", required=True, help="JSON-lines output, appended case by case")
    args = parser.parse_args()
    with open(args.cases) as fh:
        cases = json.load(fh)
    gpus = {c["gpu"] for c in cases}
    if len(gpus) != 1:
        raise SystemExit("one GPU generation per run (the platform is fixed at import)")
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "INFO")
    platform = install_import_stand_ins(gpus.pop())
    import vllm.engine.arg_utils  # noqa: F401  (vLLM configures its loggers on import)

    logging.getLogger("vllm").setLevel(logging.INFO)
    for case in cases:
        started = time.monotonic()
        result = run_case(case, platform)
        result["seconds"] = round(time.monotonic() - started, 2)
        with open(args.out, "a") as fh:
            fh.write(json.dumps(result) + "\n")
        print(
            f"{case['config']} tp{case['tp']} {case['kv_dtype']} {case['gpu']}: {result['status']} "
            f"{result.get('tokens_logged') or result.get('message', '')} ({result['seconds']} s)",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
