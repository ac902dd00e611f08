"""vLLM's flags that do not touch GPU memory: accepted on a launch line and named, never modelled.

Every flag of `vllm serve` in the releases read (`flags_table.RELEASES_READ`): EngineArgs.add_cli_args
(vllm/engine/arg_utils.py) and the OpenAI server's own (vllm/entrypoints/openai/cli_args.py; common/ and launchers/
cli_args.py in later releases), read off each wheel's argparse calls. A flag here changes nothing kvtop sizes: the
API server's process, logging, the tokenizer and host caches, where a checkpoint is fetched from, request defaults.
The plan lists those a launch passes under its engine-flags line. Each row: the first and last release read that
has the flag (last None: still in v0.34.0), and the line that declares it in the newest of those; `True` where it is a
bool field (argparse's BooleanOptionalAction also takes `--no-NAME`). Generated from the wheels (session 51, a3).
"""

from __future__ import annotations

from collections.abc import Mapping

from kvtop.domain.engines.vllm.flags_table import FlagSpan
from kvtop.domain.engines.vllm.flags_valued import VALUED
from kvtop.domain.engines.vllm.flags_valued import WHY as VALUED_WHY

# server: the API server's own setting (HTTP, TLS, CORS, auth, routes, docs): a CPU process with no GPU memory
SERVER: Mapping[str, FlagSpan] = {
    "--allow-credentials": FlagSpan("0.6.3.post1", None, "entrypoints/common/cli_args.py:327 (v0.33.0)", True),
    "--allowed-headers": FlagSpan("0.6.3.post1", None, "entrypoints/common/cli_args.py:333 (v0.33.0)"),
    "--allowed-local-media-path": FlagSpan("0.6.4", None, "engine/arg_utils.py:980 (v0.33.0)"),
    "--allowed-media-domains": FlagSpan("0.11.0", None, "engine/arg_utils.py:983 (v0.33.0)"),
    "--allowed-methods": FlagSpan("0.6.3.post1", None, "entrypoints/common/cli_args.py:331 (v0.33.0)"),
    "--allowed-origins": FlagSpan("0.6.3.post1", None, "entrypoints/common/cli_args.py:329 (v0.33.0)"),
    "--api-key": FlagSpan("0.6.3.post1", None, "entrypoints/common/cli_args.py:335 (v0.33.0)"),
    "--api-server-count": FlagSpan("0.9.1", None, "entrypoints/common/cli_args.py:451 (v0.33.0)"),
    "--disable-access-log-for-endpoints": FlagSpan("0.19.0", None, "entrypoints/common/cli_args.py:321 (v0.33.0)"),
    "--disable-fastapi-docs": FlagSpan("0.6.3.post1", None, "entrypoints/common/cli_args.py:369 (v0.33.0)", True),
    "--disable-frontend-multiprocessing": FlagSpan("0.6.3.post1", "0.15.1", "entrypoints/openai/cli_args.py:150 (v0.15.1)", True),
    "--disable-uvicorn-access-log": FlagSpan("0.8.5.post1", None, "entrypoints/common/cli_args.py:319 (v0.33.0)", True),
    "--enable-force-include-usage": FlagSpan("0.9.2", None, "entrypoints/common/cli_args.py:162 (v0.33.0)", True),
    "--enable-offline-docs": FlagSpan("0.15.1", None, "entrypoints/common/cli_args.py:377 (v0.33.0)", True),
    "--enable-prompt-tokens-details": FlagSpan("0.6.4", None, "entrypoints/common/cli_args.py:156 (v0.33.0)", True),
    "--enable-request-id-headers": FlagSpan("0.7.1", None, "entrypoints/common/cli_args.py:367 (v0.33.0)", True),
    "--enable-server-load-tracking": FlagSpan("0.8.0", None, "entrypoints/common/cli_args.py:160 (v0.33.0)", True),
    "--enable-ssl-refresh": FlagSpan("0.8.0", None, "entrypoints/common/cli_args.py:352 (v0.33.0)", True),
    "--enable-tokenizer-info-endpoint": FlagSpan("0.10.0", None, "entrypoints/common/cli_args.py:171 (v0.33.0)", True),
    "--fingerprint-mode": FlagSpan("0.21.0", None, "entrypoints/common/cli_args.py:223 (v0.33.0)"),
    "--fingerprint-value": FlagSpan("0.21.0", None, "entrypoints/common/cli_args.py:233 (v0.33.0)"),
    "--grpc": FlagSpan("0.19.0", None, "entrypoints/common/cli_args.py:465 (v0.33.0)"),
    "--grpc-port": FlagSpan("0.32.0", None, "entrypoints/common/cli_args.py:297 (v0.33.0)"),
    "--h11-max-header-count": FlagSpan("0.10.1.1", None, "entrypoints/common/cli_args.py:374 (v0.33.0)"),
    "--h11-max-incomplete-event-size": FlagSpan("0.10.1.1", None, "entrypoints/common/cli_args.py:371 (v0.33.0)"),
    "--lora-modules": FlagSpan("0.6.3.post1", None, "entrypoints/common/cli_args.py:81 (v0.33.0)"),
    "--middleware": FlagSpan("0.6.3.post1", None, "entrypoints/common/cli_args.py:361 (v0.33.0)"),
    "--response-role": FlagSpan("0.6.3.post1", None, "entrypoints/common/cli_args.py:117 (v0.33.0)"),
    "--return-tokens-as-token-ids": FlagSpan("0.6.3.post1", None, "entrypoints/common/cli_args.py:119 (v0.33.0)", True),
    "--root-path": FlagSpan("0.6.3.post1", None, "entrypoints/common/cli_args.py:359 (v0.33.0)"),
    "--shutdown-timeout": FlagSpan("0.19.0", None, "engine/arg_utils.py:1940 (v0.33.0)"),
    "--sse-keep-alive-interval": FlagSpan("0.29.0", None, "entrypoints/common/cli_args.py:164 (v0.33.0)"),
    "--ssl-ca-certs": FlagSpan("0.6.3.post1", None, "entrypoints/common/cli_args.py:350 (v0.33.0)"),
    "--ssl-cert-reqs": FlagSpan("0.6.3.post1", None, "entrypoints/common/cli_args.py:354 (v0.33.0)"),
    "--ssl-certfile": FlagSpan("0.6.3.post1", None, "entrypoints/common/cli_args.py:348 (v0.33.0)"),
    "--ssl-ciphers": FlagSpan("0.15.1", None, "entrypoints/common/cli_args.py:356 (v0.33.0)"),
    "--ssl-keyfile": FlagSpan("0.6.3.post1", None, "entrypoints/common/cli_args.py:346 (v0.33.0)"),
    "--tokens-only": FlagSpan("0.11.1", None, "entrypoints/common/cli_args.py:211 (v0.33.0)", True),
    "--trust-request-mm-kwargs": FlagSpan("0.32.0", None, "entrypoints/common/cli_args.py:99 (v0.33.0)", True),
    "--uds": FlagSpan("0.10.1", None, "entrypoints/common/cli_args.py:313 (v0.33.0)"),
    "--uvicorn-log-level": FlagSpan("0.6.3.post1", None, "entrypoints/common/cli_args.py:315 (v0.33.0)"),
}  # fmt: skip

# chat: how requests and replies are rendered or parsed (chat template, tools, reasoning), on the CPU
CHAT: Mapping[str, FlagSpan] = {
    "--anthropic-disabled-thinking-effort": FlagSpan("0.32.0", None, "entrypoints/common/cli_args.py:201 (v0.33.0)"),
    "--chat-template": FlagSpan("0.6.3.post1", None, "entrypoints/common/cli_args.py:86 (v0.33.0)"),
    "--chat-template-content-format": FlagSpan("0.6.5", None, "entrypoints/common/cli_args.py:89 (v0.33.0)"),
    "--chat-template-text-format": FlagSpan("0.6.4", "0.6.4.post1", "engine/arg_utils.py:261 (v0.6.4.post1)"),
    "--cohere-format": FlagSpan("0.27.0", None, "entrypoints/common/cli_args.py:191 (v0.33.0)"),
    "--cohere-is-reasoning-model": FlagSpan("0.27.0", None, "entrypoints/common/cli_args.py:182 (v0.33.0)", True),
    "--default-chat-template-kwargs": FlagSpan("0.15.1", None, "entrypoints/common/cli_args.py:104 (v0.33.0)"),
    "--enable-auto-tool-choice": FlagSpan("0.6.3.post1", None, "entrypoints/common/cli_args.py:123 (v0.33.0)", True),
    "--enable-reasoning": FlagSpan("0.7.1", "0.9.2", "engine/arg_utils.py:626 (v0.9.2)", True),
    "--exclude-tools-when-tool-choice-none": FlagSpan("0.10.1", None, "entrypoints/common/cli_args.py:126 (v0.33.0)", True),
    "--expand-tools-even-if-tool-choice-none": FlagSpan("0.9.2", "0.9.2", "entrypoints/openai/cli_args.py:226 (v0.9.2)"),
    "--reasoning-effort-map": FlagSpan("0.33.0", None, "entrypoints/common/cli_args.py:110 (v0.33.0)"),
    "--reasoning-parser-plugin": FlagSpan("0.11.1", None, "engine/arg_utils.py:1151 (v0.33.0)"),
    "--tool-call-parser": FlagSpan("0.6.3.post1", None, "entrypoints/common/cli_args.py:129 (v0.33.0)"),
    "--tool-parser-plugin": FlagSpan("0.6.3.post1", None, "entrypoints/common/cli_args.py:134 (v0.33.0)"),
    "--tool-server": FlagSpan("0.10.1", None, "entrypoints/common/cli_args.py:146 (v0.33.0)"),
    "--tool-strict-level": FlagSpan("0.32.0", None, "entrypoints/common/cli_args.py:138 (v0.33.0)"),
    "--trust-request-chat-template": FlagSpan("0.11.0", None, "entrypoints/common/cli_args.py:95 (v0.33.0)", True),
}  # fmt: skip

# log: what is logged, counted or traced
LOG: Mapping[str, FlagSpan] = {
    "--aggregate-engine-logging": FlagSpan("0.11.1", None, "engine/arg_utils.py:1925 (v0.33.0)"),
    "--collect-detailed-traces": FlagSpan("0.6.3.post1", None, "engine/arg_utils.py:1689 (v0.33.0)"),
    "--cudagraph-metrics": FlagSpan("0.13.0", None, "engine/arg_utils.py:1708 (v0.33.0)"),
    "--custom-histogram-buckets": FlagSpan("0.32.0", None, "engine/arg_utils.py:1704 (v0.33.0)"),
    "--disable-log-requests": FlagSpan("0.6.3.post1", "0.15.1", "engine/arg_utils.py:2047 (v0.15.1)", True),
    "--disable-log-stats": FlagSpan("0.6.3.post1", None, "engine/arg_utils.py:1919 (v0.33.0)"),
    "--enable-log-deltas": FlagSpan("0.15.1", None, "entrypoints/common/cli_args.py:178 (v0.33.0)", True),
    "--enable-log-outputs": FlagSpan("0.10.1", None, "entrypoints/common/cli_args.py:174 (v0.33.0)", True),
    "--enable-log-requests": FlagSpan("0.10.1", None, "engine/arg_utils.py:3259 (v0.33.0)", True),
    "--enable-logging-iteration-details": FlagSpan("0.15.1", None, "engine/arg_utils.py:1720 (v0.33.0)"),
    "--enable-mfu-metrics": FlagSpan("0.15.1", None, "engine/arg_utils.py:1716 (v0.33.0)"),
    "--enable-per-request-metrics": FlagSpan("0.25.0", None, "entrypoints/common/cli_args.py:158 (v0.33.0)", True),
    "--kv-cache-metrics": FlagSpan("0.12.0", None, "engine/arg_utils.py:1697 (v0.33.0)"),
    "--kv-cache-metrics-sample": FlagSpan("0.12.0", None, "engine/arg_utils.py:1700 (v0.33.0)"),
    "--kv-events-config": FlagSpan("0.9.0", None, "engine/arg_utils.py:1883 (v0.33.0)"),
    "--log-config-file": FlagSpan("0.9.1", None, "engine/arg_utils.py:1665 (v0.33.0)"),
    "--log-error-stack": FlagSpan("0.10.2", None, "entrypoints/common/cli_args.py:209 (v0.33.0)", True),
    "--max-log-len": FlagSpan("0.6.3.post1", None, "entrypoints/common/cli_args.py:153 (v0.33.0)"),
    "--otlp-traces-endpoint": FlagSpan("0.6.3.post1", None, "engine/arg_utils.py:1686 (v0.33.0)"),
    "--per-request-spec-decode-metrics": FlagSpan("0.29.0", None, "engine/arg_utils.py:1693 (v0.33.0)"),
    "--ray-workers-use-nsight": FlagSpan("0.6.3.post1", None, "engine/arg_utils.py:1363 (v0.33.0)"),
    "--show-hidden-metrics-for-version": FlagSpan("0.8.0", None, "engine/arg_utils.py:1682 (v0.33.0)"),
}  # fmt: skip

# fetch: where and how the checkpoint and tokenizer are fetched, not what is built from them
FETCH: Mapping[str, FlagSpan] = {
    "--code-revision": FlagSpan("0.6.3.post1", None, "engine/arg_utils.py:987 (v0.33.0)"),
    "--download-dir": FlagSpan("0.6.3.post1", None, "engine/arg_utils.py:1086 (v0.33.0)"),
    "--hf-token": FlagSpan("0.8.5.post1", None, "engine/arg_utils.py:1034 (v0.33.0)"),
    "--ignore-patterns": FlagSpan("0.6.3.post1", None, "engine/arg_utils.py:1101 (v0.33.0)"),
    "--max-parallel-loading-workers": FlagSpan("0.6.3.post1", None, "engine/arg_utils.py:1359 (v0.33.0)"),
    "--revision": FlagSpan("0.6.3.post1", None, "engine/arg_utils.py:986 (v0.33.0)"),
    "--tokenizer-revision": FlagSpan("0.6.3.post1", None, "engine/arg_utils.py:988 (v0.33.0)"),
    "--use-tqdm-on-load": FlagSpan("0.8.0", None, "engine/arg_utils.py:1102 (v0.33.0)", True),
    "--shuffle-safetensors-files": FlagSpan("0.34.0", None, "engine/arg_utils.py:1118 (v0.34.0)", True),
}  # fmt: skip

# cpu: tokenizer, renderer and media caches in host memory
CPU: Mapping[str, FlagSpan] = {
    "--disable-mm-preprocessor-cache": FlagSpan("0.7.1", "0.12.0", "engine/arg_utils.py:941 (v0.12.0)"),
    "--interleave-mm-strings": FlagSpan("0.10.0", None, "engine/arg_utils.py:1550 (v0.33.0)"),
    "--mm-processor-cache-gb": FlagSpan("0.10.1", None, "engine/arg_utils.py:1511 (v0.33.0)"),
    "--mm-processor-cache-type": FlagSpan("0.11.0", None, "engine/arg_utils.py:1514 (v0.33.0)"),
    "--mm-shm-cache-max-object-size-mb": FlagSpan("0.11.0", None, "engine/arg_utils.py:1520 (v0.33.0)"),
    "--renderer-num-workers": FlagSpan("0.19.0", None, "engine/arg_utils.py:1074 (v0.33.0)"),
    "--skip-tokenizer-init": FlagSpan("0.6.3.post1", None, "engine/arg_utils.py:1024 (v0.33.0)"),
    "--tokenizer": FlagSpan("0.6.3.post1", None, "engine/arg_utils.py:972 (v0.33.0)"),
    "--tokenizer-mode": FlagSpan("0.6.3.post1", None, "engine/arg_utils.py:973 (v0.33.0)"),
    "--tokenizer-pool-extra-config": FlagSpan("0.6.3.post1", "0.9.2", "engine/arg_utils.py:747 (v0.9.2)"),
    "--tokenizer-pool-size": FlagSpan("0.6.3.post1", "0.9.2", "engine/arg_utils.py:743 (v0.9.2)"),
    "--tokenizer-pool-type": FlagSpan("0.6.3.post1", "0.9.2", "engine/arg_utils.py:745 (v0.9.2)"),
}  # fmt: skip

# request: per-request defaults and order (seed, sampling defaults, policy, stream cadence)
REQUEST: Mapping[str, FlagSpan] = {
    "--generation-config": FlagSpan("0.7.1", None, "engine/arg_utils.py:1040 (v0.33.0)"),
    "--logits-processor-pattern": FlagSpan("0.6.5", "0.15.1", "engine/arg_utils.py:692 (v0.15.1)"),
    "--multi-step-stream-outputs": FlagSpan("0.6.3.post1", "0.10.0", "engine/arg_utils.py:805 (v0.10.0)"),
    "--override-generation-config": FlagSpan("0.7.1", None, "engine/arg_utils.py:1043 (v0.33.0)"),
    "--prefix-caching-hash-algo": FlagSpan("0.8.5.post1", None, "engine/arg_utils.py:1408 (v0.33.0)"),
    "--scheduling-policy": FlagSpan("0.6.3.post1", None, "engine/arg_utils.py:1781 (v0.33.0)"),
    "--seed": FlagSpan("0.6.3.post1", None, "engine/arg_utils.py:978 (v0.33.0)"),
    "--stream-interval": FlagSpan("0.11.1", None, "engine/arg_utils.py:1813 (v0.33.0)"),
    "--cache-aware-admission-threshold": FlagSpan("0.34.0", None, "engine/arg_utils.py:1834 (v0.34.0)"),
    "--cache-aware-admission-window": FlagSpan("0.34.0", None, "engine/arg_utils.py:1830 (v0.34.0)"),
    "--max-num-inflight-kv-loads": FlagSpan("0.34.0", None, "engine/arg_utils.py:1784 (v0.34.0)"),
}  # fmt: skip

# cluster: rendezvous addresses, ports, timeouts and CPU affinity
CLUSTER: Mapping[str, FlagSpan] = {
    "--cpu-distributed-timeout-seconds": FlagSpan("0.22.0", None, "engine/arg_utils.py:1183 (v0.33.0)"),
    "--data-parallel-supervisor-port": FlagSpan("0.22.0", None, "entrypoints/common/cli_args.py:302 (v0.33.0)"),
    "--distributed-timeout-seconds": FlagSpan("0.19.0", None, "engine/arg_utils.py:1179 (v0.33.0)"),
    "--dp-supervisor-probe-failure-threshold": FlagSpan("0.22.0", None, "entrypoints/common/cli_args.py:310 (v0.33.0)"),
    "--dp-supervisor-probe-interval-s": FlagSpan("0.22.0", None, "entrypoints/common/cli_args.py:305 (v0.33.0)"),
    "--dp-supervisor-probe-timeout-s": FlagSpan("0.22.0", None, "entrypoints/common/cli_args.py:307 (v0.33.0)"),
    "--fail-on-environ-validation": FlagSpan("0.19.0", None, "engine/arg_utils.py:1932 (v0.33.0)", True),
    "--numa-bind": FlagSpan("0.20.0", None, "engine/arg_utils.py:1187 (v0.33.0)"),
    "--numa-bind-cpus": FlagSpan("0.20.0", None, "engine/arg_utils.py:1191 (v0.33.0)"),
    "--numa-bind-nodes": FlagSpan("0.20.0", None, "engine/arg_utils.py:1188 (v0.33.0)"),
    "--headless-client-handshake-address": FlagSpan("0.34.0", None, "entrypoints/common/cli_args.py:455 (v0.34.0)"),
}  # fmt: skip

# structured: structured-output grammars: compiled on the CPU, their bitmask allocated per step, not at start
STRUCTURED: Mapping[str, FlagSpan] = {
    "--guided-decoding-backend": FlagSpan("0.6.3.post1", "0.10.2", "engine/arg_utils.py:615 (v0.10.2)"),
    "--guided-decoding-disable-additional-properties": FlagSpan("0.9.0", "0.10.2", "engine/arg_utils.py:623 (v0.10.2)"),
    "--guided-decoding-disable-any-whitespace": FlagSpan("0.9.0", "0.10.2", "engine/arg_utils.py:620 (v0.10.2)"),
    "--guided-decoding-disable-fallback": FlagSpan("0.9.0", "0.10.2", "engine/arg_utils.py:617 (v0.10.2)"),
    "--structured-outputs-config": FlagSpan("0.11.0", None, "engine/arg_utils.py:1902 (v0.33.0)"),
}  # fmt: skip

# step: a path or cadence chosen per scheduled step after the start, never in the profile run that sizes the KV cache
# (session 53, e2). Cascade attention: chosen per batch from the scheduled requests' common prefix
# (v1/worker/gpu_model_runner.py:1067 v0.10.2, :3865 v0.19.0), the profile's dummy run passes use_cascade_attn=False
# (:5304 v0.10.2, :5961 v0.19.0), FlashInfer's cascade wrapper is made lazily on the shared workspace buffer
# (v1/attention/backends/flashinfer.py:332 v0.9.2), the flag is outside the compile hash (ModelConfig.compute_hash:
# not a factor through v0.11.2, an ignored factor from v0.12.0); removed in v0.33.0 (gpu_model_runner.py:541 sets it
# off, arg_utils.py:474 "has no effect"). DP sync interval: how many engine steps between DP state all-reduces
# (v1/engine/core.py:2267 v0.30.0, :2557 v0.33.0), a runtime cadence
STEP: Mapping[str, FlagSpan] = {
    "--disable-cascade-attn": FlagSpan("0.8.5.post1", None, "engine/arg_utils.py:1018 (v0.33.0)", True),
    "--dp-sync-interval": FlagSpan("0.30.0", None, "engine/arg_utils.py:1340 (v0.33.0)"),
}  # fmt: skip

# why each group has no effect on memory, as the plan's line and docs/engines/vllm.md §3.13 say it
NEUTRAL_GROUPS: Mapping[str, tuple[str, Mapping[str, FlagSpan]]] = {
    "server": (
        "the API server's own setting (HTTP, TLS, CORS, auth, routes, docs): a CPU process with no GPU memory",
        SERVER,
    ),
    "chat": (
        "how requests and replies are rendered or parsed (chat template, tools, reasoning), on the CPU",
        CHAT,
    ),
    "log": ("what is logged, counted or traced", LOG),
    "fetch": ("where and how the checkpoint and tokenizer are fetched, not what is built from them", FETCH),
    "cpu": ("tokenizer, renderer and media caches in host memory", CPU),
    "request": ("per-request defaults and order (seed, sampling defaults, policy, stream cadence)", REQUEST),
    "cluster": ("rendezvous addresses, ports, timeouts and CPU affinity", CLUSTER),
    "structured": (
        "structured-output grammars: compiled on the CPU, their bitmask allocated per step, not at start",
        STRUCTURED,
    ),
    "step": (
        "a path or cadence chosen per scheduled step after the start (cascade attention, the DP sync interval), "
        "never in the profile run that sizes the KV cache",
        STEP,
    ),
    # neutral only at the values read (flags_valued.py, session 53): flags.py refuses the others
    "value": (VALUED_WHY, VALUED),
}
