"""Runs SGLang's own KV-cache sizing path on a machine without a GPU, one case per forked process.

Runs inside the (engine, version) venv that `run.py` makes: it imports SGLang and the standard
library only, never kvtop. SGLang is imported once; each case runs in a child forked from that
parent (isolation.py), and each pipeline stage of a case in its own process (the stages' MIN of the
token count is SGLang's own all_reduce, over a real gloo group). For each stage it runs the
engine's own code in the engine's order (0.5.2x; for releases before the KVCacheConfigurator,
ModelRunner.__init__ itself, see sglang_legacy.py):

  prepare_server_args(argv)                    the CLI (the case's flags among it), defaults by GPU
  publish(server_args, role="scheduler",       the process-wide config bags; the stage's TP rank 0
          ranks=SpawnRanks(world_rank))        (its TP, PP, attention and MoE ranks derived by SGLang)
  ModelConfig.from_server_args                 the model's geometry, quantization, hybrid layout
  the model, built on meta                     SGLang's model class, its own constructor (start and
                                               end layer of the stage, sliding window, KV quant)
  resolve_sliding_window_size, resolve_layer_indices, ModelRunner.configure_kv_cache_dtype,
  ModelRunner.init_kv_cache_configurator
  KVCacheConfigurator._resolve_memory_pool_config(pre_model_load_memory)
                                               rest memory (`_profile_available_bytes`, with the
                                               multimodal reserve and the Mamba state), the pool
                                               configurator's cell, max_total_num_tokens (the MIN
                                               over the stages), page alignment, max running requests

and writes the cell (bytes per token per rank), page size, max_total_num_tokens (and the SWA
pool's), max running requests and the Mamba state slots, each stage's layers and parameter bytes;
or the refusal and its message. The budget: free memory before weight load F and after it A (GiB,
as SGLang measures them) and --mem-fraction-static m: rest = A − F × (1 − m).

Stand-ins (each minimal; none computes a number the comparison reads):
  device-queries   torch.cuda answers as the case's GPU (sm80 A100-80GB, sm90 H100, sm100 B200):
                   is_available, capability, name, properties, device count, current device
                   (and, where no nvidia-smi exists, one that prints nothing: older releases
                   then take SGLang's own mem_get_info fallback, as 0.5.2x does);
                   `mem_get_info` answers the case's free memory after weight load (what
                   `get_available_gpu_memory` reads, one line of SGLang's own code around it);
                   DeepGEMM's `get_num_sms` (absent here) answers the device's SM count, as it
                   does on a GPU (the DSA indexer shapes a schedule buffer with it).
  absent-packages  torchvision (a CUDA build that cannot sit beside CPU torch 2.13), sgl-kernel,
                   flashinfer and other CUDA kernel packages resolve to placeholder modules:
                   kernels are imported at module level; every placeholder a case reads is
                   recorded in its row (`placeholder_reads`). A module whose import SGLang guards
                   with its own fallback (`sgl_kernel.scalar_type`: get_scalar_types' mock) fails
                   to import, as where the package is absent (ENGINE_FALLBACKS).
                   mistral_common (absent): only `mistral_common.audio.mel_filter_bank`, which Voxtral's
                   constructor registers as a buffer, stands in (standins.stand_in_mistral_mel_filters).
  stage-processes  one process per pipeline stage (its TP rank 0), joined in a real gloo group:
                   SGLang's collectives (the MIN of the token count, barriers) run between them;
                   the TP ranks of a stage hold the same values, so a collective over them is one
                   over their rank 0.
  parallel-groups  SGLang's own GroupCoordinator class without its __init__ (NCCL communicators),
                   one per group SGLang builds, sized and ranked as SGLang's published widths and
                   ranks say, holding the gloo process groups above.
  meta-device      the model is built under `torch.device("meta")` (tensors a constructor puts on
                   `cuda` go to meta); the weights are not filled or post-processed.
  runner-shell     ModelRunner without its __init__ (which starts NCCL and loads weights): the
                   fields its __init__ and load_model set for the configurator come from the same
                   SGLang calls (get_schedule().page_size, model_config fields, the model built
                   above, resolve_sliding_window_size, resolve_layer_indices); every field the
                   engine reads from it is checked to be one the class assigns (`shell_check`).
                   The refusals __init__ makes between load and sizing run: its own
                   check_quantized_moe_compatibility, and its PP support assertion (two lines).
  cpu-device       (releases before the KVCacheConfigurator only) tensors ModelRunner.__init__
                   puts on cuda before the pools (expert maps, buffers) are made on the CPU.
  pool-sentinel    (releases before the KVCacheConfigurator only) the request pool constructor
                   stops the engine's ModelRunner.__init__ where sizing ends and allocation starts.
  checkpoint-config  a model type whose configuration class ships with the checkpoint (its own Python
                   code, run by `--trust-remote-code`) that neither transformers nor SGLang's config
                   registry knows: a stand-in class taking the config.json fields as the published
                   class does (checkpoint_configs.py; checkpoint_config_classes.py registers them before
                   the cases fork).
  host-values      `torch.linspace` without a device runs on the CPU while the model is built: a vision
                   tower reads its drop-path rates back as numbers (`.item()`), which meta tensors lack;
                   and `torch.tensor` of one Python number in standins.HOST_SCALAR_CLASSES (Phi-4-MM's audio
                   subsampling reads its output length back with `int()` to size a Linear).
  named-tower      a class that loads a vision tower named by checkpoint id in load_weights (0.5.23 llava.py:
                   transformers' from_pretrained(config.mm_vision_tower)) runs its own load_weights with no
                   weights, from_pretrained answering with the class built on meta from that checkpoint's
                   published config (tests/data/configs/towers_named/; sglang_standins.load_named_tower).

Not a stand-in: engine-failures (sglang_config_failures.py) names the failures of SGLang's own code on what a
config holds (read in its source, the same on any device) as refusals with their reason, and keeps a missing
checkpoint modeling file a harness error.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
import tempfile
import time
import traceback
from typing import Any

from checkpoint_config_classes import custom_code_reason, install_checkpoint_configs
from isolation import IMPORTED, run_in_child, run_in_children, warm_imports
from sglang_config_failures import classify
from sglang_legacy import run_rank_legacy
from sglang_standins import (
    build_model,
    group_shell,
    install_stand_ins,
    join_stage_group,
    load_named_tower,
    param_bytes,
    placeholder_reads,
    server_argv,
)
from standins import FREE_BYTES, EngineRefusal, fields_assigned, refusal_or_harness_error, shell, shell_check

STAND_INS = [
    "device-queries",
    "absent-packages",
    "stage-processes",
    "parallel-groups",
    "meta-device",
    "runner-shell",
    "cpu-device",
    "pool-sentinel",
    "checkpoint-config",
    "host-values",
    "named-tower",
]
KEYS = (
    "config", "variant", "flags", "tp", "pp", "kv_dtype", "gpu", "max_model_len",
    "free_before_bytes", "free_after_bytes", "mem_fraction_static",
)  # fmt: skip
# The groups SGLang builds for every model (initialize_model_parallel): context name -> rank stride.
GROUPS = {"tp": 1, "attn_tp": 1, "attn_cp": 1, "moe_ep": 1, "moe_tp": 1, "moe_dp": 1, "pp": None}


class _Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        with contextlib.suppress(Exception):
            self.messages.append(record.getMessage())


def run_case(case: dict[str, Any]) -> dict[str, Any]:
    """Every pipeline stage of the case at once, each in its own process; stage 0's figures (after
    SGLang's own MIN over the stages), with each stage's layers and parameter bytes."""
    try:
        import sglang.srt.runtime_context  # noqa: F401  (0.5.2x: publish + KVCacheConfigurator)

        run_rank = _run_rank
    except ImportError:
        run_rank = run_rank_legacy
    out: dict[str, Any] = {k: case[k] for k in KEYS if k in case}
    pp = case.get("pp", 1)
    with tempfile.TemporaryDirectory(prefix="engine-diff-store-") as folder:
        ranks = run_in_children(run_rank, {**case, "store": os.path.join(folder, "store")}, pp)
    for rank in ranks[1:]:  # the stages' imports are stage 0's too
        rank.pop(IMPORTED, None)
    first = ranks[0]
    # A stage that refused is the launch's answer before one that died: a stage whose peer refused and exited
    # sees its next collective fail (gloo's "Connection closed by peer", granite-4.0-h-small PP 2 / PP 4).
    failed = next((r for r in ranks if r.get("status") == "refused"), None)
    failed = failed or next((r for r in ranks if r.get("status") != "ok"), None)
    if failed is not None:  # a stage refused, or died: that is the launch's answer
        out.update({k: v for k, v in failed.items() if k not in ("stage",)})
        return out
    out.update({k: v for k, v in first.items() if k not in ("stage",)})
    out["stages"] = [r["stage"] for r in ranks]
    out["stage_tokens"] = sorted({r["max_total_num_tokens"] for r in ranks})
    return out


def _cell_size(configurator: Any) -> int:
    """The configurator's bytes per token of the rank: its `_cell_size`, or DeepSeek-V4's coefficient
    (DSV4PoolConfigurator.bytes_per_full_token, a float its log prints to two decimals: its whole bytes)."""
    return int(getattr(configurator, "_cell_size", 0) or getattr(configurator, "bytes_per_full_token", 0))


def _moe_flags() -> None:
    """The MoE runner flags the scheduler seeds from the published arguments before it builds the model
    (0.5.23 managers/scheduler.py `initialize_moe_config`): without them every MoE layer saw the `auto` runner,
    not the one the model's overrides resolve (DeepSeek-V4's MXFP4 experts: flashinfer_mxfp4 on sm90, whose
    Mxfp4FlashinferCutlassMoEMethod keeps E8M0 block scales where the auto runner's Fp8MoEMethod keeps fp32)."""
    try:
        from sglang.srt.layers.moe import initialize_moe_config
    except ImportError:  # releases before the published bags seed them elsewhere
        return
    initialize_moe_config()


def _run_rank(case: dict[str, Any], pp_rank: int) -> dict[str, Any]:
    from sglang.srt.configs.model_config import AttentionArch, ModelConfig
    from sglang.srt.model_executor.model_runner import ModelRunner
    from sglang.srt.model_executor.pool_configurator import create_memory_pool_configurator
    from sglang.srt.runtime_context import SpawnRanks, get_schedule, publish
    from sglang.srt.server_args import prepare_server_args

    out: dict[str, Any] = {}
    capture = _Capture()
    root = logging.getLogger()
    root.addHandler(capture)
    with placeholder_reads() as reads:
        try:
            tp, pp = case["tp"], case.get("pp", 1)
            stage_groups = join_stage_group(case["store"], pp_rank, pp)
            FREE_BYTES["now"] = case["free_after_bytes"]
            server_args = prepare_server_args(server_argv(case))
            publish(server_args, role="scheduler", ranks=SpawnRanks(world_rank=pp_rank * tp, gpu_id=0))
            _moe_flags()
            _install_groups(tp, pp, pp_rank, stage_groups)
            model_config = ModelConfig.from_server_args(server_args)
            model = build_model(model_config)
            load_named_tower(model, model_config.hf_config)
            runner = _runner_shell(ModelRunner, server_args, model_config, model, AttentionArch)
            runner.init_kv_cache_configurator()
            kvc = runner.kv_cache_configurator
            pool = kvc._resolve_memory_pool_config(
                pre_model_load_memory=case["free_before_bytes"] / (1 << 30)
            )
            configurator = create_memory_pool_configurator(kvc)
            schedule = get_schedule()
            out.update(
                status="ok",
                max_total_num_tokens=pool.max_total_num_tokens,
                full_max_total_num_tokens=getattr(pool, "full_max_total_num_tokens", None),
                swa_max_total_num_tokens=getattr(pool, "swa_max_total_num_tokens", None),
                max_running_requests=pool.max_running_requests,
                page_size=schedule.page_size,
                cell_size=_cell_size(configurator),
                configurator=type(configurator).__name__,
                kv_cache_dtype=str(runner.kv_cache_dtype),
                max_mamba_cache_size=getattr(schedule, "max_mamba_cache_size", None),
                attention_backend=_attention_backend(),
                is_hybrid_swa=bool(model_config.is_hybrid_swa),
                use_mla_backend=bool(runner.use_mla_backend),
                sliding_window_size=runner.sliding_window_size,
                stage={
                    "pp_rank": pp_rank,
                    "layers": [runner.layer_info.start_layer, runner.layer_info.end_layer],
                    "param_bytes": param_bytes(model),
                    "max_total_num_tokens": pool.max_total_num_tokens,
                },
                log=[m for m in capture.messages if _worth_keeping(m)][-12:],
            )
        except BaseException as exc:  # noqa: BLE001 — a refusal is a result
            if isinstance(exc, KeyboardInterrupt):
                raise
            text = str(exc).strip()
            status = "refused" if isinstance(exc, SystemExit) else refusal_or_harness_error(exc, "sglang")
            message = text.splitlines()[0][:600] if text else type(exc).__name__
            status, message = classify(exc, case) or (status, message)  # engine-failures
            message = custom_code_reason(exc, case.get("dir")) or message
            out.update(
                status=status,
                error_type=type(exc).__name__,
                message=message[:600],
                traceback_tail=traceback.format_exc().strip().splitlines()[-14:],
            )
        finally:
            root.removeHandler(capture)
        out["placeholder_reads"] = sorted(reads)
    out["shells"] = shell_check({"model-runner": ModelRunner})
    if out["status"] == "ok" and any(c["not_in_class"] for c in out["shells"].values()):
        out.update(status="harness-error", message="a stand-in held a field its real class never assigns")
    return out


def _install_groups(tp: int, pp: int, pp_rank: int, stage_groups: dict[int, Any]) -> None:
    """parallel-groups: one GroupCoordinator per group SGLang builds, as its published widths say."""
    import torch.distributed as dist
    from sglang.srt.distributed.parallel_state import GroupCoordinator
    from sglang.srt.runtime_context import get_parallel

    parallel = get_parallel()
    rank = pp_rank * tp
    groups = {
        "world_group": group_shell(GroupCoordinator, "world", list(range(tp * pp)), rank, dist.group.WORLD)
    }
    for name, stride in GROUPS.items():
        try:
            size, in_group = getattr(parallel, f"{name}_size"), getattr(parallel, f"{name}_rank")
        except (AttributeError, RuntimeError, ValueError):
            continue  # a group this configuration does not size
        step = tp if stride is None else stride
        ranks = [rank + (i - in_group) * step for i in range(size)]
        process_group = dist.group.WORLD if name == "pp" else stage_groups[pp_rank]
        groups[f"{name}_group"] = group_shell(GroupCoordinator, name, ranks, rank, process_group)
    parallel.override_permanently(**groups)


def _runner_shell(
    ModelRunner: Any, server_args: Any, model_config: Any, model: Any, AttentionArch: Any
) -> Any:
    """runner-shell: the fields ModelRunner.__init__ and load_model give the configurator, from SGLang's calls."""
    from sglang.srt.model_executor.model_runner_components.layer_setup import resolve_layer_indices
    from sglang.srt.model_executor.model_runner_components.load_model_utils import resolve_sliding_window_size
    from sglang.srt.runtime_context import get_parallel, get_schedule, get_spec
    from sglang.srt.speculative.spec_info import SpeculativeAlgorithm

    runner = shell(
        ModelRunner,
        "model-runner",
        server_args=server_args,
        model_config=model_config,
        model=model,
        device="cuda",
        gpu_id=0,
        is_draft_worker=False,
        draft_model_idx=None,
        draft_attention_backend=None,
        memory_pool_config=None,
        req_to_token_pool=None,
        token_to_kv_pool_allocator=None,
        forward_stream=None,
        pp_group=get_parallel().pp_group,
        spec_algorithm=SpeculativeAlgorithm.from_string(get_spec().speculative_algorithm),
        page_size=get_schedule().page_size,
        is_hybrid_swa=model_config.is_hybrid_swa,
        is_hybrid_swa_compress=getattr(model_config, "is_hybrid_swa_compress", False),
        use_mla_backend=model_config.attention_arch == AttentionArch.MLA,
        dtype=model_config.dtype,
        sliding_window_size=resolve_sliding_window_size(model, model_config),
        layer_info=resolve_layer_indices(
            model=model, model_config=model_config, is_draft_worker=False, draft_model_idx=None
        ),
    )
    runner.init_spec_aux_hidden_state()
    runner.configure_kv_cache_dtype()
    _refusals_of_init(runner, model)
    _refusals_of_load(server_args, model_config, model)
    return runner


def _refusals_of_init(runner: Any, model: Any) -> None:
    """What ModelRunner.__init__ refuses between loading the model and sizing the pools (it is not run):
    its own check_quantized_moe_compatibility, and its PP support assertion, two lines quoted from it:
    `support_pp = "pp_proxy_tensors" in inspect.signature(self.model.forward).parameters`, then under
    pp_size > 1 `assert self.support_pp, "Pipeline Parallel is not compatible with this model."`."""
    import inspect

    from sglang.srt.runtime_context import get_parallel

    runner.check_quantized_moe_compatibility()
    if get_parallel().pp_size > 1 and "pp_proxy_tensors" not in inspect.signature(model.forward).parameters:
        raise EngineRefusal("Pipeline Parallel is not compatible with this model.")


def _refusals_of_load(server_args: Any, model_config: Any, model: Any) -> None:
    """What the bitsandbytes loader refuses before it reads a weight (loading is not run): its own `_load_weights`
    (model_loader/loader.py BitsAndBytesModelLoader) is called on the built model; what it raises in its own frame
    is its refusal (a class without `load_weights` or `bitsandbytes_stacked_params_mapping`; "Prequant
    BitsAndBytes models with TP is not supported.", every config.json that names bitsandbytes being pre-quantized),
    and the first read of the checkpoint, which the harness does not have, ends the call without a result."""
    if model_config.quantization != "bitsandbytes":
        return
    from sglang.srt.configs.load_config import LoadConfig
    from sglang.srt.model_loader.loader import BitsAndBytesModelLoader

    loader = BitsAndBytesModelLoader(LoadConfig(load_format="bitsandbytes"))
    try:
        loader._load_weights(model_config, model)
    except (ValueError, AttributeError) as exc:
        frame = exc.__traceback__
        while frame is not None and frame.tb_next is not None:
            frame = frame.tb_next
        if frame is not None and frame.tb_frame.f_code.co_name == "_load_weights":
            raise EngineRefusal(str(exc)) from exc
    except Exception:  # noqa: BLE001 — past its checks: the checkpoint the harness lacks
        return


def _attention_backend() -> str | None:
    with contextlib.suppress(Exception):
        from sglang.srt.runtime_context import get_exec

        return str(get_exec().kernel.attention_backend)
    return None


def _worth_keeping(message: str) -> bool:
    words = ("page", "KV", "kv cache", "Mamba", "mamba", "backend", "Reserving", "sliding", "window")
    return any(w in message for w in words)


def _engine_config_types() -> frozenset[str]:
    """The model types SGLang's own config registry maps (checkpoint-config leaves them to it)."""
    try:
        from sglang.srt.utils.hf_transformers.common import _CONFIG_REGISTRY
    except ImportError:  # older releases
        try:
            from sglang.srt.hf_transformers_utils import _CONFIG_REGISTRY  # type: ignore[no-redef]
        except ImportError:
            return frozenset()
    return frozenset(_CONFIG_REGISTRY)


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
        raise SystemExit("one GPU generation per run (the device queries are fixed at import)")
    install_stand_ins(gpus.pop())
    import sglang.srt.server_args  # noqa: F401
    from sglang.srt.model_executor.model_runner import ModelRunner

    fields_assigned(ModelRunner)  # the shell's class read once here, before the cases fork
    try:
        import sglang.srt.configs as engine_configs
    except ImportError:
        engine_configs = None
    install_checkpoint_configs(_engine_config_types(), engine_configs)
    for case in cases:
        started = time.monotonic()
        if args.in_process:
            answer = _run_rank({**case, "store": tempfile.mktemp(prefix="engine-diff-store-")}, 0)
        else:
            answer = run_in_child(run_case, case)
            warm_imports(answer)
        result = {**{k: case[k] for k in KEYS if k in case}, **answer}
        result["seconds"] = round(time.monotonic() - started, 2)
        with open(args.out, "a") as fh:
            fh.write(json.dumps(result) + "\n")
        print(
            f"{case['config']} {case.get('variant', 'default')} tp{case['tp']} pp{case.get('pp', 1)} "
            f"{case['kv_dtype']} {case['gpu']}: {result['status']} "
            f"{result.get('max_total_num_tokens') or result.get('message', '')} ({result['seconds']} s)",
            flush=True,
        )
    if args.in_process:  # threads the engine started in this process would keep it alive
        sys.stdout.flush()
        os._exit(0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
