"""vLLM flags with no effect on GPU memory at the values read, refused at the others.

Each was refused whole as "not modelled" until its effect was read in the wheels (session 53, e2); a launch that
passes one at a value read plans as without it (the plan names it under "no effect on memory"); any other value is
refused by name (flags.py VllmFlags.refuse), and a release without the flag as every neutral flag's row says:

- `--profiler-config` (ProfilerConfig, v0.13.0 on): the worker only builds its profiler (torch: a
  `torch.profiler.profile` object; cuda: `torch.cuda.profiler`), started by `/start_profile` alone
  (v1/worker/gpu_worker.py:647 Worker.profile, v0.13.0; :1397, v0.33.0; v0.13.0 profiler/wrapper.py:147–187 builds,
  :191 `_start` is the one call that starts it). Not at `capture_torch_profiler: true` (v0.26.0 on: a torch profiler
  with profile_memory around CUDA-graph capture, v1/worker/gpu_model_runner.py:6443, v0.33.0) nor the "proton"
  profiler (v0.28.0 on; with proton_graph_attribution it wraps graph capture, profiler/wrapper.py:812, v0.33.0).
- `--weight-transfer-config` (WeightTransferConfig, v0.19.0 on) with the NCCL backend (its default): the engine
  only keeps its config (distributed/weight_transfer/nccl_engine.py:111, v0.19.0; :129, v0.30.0; :132, v0.33.0); its
  NCCL group is made by the trainer's `init_transfer_engine` call after the start. From v0.32.0 it also rules out
  FlashInfer's MoE-EP megakernels (model_executor/layers/fused_moe/flashinfer_moe_ep.py:156, v0.33.0), which only an
  explicit `--moe-backend flashinfer_moe_ep_*` selects (oracle/nvfp4.py:203-212 leaves them out of the automatic
  order; `--moe-backend` itself is refused), and the ROCm-only specialized decode of Kimi-K3 and MiniMax-M3
  (models/kimi_k3/amd/specialized_decode/runtime/__init__.py:127, :189): neither is a path kvtop plans. Other
  backends (ipc, sparse_nccl, sharded_rdt, nccl_m2n) not read.
- `--device` (DeviceConfig, v0.6.3.post1–v0.9.2): "cuda" is what "auto" detects on an NVIDIA GPU
  (config.py:1075, v0.6.3.post1; config.py:2374 DeviceConfig.__post_init__, v0.9.2); any other device is not a GPU
  kvtop plans for.
- `--max-num-partial-prefills` / `--max-long-partial-prefills` (SchedulerConfig, v0.7.3–v0.26.0) at 1, their default
  at every release read (config.py:1439, :1443, v0.7.3; config/scheduler.py:70, :74, v0.26.0): the launch's config is
  the default one. Any other value is not: v0.8.0–v0.11.0 fall back from V1 to the V0 engine for it
  (engine/arg_utils.py:1408-1414 `_is_v1_supported_oracle`, "Concurrent Partial Prefill", v0.9.2), and ROCm's AITER
  FlashAttention sizes a workspace by it (v1/attention/backends/rocm_aiter_fa.py:476, v0.19.0).
- `--load-format auto|safetensors` (LoadConfig, every release read): both take DefaultModelLoader and read the same
  safetensors tensors into the same model (model_executor/model_loader/loader.py:272-276, v0.6.3.post1;
  default_loader.py:103-121, v0.13.0; :170-191, v0.33.0: "auto" picks Mistral's consolidated files where a repository
  has them, else the HF files "safetensors" reads); neither is among the formats that keep tied embeddings tied
  (config/vllm.py:1615, v0.33.0). `--load-format runai_streamer` (from v0.7.1, its arg_utils.py's first
  mention) builds the same model and copies the same safetensors tensors into it: RunaiModelStreamerLoader.load_model
  is `_initialize_model`, `model.load_weights(iterator)`, `_process_weights_after_loading` as the default loader's
  (model_loader/loader.py:1424-1441, v0.8.0; runai_streamer_loader.py, v0.13.0 / v0.18.0 / v0.33.0, through
  BaseModelLoader.load_model), its streamer's buffer on the host ("cpu": weight_utils.py:451-452 v0.8.0
  `stream_file`; :717-734 v0.13.0, :893-911 v0.18.0, :1285-1299 v0.33.0 `device="cpu"` unless distributed), and it
  is not among the formats that keep tied embeddings tied (config/vllm.py:1615-1620, v0.33.0). It would not hold with
  `--model-loader-extra-config '{"distributed": true}'` (v0.13.0 on: the streamer's buffer on the GPU, `cuda:N`),
  which stays refused whole (flags_unmodelled.py). Other formats (dummy, bitsandbytes, gguf, sharded_state,
  runai_streamer_sharded, tensorizer, pt, fastsafetensors, …) load differently: refused.
"""

from __future__ import annotations

from collections.abc import Mapping

from kvtop.domain.deployment_flags import as_json_object
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.engines.vllm.flags_table import FlagSpan
from kvtop.domain.errors import InputError

PROFILER_FLAG = "--profiler-config"
WEIGHT_TRANSFER_FLAG = "--weight-transfer-config"
DEVICE_FLAG = "--device"
PARTIAL_PREFILL_FLAGS = ("--max-num-partial-prefills", "--max-long-partial-prefills")
LOAD_FORMAT_FLAG = "--load-format"

VALUED: Mapping[str, FlagSpan] = {
    PROFILER_FLAG: FlagSpan("0.13.0", None, "engine/arg_utils.py:1908 (v0.33.0)"),
    WEIGHT_TRANSFER_FLAG: FlagSpan("0.19.0", None, "engine/arg_utils.py:1914 (v0.33.0)"),
    DEVICE_FLAG: FlagSpan("0.6.3.post1", "0.9.2", "engine/arg_utils.py:818 (v0.9.2)"),
    "--max-num-partial-prefills": FlagSpan("0.7.3", "0.26.0", "engine/arg_utils.py:1443 (v0.26.0)"),
    "--max-long-partial-prefills": FlagSpan("0.7.3", "0.26.0", "engine/arg_utils.py:1446 (v0.26.0)"),
    LOAD_FORMAT_FLAG: FlagSpan("0.6.3.post1", None, "engine/arg_utils.py:1085 (v0.33.0)"),
}  # fmt: skip
WHY = (
    "no effect on memory at the value given (a profiler armed, not started; NCCL weight transfer before the "
    "trainer connects; device cuda; partial prefills at their default 1; load format auto, safetensors or "
    "runai_streamer); other values refused (flags_valued.py)"
)

PROFILERS_READ = (None, "torch", "cuda")  # ProfilerConfig.profiler values read (proton: not)
WEIGHT_TRANSFER_BACKENDS_READ = ("nccl",)  # WeightTransferConfig.backend's default
DEVICES_READ = ("auto", "cuda")
PARTIAL_PREFILLS_READ = 1  # SchedulerConfig's default for both
LOAD_FORMATS_READ = ("auto", "safetensors", "runai_streamer")  # the same safetensors into the same layers
RUNAI_STREAMER = "runai_streamer"
# when the value runai_streamer exists, not the flag: `--load-format` itself is in every release read (VALUED's row)
RUNAI_STREAMER_ERAS: Eras[bool] = Eras((
    Era("", False, "v0.6.5 engine/arg_utils.py and model_loader/ have no runai_streamer"),
    Era("0.7.1", True, "v0.7.1 engine/arg_utils.py names load format runai_streamer (v0.8.0 loader.py:1344)"),
))  # fmt: skip
# one accepted value of each (as `--list-neutral-flags` readers and tests type it)
EXAMPLES: Mapping[str, str] = {
    PROFILER_FLAG: '{"profiler": "torch"}', WEIGHT_TRANSFER_FLAG: '{"backend": "nccl"}', DEVICE_FLAG: "cuda",
    **{flag: "1" for flag in PARTIAL_PREFILL_FLAGS}, LOAD_FORMAT_FLAG: "safetensors",
}  # fmt: skip


def refuse_unread_value(name: str, value: object, flag: str) -> None:
    """A value of a flags_valued flag whose effect on memory was not read: refused, naming what was read."""
    if "--" + name == PROFILER_FLAG:
        config = as_json_object(value, flag, EXAMPLES[PROFILER_FLAG])  # parse_dataclass: TypeAdapter.validate_json
        if config.get("profiler") not in PROFILERS_READ or config.get("capture_torch_profiler") is True:
            raise InputError(
                "a profiler that runs during the start (capture_torch_profiler, or proton) is not modelled by kvtop: "
                "read only profiler torch or cuda, started by /start_profile after the KV cache is sized",
                field=flag,
            )
    elif "--" + name == WEIGHT_TRANSFER_FLAG:
        backend = as_json_object(value, flag, EXAMPLES[WEIGHT_TRANSFER_FLAG]).get("backend", "nccl")
        if backend not in WEIGHT_TRANSFER_BACKENDS_READ:
            raise InputError(
                f"weight-transfer backend {backend!r} is not modelled by kvtop: read only 'nccl' (no memory before "
                "the trainer connects)",
                field=flag,
            )
    elif "--" + name == DEVICE_FLAG and value not in DEVICES_READ:
        raise InputError(f"device {value!r} is not modelled by kvtop: it plans CUDA GPUs (auto or cuda)", field=flag)
    elif "--" + name in PARTIAL_PREFILL_FLAGS and _as_int(value) != PARTIAL_PREFILLS_READ:
        raise InputError(
            f"{value!r} is not modelled by kvtop: only the default 1 is read (another value makes vLLM v0.8–v0.11 fall "
            "back to its V0 engine)",
            field=flag,
        )
    elif "--" + name == LOAD_FORMAT_FLAG and value not in LOAD_FORMATS_READ:
        raise InputError(
            f"load format {value!r} is not modelled by kvtop: read only auto, safetensors (DefaultModelLoader) and "
            "runai_streamer (the same tensors, streamed through host memory)",
            field=flag,
        )


def refuse_missing_load_format(value: object, version: ResolvedVersion, flag: str = LOAD_FORMAT_FLAG) -> None:
    """`--load-format runai_streamer` at a release without it (before v0.7.1): vLLM's argparse refuses it."""
    if value == RUNAI_STREAMER and not RUNAI_STREAMER_ERAS.at(version):
        raise InputError(f"not a load format of vLLM {version.label} (from v0.7.1)", field=flag)


def _as_int(value: object) -> int | None:
    """The value as argparse's `type=int` reads it, or None where it is no integer."""
    try:
        return int(value) if isinstance(value, str) else None
    except ValueError:
        return None
