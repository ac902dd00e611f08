"""SGLang's flags that do not touch GPU memory: accepted on a launch line and named, never modelled.

Every flag of `python -m sglang.launch_server` in the releases read (`flags_table.RELEASES_READ`): the argparse calls
of `ServerArgs.add_cli_args` (python/sglang/srt/server_args.py) and, from v0.5.14, the `A[...]`-annotated fields that
`add_cli_args_from_dataclass` turns into flags (srt/arg_groups/fields/*.py), read off each wheel. A flag here changes
nothing kvtop sizes: the API server, chat/tool/reasoning parsers, logging and metrics, the tokenizer, request defaults,
rendezvous and timeouts. Each row: the first and last release read that has the flag (last None: still in v0.5.23),
and the line that declares it in the newest of those; `True` where argparse's BooleanOptionalAction also takes
`--no-NAME`. Generated from the wheels (session 51, b2; first and last releases re-read on 40 wheels in session 60)."""

from __future__ import annotations

from collections.abc import Mapping

from kvtop.domain.engines.sglang.flags_table import FlagRow

# server: the API server's own setting (HTTP, TLS, auth, routes, warm-up skip, tokenizer processes): CPU processes with no GPU memory
SERVER: Mapping[str, FlagRow] = {
    "--admin-api-key": FlagRow("0.5.8", None, "srt/arg_groups/fields/serving.py:164 (v0.5.23)"),
    "--allowed-media-domains": FlagRow("0.5.18", None, "srt/arg_groups/fields/mm.py:88 (v0.5.23)"),
    "--api-key": FlagRow("0.4.0", None, "srt/arg_groups/fields/serving.py:160 (v0.5.23)"),
    "--enable-http2": FlagRow("0.5.11", None, "srt/arg_groups/fields/serving.py:121 (v0.5.23)"),
    "--enable-ssl-refresh": FlagRow("0.5.10rc0", None, "srt/arg_groups/fields/serving.py:152 (v0.5.23)"),
    "--enable-tokenizer-batch-encode": FlagRow("0.4.6.post5", None, "srt/arg_groups/fields/serving.py:313 (v0.5.23)"),
    "--fastapi-root-path": FlagRow("0.5.6", None, "srt/arg_groups/fields/serving.py:67 (v0.5.23)"),
    "--file-storage-path": FlagRow("0.4.3.post4", None, "srt/arg_groups/fields/serving.py:192 (v0.5.23)"),
    "--grpc-mode": FlagRow("0.5.4", None, "srt/arg_groups/fields/serving.py:80 (v0.5.23)"),
    "--skip-server-warmup": FlagRow("0.4.9.post6", None, "srt/arg_groups/fields/serving.py:116 (v0.5.23)"),
    "--ssl-ca-certs": FlagRow("0.5.10rc0", None, "srt/arg_groups/fields/serving.py:147 (v0.5.23)"),
    "--ssl-certfile": FlagRow("0.5.10rc0", None, "srt/arg_groups/fields/serving.py:143 (v0.5.23)"),
    "--ssl-keyfile": FlagRow("0.5.10rc0", None, "srt/arg_groups/fields/serving.py:139 (v0.5.23)"),
    "--ssl-keyfile-password": FlagRow("0.5.10rc0", None, "srt/arg_groups/fields/serving.py:148 (v0.5.23)"),
    "--tokenizer-worker-num": FlagRow("0.5.2", None, "srt/arg_groups/fields/serving.py:50 (v0.5.23)"),
    "--uvicorn-access-log-exclude-prefixes": FlagRow("0.5.8", None, "srt/arg_groups/fields/observability.py:58 (v0.5.23)"),
}  # fmt: skip


# chat: how requests and replies are rendered or parsed (chat and completion templates, tools, reasoning), on the CPU
CHAT: Mapping[str, FlagRow] = {
    "--chat-template": FlagRow("0.4.0", None, "srt/arg_groups/fields/serving.py:176 (v0.5.23)"),
    "--completion-template": FlagRow("0.4.4.post2", None, "srt/arg_groups/fields/serving.py:188 (v0.5.23)"),
    # session 60 (helper b's HAMi starts, 0.5.20): merged into each chat request's template kwargs, on the CPU (0.5.20
    # srt/entrypoints/openai/serving_chat.py:273-274; 0.5.23 :396-397, :1805; nothing allocated before the pool)
    "--default-chat-template-kwargs": FlagRow("0.5.16", None, "srt/arg_groups/fields/serving.py:209 (v0.5.23)"),
    "--hf-chat-template-name": FlagRow("0.5.8", None, "srt/arg_groups/fields/serving.py:184 (v0.5.23)"),
    "--preferred-sampling-params": FlagRow("0.4.6.post5", None, "srt/arg_groups/fields/serving.py:247 (v0.5.23)"),
    "--reasoning-parser": FlagRow("0.4.3.post4", None, "srt/server_args.py:368 (v0.5.23)"),
    "--sampling-defaults": FlagRow("0.5.3.post1", None, "srt/arg_groups/fields/serving.py:232 (v0.5.23)"),
    "--tool-call-parser": FlagRow("0.4.3", None, "srt/server_args.py:378 (v0.5.23)"),
    "--tool-server": FlagRow("0.5.1", None, "srt/arg_groups/fields/serving.py:228 (v0.5.23)"),
}  # fmt: skip


# log: what is logged, counted, traced or dumped
LOG: Mapping[str, FlagRow] = {
    "--bucket-e2e-request-latency": FlagRow("0.4.6.post5", None, "srt/arg_groups/fields/observability.py:112 (v0.5.23)"),
    "--bucket-inter-token-latency": FlagRow("0.4.6.post5", None, "srt/arg_groups/fields/observability.py:108 (v0.5.23)"),
    "--bucket-time-to-first-token": FlagRow("0.4.6.post5", None, "srt/arg_groups/fields/observability.py:104 (v0.5.23)"),
    "--collect-tokens-histogram": FlagRow("0.4.6.post5", "0.5.19", "srt/server_args.py:3866 (v0.5.19)"),
    "--crash-dump-folder": FlagRow("0.4.9.post6", None, "srt/arg_groups/fields/observability.py:65 (v0.5.23)"),
    "--custom-sigquit-handler": FlagRow("0.5.7", "0.5.13", "srt/server_args.py:5159 (v0.5.13)"),
    "--decode-log-interval": FlagRow("0.4.0", None, "srt/arg_groups/fields/observability.py:136 (v0.5.23)"),
    "--enable-cache-report": FlagRow("0.4.0", None, "srt/arg_groups/fields/serving.py:196 (v0.5.23)"),
    "--enable-metrics": FlagRow("0.4.0", None, "srt/arg_groups/fields/observability.py:70 (v0.5.23)"),
    "--enable-metrics-for-all-schedulers": FlagRow("0.4.9.post6", None, "srt/arg_groups/fields/observability.py:82 (v0.5.23)"),
    "--enable-mfu-metrics": FlagRow("0.5.10", None, "srt/arg_groups/fields/observability.py:78 (v0.5.23)"),
    "--enable-request-time-stats-logging": FlagRow("0.4.6.post5", None, "srt/arg_groups/fields/observability.py:140 (v0.5.23)"),
    "--enable-trace": FlagRow("0.5.3", None, "srt/arg_groups/fields/observability.py:164 (v0.5.23)"),
    "--export-metrics-to-file": FlagRow("0.5.5.post3", None, "srt/arg_groups/fields/observability.py:179 (v0.5.23)"),
    "--export-metrics-to-file-dir": FlagRow("0.5.5.post3", None, "srt/arg_groups/fields/observability.py:183 (v0.5.23)"),
    "--extra-metric-labels": FlagRow("0.5.9", None, "srt/arg_groups/fields/observability.py:97 (v0.5.23)"),
    "--gc-warning-threshold-secs": FlagRow("0.5.1", None, "srt/arg_groups/fields/observability.py:132 (v0.5.23)"),
    "--generation-tokens-buckets": FlagRow("0.5.2", None, "srt/arg_groups/fields/observability.py:124 (v0.5.23)"),
    "--kv-events-config": FlagRow("0.4.6.post5", None, "srt/arg_groups/fields/observability.py:144 (v0.5.23)"),
    "--log-level": FlagRow("0.4.0", None, "srt/arg_groups/fields/observability.py:31 (v0.5.23)"),
    "--log-level-http": FlagRow("0.4.0", None, "srt/arg_groups/fields/observability.py:32 (v0.5.23)"),
    "--log-requests": FlagRow("0.4.0", None, "srt/arg_groups/fields/observability.py:36 (v0.5.23)"),
    "--log-requests-format": FlagRow("0.5.7", None, "srt/arg_groups/fields/observability.py:47 (v0.5.23)"),
    "--log-requests-level": FlagRow("0.4.3.post4", None, "srt/arg_groups/fields/observability.py:40 (v0.5.23)"),
    "--log-requests-target": FlagRow("0.5.8", None, "srt/arg_groups/fields/observability.py:54 (v0.5.23)"),
    "--oltp-traces-endpoint": FlagRow("0.5.3", "0.5.4", "srt/server_args.py:2149 (v0.5.4)"),
    "--otlp-traces-endpoint": FlagRow("0.5.5", None, "srt/arg_groups/fields/observability.py:169 (v0.5.23)"),
    "--prompt-tokens-buckets": FlagRow("0.5.2", None, "srt/arg_groups/fields/observability.py:116 (v0.5.23)"),
    "--show-time-cost": FlagRow("0.4.0", None, "srt/arg_groups/fields/observability.py:69 (v0.5.23)"),
    "--tokenizer-metrics-allowed-custom-labels": FlagRow("0.5.3", None, "srt/arg_groups/fields/observability.py:93 (v0.5.23)"),
    "--tokenizer-metrics-custom-labels-header": FlagRow("0.5.3", None, "srt/arg_groups/fields/observability.py:90 (v0.5.23)"),
    "--trace-modules": FlagRow("0.5.13", None, "srt/arg_groups/fields/observability.py:165 (v0.5.23)"),
}  # fmt: skip


# fetch: where the checkpoint and tokenizer are fetched from and how the tokenizer runs, not what is built
FETCH: Mapping[str, FlagRow] = {
    "--download-dir": FlagRow("0.4.0", None, "srt/arg_groups/fields/model.py:344 (v0.5.23)"),
    "--revision": FlagRow("0.4.0", None, "srt/arg_groups/fields/model.py:122 (v0.5.23)"),
    "--skip-tokenizer-init": FlagRow("0.4.0", None, "srt/arg_groups/fields/serving.py:58 (v0.5.23)"),
    "--tokenizer-backend": FlagRow("0.5.11", None, "srt/arg_groups/fields/serving.py:41 (v0.5.23)"),
    "--tokenizer-mode": FlagRow("0.4.0", None, "srt/arg_groups/fields/serving.py:33 (v0.5.23)"),
    "--tokenizer-path": FlagRow("0.4.0", None, "srt/arg_groups/fields/serving.py:32 (v0.5.23)"),
}  # fmt: skip


# request: per-request defaults and order (seed, stream cadence, JSON whitespace, queue, schedule policy)
REQUEST: Mapping[str, FlagRow] = {
    "--constrained-json-disable-any-whitespace": FlagRow("0.5.4", None, "srt/arg_groups/fields/serving.py:289 (v0.5.23)"),
    "--constrained-json-whitespace-pattern": FlagRow("0.4.0", None, "srt/arg_groups/fields/serving.py:285 (v0.5.23)"),
    "--enable-priority-scheduling": FlagRow("0.5.3", None, "srt/arg_groups/fields/schedule.py:103 (v0.5.23)"),
    "--incremental-streaming-output": FlagRow("0.5.10rc0", None, "srt/arg_groups/fields/serving.py:274 (v0.5.23)"),
    "--max-queued-requests": FlagRow("0.4.9.post6", None, "srt/arg_groups/fields/schedule.py:35 (v0.5.23)"),
    "--priority-scheduling-preemption-threshold": FlagRow("0.5.3", None, "srt/arg_groups/fields/schedule.py:122 (v0.5.23)"),
    "--random-seed": FlagRow("0.4.0", None, "srt/arg_groups/fields/device.py:47 (v0.5.23)"),
    "--schedule-conservativeness": FlagRow("0.4.0", None, "srt/arg_groups/fields/schedule.py:139 (v0.5.23)"),
    "--schedule-low-priority-values-first": FlagRow("0.5.3", None, "srt/arg_groups/fields/schedule.py:118 (v0.5.23)"),
    "--schedule-policy": FlagRow("0.4.0", None, "srt/arg_groups/fields/schedule.py:86 (v0.5.23)"),
    "--stream-interval": FlagRow("0.4.0", None, "srt/arg_groups/fields/serving.py:262 (v0.5.23)"),
    "--stream-output": FlagRow("0.4.3", "0.5.19", "srt/server_args.py:3854 (v0.5.19)"),
}  # fmt: skip


# cluster: rendezvous addresses, ports, timeouts and which GPU ids a rank takes
CLUSTER: Mapping[str, FlagRow] = {
    "--base-gpu-id": FlagRow("0.4.0", None, "srt/arg_groups/fields/device.py:28 (v0.5.23)"),
    "--dist-timeout": FlagRow("0.4.3.post4", None, "srt/arg_groups/fields/parallel.py:29 (v0.5.23)"),
    "--gpu-id-step": FlagRow("0.4.3.post4", None, "srt/arg_groups/fields/device.py:32 (v0.5.23)"),
    "--nccl-port": FlagRow("0.4.9.post6", None, "srt/arg_groups/fields/parallel.py:25 (v0.5.23)"),
    "--soft-watchdog-timeout": FlagRow("0.5.7", None, "srt/arg_groups/fields/device.py:70 (v0.5.23)"),
    "--watchdog-timeout": FlagRow("0.4.0", None, "srt/arg_groups/fields/device.py:66 (v0.5.23)"),
}  # fmt: skip


# structured: structured-output grammars: compiled on the CPU, their bitmask allocated per step, not at start
STRUCTURED: Mapping[str, FlagRow] = {
    "--grammar-backend": FlagRow("0.4.0", None, "srt/arg_groups/fields/exec_.py:266 (v0.5.23)"),
}  # fmt: skip

# compile: torch.compile's batch-size cap, read only under --enable-torch-compile (`get_batch_sizes_to_capture`'s
# compile_bs: model_executor/cuda_graph_runner.py:137-141 at 0.4.3, :217-221 at 0.5.9; runner/base_cuda_graph_runner.py
# :105-109 at 0.5.23; beside it only the CPU device's graph runner reads it): captured after the pool (torch_compile.py,
# which takes the flag from v0.5.10 and refuses it before)
COMPILE: Mapping[str, FlagRow] = {
    "--torch-compile-max-bs": FlagRow("0.4.0", None, "srt/arg_groups/fields/exec_.py:698 (v0.5.23)"),
}  # fmt: skip

# p2p: the GPU peer-access test before the custom all-reduce is built. It runs in a subprocess and can only turn the
# custom all-reduce off where P2P fails; that test comes after the one that turns it off on more than two PCIe GPUs
# (distributed/device_communicators/custom_all_reduce.py:194-210 at 0.4.3, custom_all_reduce_utils.py:491-510 at
# 0.5.23), NVLink GPUs pass it, and kvtop plans PCIe GPUs without the custom all-reduce (calibration.py's context)
P2P: Mapping[str, FlagRow] = {
    "--enable-p2p-check": FlagRow("0.4.0", None, "srt/arg_groups/fields/parallel.py:273 (v0.5.23)"),
}  # fmt: skip

# runtime: what a step runs or how the scheduler mixes and routes requests, nothing allocated before the KV pool is
# sized: the pool is built in Scheduler.__init__ (managers/scheduler.py:575 `build_kv_cache`, v0.5.23) and the CUDA
# graphs, whose sampler buffers and FlashInfer all-reduce workspace (model_executor/runner/base_runner.py:299-333) sit
# in the share the static fraction leaves, are captured after it (:1146 `init_all_cuda_graphs`). `--sampling-backend`:
# the sampler's kernel (layers/sampler.py:402); `--load-balance-method`: which DP rank a request goes to, in the CPU
# controller (managers/data_parallel_controller.py:173); `--enable-mixed-chunk`: a prefill chunk batched with the running
# decodes (managers/scheduler.py:1377), under the same --chunked-prefill-size; `--bf16-gemm-backend`: the BF16 GEMM
# kernel (layers/quantization/unquant.py:598, the weights as loaded); `--enforce-disable-flashinfer-allreduce-fusion`:
# no fusion backend (arg_groups/overrides.py:1009), so no fusion workspace at graph capture. No sizing rule of the
# releases read reads them (v0.4.0 model_runner.py profile_max_num_token, v0.5.23 mem_cache/kv_cache_configurator.py)
RUNTIME: Mapping[str, FlagRow] = {
    "--bf16-gemm-backend": FlagRow("0.5.15", None, "srt/arg_groups/fields/exec_.py:291 (v0.5.23)"),
    "--enable-mixed-chunk": FlagRow("0.4.0", None, "srt/arg_groups/fields/schedule.py:208 (v0.5.23)"),
    "--enforce-disable-flashinfer-allreduce-fusion": FlagRow("0.5.10", None, "srt/arg_groups/fields/exec_.py:766 (v0.5.23)"),
    "--load-balance-method": FlagRow("0.4.0", None, "srt/arg_groups/fields/parallel.py:91 (v0.5.23)"),
    "--sampling-backend": FlagRow("0.4.0", None, "srt/server_args.py:359 (v0.5.23)"),
}  # fmt: skip

# why each group has no effect on memory, as the plan's line and docs/engines/sglang.md say it
NEUTRAL_GROUPS: Mapping[str, tuple[str, Mapping[str, FlagRow]]] = {
    "server": (
        "the API server's own setting (HTTP, TLS, auth, routes, warm-up skip, tokenizer processes): CPU processes with no GPU memory",
        SERVER,
    ),
    "chat": (
        "how requests and replies are rendered or parsed (chat and completion templates, tools, reasoning), on the CPU",
        CHAT,
    ),
    "log": (
        "what is logged, counted, traced or dumped",
        LOG,
    ),
    "fetch": (
        "where the checkpoint and tokenizer are fetched from and how the tokenizer runs, not what is built",
        FETCH,
    ),
    "request": (
        "per-request defaults and order (seed, stream cadence, JSON whitespace, queue, schedule policy)",
        REQUEST,
    ),
    "cluster": (
        "rendezvous addresses, ports, timeouts and which GPU ids a rank takes",
        CLUSTER,
    ),
    "structured": (
        "structured-output grammars: compiled on the CPU, their bitmask allocated per step, not at start",
        STRUCTURED,
    ),
    "compile": (
        "torch.compile's batch-size cap: read only where torch.compile is enabled (cuda_graph_runner.py), after the pool",
        COMPILE,
    ),
    "p2p": (
        "the GPU peer-access test: it can only turn the custom all-reduce off, which kvtop plans off on PCIe GPUs",
        P2P,
    ),
    "runtime": (
        "a step's kernels, the sampler, the DP dispatch and prefill-decode mixing: nothing allocated before the KV pool",
        RUNTIME,
    ),
}
