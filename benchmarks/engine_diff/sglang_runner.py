"""Runs SGLang's own KV-cache sizing path on a machine without a GPU, one case per line of output.

Runs inside the (engine, version) venv that `run.py` makes: it imports SGLang and the standard
library only, never kvtop. For each case it runs the engine's own code in the engine's order (0.5.2x; for
releases before the KVCacheConfigurator, ModelRunner.__init__ itself, see sglang_shells.py):

  prepare_server_args(argv) + resolve_once     the CLI, defaults by GPU (page size, backends, …)
  publish(server_args, role="scheduler")       the process-wide config bags, TP rank 0
  ModelConfig.from_server_args                 the model's geometry, quantization, hybrid layout
  ModelRunner.configure_kv_cache_dtype         the KV dtype (checkpoint KV quant included)
  resolve_sliding_window_size, resolve_layer_indices, ModelRunner.init_kv_cache_configurator
  KVCacheConfigurator._resolve_memory_pool_config(pre_model_load_memory)
                                               rest memory (`_profile_available_bytes`, with the
                                               multimodal reserve and the Mamba state), the pool
                                               configurator's cell, max_total_num_tokens, page
                                               alignment, max running requests

and writes the cell (bytes per token per rank), page size, max_total_num_tokens (and the SWA
pool's), max running requests and the Mamba state slots; or the refusal and its message.
The budget: free memory before weight load F and after it A (GiB, as SGLang measures them)
and --mem-fraction-static m: rest = A − F × (1 − m).

Stand-ins (each minimal; none computes a number the comparison reads):
  device-queries   torch.cuda answers as the case's GPU (sm80 A100-80GB, sm90 H100, sm100 B200):
                   is_available, capability, name, properties, device count, current device
                   (and, where no nvidia-smi exists, one that prints nothing: older releases
                   then take SGLang's own mem_get_info fallback, as 0.5.2x does);
                   `mem_get_info` answers the case's free memory after weight load (what
                   `get_available_gpu_memory` reads, one line of SGLang's own code around it).
  absent-packages  torchvision (a CUDA build that cannot sit beside CPU torch 2.13), sgl-kernel,
                   flashinfer and other CUDA kernel packages resolve to placeholder modules:
                   kernels are imported at module level, never called when sizing.
  min-all-reduce   torch.distributed.all_reduce(MIN) over one value (the free memory of the
                   only rank measured) leaves it as it is; barriers return at once.
  parallel-groups  the WORLD group (never built: NCCL/Gloo are not started) is rank 0 of TP ranks;
                   SGLang reads only its size and hands its cpu_group to the all-reduce above.
  model-shell      the model class (SGLang's registry picks it) without its __init__, holding
                   the HF config and the quantization config SGLang's loader hands the constructor
                   (`_get_quantization_config`: its kv_cache_quant_algo decides an FP8 KV cache):
                   SGLang reads the sliding window, layer range and KV quant from the model
                   object; the weights and layers are never built. Where the model's window
                   method needs a submodule the shell lacks (Gemma-3's language_model), the same
                   SGLang function's config branch answers (recorded as window_from_config).
  cpu-device       (releases before the KVCacheConfigurator only) tensors ModelRunner.__init__
                   puts on cuda before the pools (expert maps, buffers) are made on the CPU.
  pool-sentinel    (releases before the KVCacheConfigurator only) the request pool constructor
                   stops the engine's ModelRunner.__init__ where sizing ends and allocation starts.
  runner-shell     (0.5.2x) ModelRunner without its __init__ (which starts NCCL and loads weights); the
                   attributes its __init__ sets for the configurator come from the same SGLang
                   calls (get_schedule().page_size, model_config fields, SpeculativeAlgorithm).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.abc
import importlib.machinery
import json
import logging
import os
import shutil
import sys
import tempfile
import time
import traceback
import types
from typing import Any

from sglang_shells import model_shell, run_case_legacy
from standins import FREE_BYTES, PlaceholderModule, refusal_or_harness_error

STAND_INS = [
    "device-queries",
    "absent-packages",
    "min-all-reduce",
    "parallel-groups",
    "model-shell",
    "runner-shell",
    "cpu-device",
    "pool-sentinel",
]

GPUS = {
    "sm80": ((8, 0), "NVIDIA A100-SXM4-80GB", 85_899_345_920, 108),
    "sm90": ((9, 0), "NVIDIA H100 80GB HBM3", 85_520_809_984, 132),
    "sm100": ((10, 0), "NVIDIA B200", 192_265_846_784, 148),
}
ABSENT_PACKAGES = (
    "torchvision",
    "torchao",
    "torchaudio",
    "quack",
    "cutlass",
    "deep_gemm",
    "sgl_kernel",
    "flashinfer",
)


class _Anything:
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __call__(self, *args: Any, **kwargs: Any) -> _Anything:
        return _Anything()

    def __getattr__(self, attr: str) -> _Anything:
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Anything()

    def __iter__(self) -> Any:
        return iter(())

    def __bool__(self) -> bool:
        return False

    def __mro_entries__(self, bases: tuple[Any, ...]) -> tuple[type, ...]:
        return (_Anything,)  # `class X(absent.Base)` builds a class of placeholders


_ABSENT_CHECKED: dict[str, bool] = {}


class _AbsentPackages(importlib.abc.MetaPathFinder):
    def find_spec(self, name: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        top = name.split(".")[0]
        if top not in ABSENT_PACKAGES:
            return None
        if top not in _ABSENT_CHECKED:  # an installed package is used as it is
            _ABSENT_CHECKED[top] = importlib.machinery.PathFinder.find_spec(top) is None
        if _ABSENT_CHECKED[top]:
            return importlib.machinery.ModuleSpec(name, PlaceholderModule(_Anything), is_package=True)
        return None


def install_stand_ins(gpu: str) -> None:
    import torch
    import torch.distributed

    capability, name, total, sms = GPUS[gpu]

    class Properties:
        major, minor = capability
        total_memory = total
        multi_processor_count = sms
        is_integrated = False
        uuid = "GPU-stand-in"
        L2_cache_size = 50 << 20

    Properties.name = name  # type: ignore[attr-defined]
    torch.cuda.is_available = lambda: True  # type: ignore[assignment]
    torch.version.cuda = "12.9"  # type: ignore[misc]
    torch.cuda.device_count = lambda: 8  # type: ignore[assignment]
    torch.cuda.current_device = lambda: 0  # type: ignore[assignment]
    torch.cuda.get_device_capability = lambda device=None: capability  # type: ignore[assignment]
    torch.cuda.get_device_name = lambda device=None: name  # type: ignore[assignment]
    torch.cuda.get_device_properties = lambda device=None: Properties()  # type: ignore[assignment]
    torch.cuda.mem_get_info = lambda device=None: (FREE_BYTES["now"], total)  # type: ignore[assignment]
    torch.cuda.empty_cache = lambda: None  # type: ignore[assignment]
    torch.cuda.set_device = lambda device: None  # type: ignore[assignment]
    torch.cuda.Stream = _Anything  # type: ignore[misc,assignment]
    torch.cuda.Event = _Anything  # type: ignore[misc,assignment]
    torch.distributed.all_reduce = lambda tensor, *a, **k: None  # type: ignore[assignment]
    torch.distributed.monitored_barrier = lambda *a, **k: None  # type: ignore[assignment]
    torch.distributed.barrier = lambda *a, **k: None  # type: ignore[assignment]
    register_fake = torch.library.register_fake

    def _register_fake(op: Any, *args: Any, **kwargs: Any) -> Any:  # absent-packages: their ops
        if isinstance(op, str) and op.split("::")[0] in ABSENT_PACKAGES:
            return args[0] if args else (lambda fn: fn)
        return register_fake(op, *args, **kwargs)

    torch.library.register_fake = _register_fake  # type: ignore[assignment]
    import transformers.utils.import_utils  # noqa: F401  (decides torchvision is absent, as it is)

    sys.meta_path.insert(0, _AbsentPackages())
    if shutil.which("nvidia-smi") is None:  # device-queries: an nvidia-smi that reports nothing, so
        folder = tempfile.mkdtemp(prefix="engine-diff-")  # SGLang takes its own mem_get_info fallback
        with open(os.path.join(folder, "nvidia-smi"), "w") as fh:
            fh.write("#!/bin/sh\nexit 0\n")
        os.chmod(os.path.join(folder, "nvidia-smi"), 0o755)
        os.environ["PATH"] = folder + os.pathsep + os.environ.get("PATH", "")


class _Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        with contextlib.suppress(Exception):
            self.messages.append(record.getMessage())


def run_case(case: dict[str, Any]) -> dict[str, Any]:
    try:
        import sglang.srt.runtime_context  # noqa: F401  (0.5.2x: publish + KVCacheConfigurator)
    except ImportError:
        return run_case_legacy(case)
    from sglang.srt.configs.model_config import AttentionArch, ModelConfig
    from sglang.srt.model_executor.model_runner import ModelRunner
    from sglang.srt.model_executor.pool_configurator import create_memory_pool_configurator
    from sglang.srt.runtime_context import SpawnRanks, get_parallel, get_schedule, publish
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
    capture = _Capture()
    root = logging.getLogger()
    root.addHandler(capture)
    try:
        FREE_BYTES["now"] = case["free_after_bytes"]
        argv = [
            "--model-path",
            case["dir"],
            "--tp-size",
            str(case["tp"]),
            "--kv-cache-dtype",
            case["kv_dtype"],
            "--mem-fraction-static",
            str(case["mem_fraction_static"]),
            "--context-length",
            str(case["max_model_len"]),
        ]
        server_args = prepare_server_args(argv)
        publish(server_args, role="scheduler", ranks=SpawnRanks(world_rank=0, gpu_id=0))
        world = types.SimpleNamespace(
            world_size=case["tp"], rank_in_group=0, cpu_group=None, device_group=None
        )
        get_parallel().override_permanently(world_group=world)  # parallel-groups
        model_config = ModelConfig.from_server_args(server_args)
        runner = _runner_shell(ModelRunner, server_args, model_config, AttentionArch)
        runner.init_kv_cache_configurator()
        kvc = runner.kv_cache_configurator
        pool = kvc._resolve_memory_pool_config(pre_model_load_memory=case["free_before_bytes"] / (1 << 30))
        configurator = create_memory_pool_configurator(kvc)
        schedule = get_schedule()
        out.update(
            status="ok",
            max_total_num_tokens=pool.max_total_num_tokens,
            full_max_total_num_tokens=getattr(pool, "full_max_total_num_tokens", None),
            swa_max_total_num_tokens=getattr(pool, "swa_max_total_num_tokens", None),
            max_running_requests=pool.max_running_requests,
            page_size=schedule.page_size,
            cell_size=int(getattr(configurator, "_cell_size", 0)),
            configurator=type(configurator).__name__,
            kv_cache_dtype=str(runner.kv_cache_dtype),
            max_mamba_cache_size=getattr(schedule, "max_mamba_cache_size", None),
            attention_backend=_attention_backend(),
            is_hybrid_swa=bool(model_config.is_hybrid_swa),
            use_mla_backend=bool(runner.use_mla_backend),
            sliding_window_size=runner.sliding_window_size,
            window_from_config=bool(getattr(runner, "sliding_window_from_config", False)),
            log=[m for m in capture.messages if _worth_keeping(m)][-12:],
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
    finally:
        root.removeHandler(capture)
    return out


def _runner_shell(ModelRunner: Any, server_args: Any, model_config: Any, AttentionArch: Any) -> Any:
    """runner-shell: the attributes ModelRunner.__init__ gives the configurator, from SGLang's calls."""
    from sglang.srt.model_executor.model_runner_components.layer_setup import resolve_layer_indices
    from sglang.srt.model_executor.model_runner_components.load_model_utils import resolve_sliding_window_size
    from sglang.srt.model_loader.utils import get_model_architecture
    from sglang.srt.runtime_context import get_schedule, get_spec
    from sglang.srt.speculative.spec_info import SpeculativeAlgorithm

    runner = ModelRunner.__new__(ModelRunner)
    model_class, _ = get_model_architecture(model_config)
    model = model_shell(model_class, model_config)
    runner.server_args = server_args
    runner.model_config = model_config
    runner.model = model
    runner.device = "cuda"
    runner.gpu_id = 0
    runner.is_draft_worker = False
    runner.draft_model_idx = None
    runner.draft_attention_backend = None
    runner.memory_pool_config = None
    runner.req_to_token_pool = None
    runner.token_to_kv_pool_allocator = None
    runner.forward_stream = None
    runner.pp_group = types.SimpleNamespace(
        world_size=1, rank_in_group=0, is_first_rank=True, is_last_rank=True
    )
    runner.spec_algorithm = SpeculativeAlgorithm.from_string(get_spec().speculative_algorithm)
    runner.page_size = get_schedule().page_size
    runner.is_hybrid_swa = model_config.is_hybrid_swa
    runner.is_hybrid_swa_compress = getattr(model_config, "is_hybrid_swa_compress", False)
    runner.use_mla_backend = model_config.attention_arch == AttentionArch.MLA
    runner.dtype = model_config.dtype
    runner.init_spec_aux_hidden_state()
    try:
        runner.sliding_window_size = resolve_sliding_window_size(model, model_config)
    except AttributeError:  # the model's method needs a submodule the shell lacks: SGLang's own
        runner.sliding_window_size = resolve_sliding_window_size(None, model_config)  # config branch
        runner.sliding_window_from_config = True
    runner.layer_info = resolve_layer_indices(
        model=model, model_config=model_config, is_draft_worker=False, draft_model_idx=None
    )
    runner.configure_kv_cache_dtype()
    return runner


def _attention_backend() -> str | None:
    with contextlib.suppress(Exception):
        from sglang.srt.runtime_context import get_exec

        return str(get_exec().kernel.attention_backend)
    return None


def _worth_keeping(message: str) -> bool:
    words = ("page", "KV", "kv cache", "Mamba", "mamba", "backend", "Reserving", "sliding", "window")
    return any(w in message for w in words)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--cases", required=True, help="JSON list of cases (one GPU generation)")
    parser.add_argument("--out", required=True, help="JSON-lines output, appended case by case")
    args = parser.parse_args()
    with open(args.cases) as fh:
        cases = json.load(fh)
    gpus = {c["gpu"] for c in cases}
    if len(gpus) != 1:
        raise SystemExit("one GPU generation per run (the device queries are fixed at import)")
    install_stand_ins(gpus.pop())
    import sglang.srt.server_args  # noqa: F401

    for case in cases:
        started = time.monotonic()
        result = run_case(case)
        result["seconds"] = round(time.monotonic() - started, 2)
        with open(args.out, "a") as fh:
            fh.write(json.dumps(result) + "\n")
        print(
            f"{case['config']} tp{case['tp']} {case['kv_dtype']} {case['gpu']}: {result['status']} "
            f"{result.get('max_total_num_tokens') or result.get('message', '')} ({result['seconds']} s)",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
