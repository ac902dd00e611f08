"""The corpus of issue 25, item 4: ≥ 150 spellings of a secret and ≥ 100 values an operator needs to see.

Secrets travel by name (`--api-key X`) and by shape alone (an `hf_…` token as a positional argument,
in a process title, a Prometheus label, a quoted log line, an error message). Each shaped token
below is made here in its issuer's documented form (prefix, alphabet, length) from a fixed seed:
none is real. `BENIGN` are flags and values from the engines' own launch commands (docs/engines/,
tests/data/cases): numbers, sizes, dtypes, paths and model ids, switches, and the flags whose names
hold a secret word in another sense (`--speculative-token-map`, `--key-cache-dtype`). Expected
results are stated by hand: a secret's characters never survive; a benign argv comes back as it was.
"""

from __future__ import annotations

import random
import string

_RANDOM = random.Random(25)
_ALNUM = string.ascii_letters + string.digits
_URLSAFE = _ALNUM + "-_"
_HEX = "0123456789abcdef"


def _draw(alphabet: str, length: int) -> str:
    """`length` characters of `alphabet`, with both cases and two digits where the alphabet has them
    (as a generated token of that length has)."""
    wanted = [test for test in (str.isupper, str.islower) if any(test(c) for c in alphabet)]
    digits = 2 if any(c.isdigit() for c in alphabet) and alphabet != _HEX else 0
    while True:
        body = "".join(_RANDOM.choice(alphabet) for _ in range(length))
        if all(any(test(c) for c in body) for test in wanted) and sum(c.isdigit() for c in body) >= digits:
            return body


#: issuer → one token in its form (prefix + body as the issuer documents it)
TOKENS: dict[str, str] = {
    "Hugging Face user token": "hf_" + _draw(string.ascii_letters, 34),
    "Hugging Face org token": "api_org_" + _draw(string.ascii_letters, 34),
    "OpenAI legacy key": "sk-" + _draw(_ALNUM, 48),
    "OpenAI project key": "sk-proj-" + _draw(_URLSAFE, 120),
    "OpenAI service account": "sk-svcacct-" + _draw(_URLSAFE, 100),
    "Anthropic key": "sk-ant-api03-" + _draw(_URLSAFE, 95),
    "DeepSeek key": "sk-" + _draw(_HEX, 32) + "Ab",
    "NVIDIA API key": "nvapi-" + _draw(_URLSAFE, 64),
    "GitHub classic PAT": "ghp_" + _draw(_ALNUM, 36),
    "GitHub OAuth": "gho_" + _draw(_ALNUM, 36),
    "GitHub app user": "ghu_" + _draw(_ALNUM, 36),
    "GitHub app server": "ghs_" + _draw(_ALNUM, 36),
    "GitHub refresh": "ghr_" + _draw(_ALNUM, 36),
    "GitHub fine-grained PAT": "github_pat_" + _draw(_ALNUM, 22) + "_" + _draw(_ALNUM, 59),
    "GitLab PAT": "glpat-" + _draw(_URLSAFE, 20),
    "GitLab deploy token": "gldt-" + _draw(_URLSAFE, 20),
    "GitLab runner token": "glrt-" + _draw(_URLSAFE, 20),
    "Slack bot": "xoxb-" + "".join(_RANDOM.choice(string.digits) for _ in range(12)) + "-" + _draw(_ALNUM, 24),
    "Slack user": "xoxp-" + "".join(_RANDOM.choice(string.digits) for _ in range(12)) + "-" + _draw(_ALNUM, 32),
    "Slack app": "xapp-1-A0" + _draw(_ALNUM, 9) + "-" + _draw(_ALNUM, 40),
    "Google API key": "AIza" + _draw(_URLSAFE, 35),
    "Google OAuth access": "ya29." + _draw(_URLSAFE, 120),
    "Google OAuth client secret": "GOCSPX-" + _draw(_URLSAFE, 28),
    "AWS access key id": "AKIA" + "".join(_RANDOM.choice(string.ascii_uppercase + "234567") for _ in range(16)),
    "AWS temporary key id": "ASIA" + "".join(_RANDOM.choice(string.ascii_uppercase + "234567") for _ in range(16)),
    "Stripe live secret": "sk_live_" + _draw(_ALNUM, 24),
    "Stripe restricted": "rk_live_" + _draw(_ALNUM, 24),
    "Stripe webhook secret": "whsec_test_" + _draw(_ALNUM, 32),
    "npm token": "npm_" + _draw(_ALNUM, 36),
    "PyPI token": "pypi-AgEIcHlwaS5vcmc" + _draw(_URLSAFE, 60),
    "Vault service token": "hvs." + _draw(_URLSAFE, 90),
    "Databricks token": "dapi" + _draw(_HEX, 32),
    "DigitalOcean token": "dop_v1_" + _draw(_HEX, 64),
    "SendGrid key": "SG." + _draw(_URLSAFE, 22) + "." + _draw(_URLSAFE, 43),
    "Replicate token": "r8_" + _draw(_ALNUM, 37),
    "Groq key": "gsk_" + _draw(_ALNUM, 52),
    "Perplexity key": "pplx-" + _draw(_ALNUM, 48),
    "Together key": "tgp_v1_" + _draw(_URLSAFE, 43),
    "Fireworks key": "fw_" + _draw(_ALNUM, 24),
    "LangSmith key": "lsv2_pt_" + _draw(_HEX, 32) + "_" + _draw(_HEX, 10),
    "Tavily key": "tvly-" + _draw(_ALNUM, 32),
    "Notion secret": "secret_" + _draw(_ALNUM, 43),
    "Linear key": "lin_api_" + _draw(_ALNUM, 40),
    "Postman key": "PMAK-" + _draw(_HEX, 24) + "-" + _draw(_HEX, 34),
    "Shopify token": "shpat_" + _draw(_HEX, 32),
    "Atlassian token": "ATATT3xFfGF0" + _draw(_URLSAFE, 180),
    "Doppler token": "dp.pt." + _draw(_ALNUM, 43),
    "Mailgun key": "key-" + _draw(_HEX, 32),
    "Twilio API key": "SK" + _draw(_HEX, 32),
    "JSON Web Token": "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJvcHMiLCJleHAiOjE3NTAwMDAwMDB9."
    + _draw(_URLSAFE, 86),
    "Telegram bot token": "7234567891:AA" + _draw(_URLSAFE, 33),
}
assert len(TOKENS) == 51

# Where a shaped token stands with no secret name to give it away: {} is the token.
PLACES: dict[str, tuple[str, ...]] = {
    "a positional argument": ("python", "upload.py", "{}"),
    "a renamed process's title": ("sync-worker {} --interval 60",),
    "a quoted log line": ("[2026-01-02 10:00:00] INFO loading with headers={{'x': '{}'}}",),
    "a URL path": ("curl", "https://api.example.com/v1/{}/models"),
    "an error message": ("connection refused by https://proxy.internal/?session={} (401)",),
}

# (id, argv, the text of a secret inside it): secrets whose names give them away, in every spelling
S = "Zq7vK2pL9xWm4RtY"
NAMED: list[tuple[str, tuple[str, ...]]] = [
    ("--api-key", ("--api-key", S)), ("--api-key=", (f"--api-key={S}",)), ("--hf-token", ("--hf-token", S)),
    ("--openai-api-key", ("--openai-api-key", S)), ("--admin-api-key=", (f"--admin-api-key={S}",)),
    ("-k", ("-k", S)), ("-kVALUE", (f"-k{S}",)), ("--password", ("--password", S)), ("--db-password=", (f"--db-password={S}",)),
    ("--secret", ("--secret", S)), ("--client-secret", ("--client-secret", S)), ("--auth-token", ("--auth-token", S)),
    ("--access-token=", (f"--access-token={S}",)), ("--credentials", ("--credentials", S)), ("--token", ("--token", S)),
    ("--apiKey", ("--apiKey", S)), ("--api_key", ("--api_key", S)), ("--jwt", ("--jwt", S)), ("--bearer", ("--bearer", S)),
    ("--cookie", ("--cookie", S)), ("--signature", ("--signature", S)), ("--passphrase", ("--passphrase", S)),
    ("--private-key", ("--private-key", S)), ("--x-api-key", ("--x-api-key", S)), ("--session-token", ("--session-token", S)),
    ("HF_TOKEN=", (f"HF_TOKEN={S}",)), ("HUGGING_FACE_HUB_TOKEN=", (f"HUGGING_FACE_HUB_TOKEN={S}",)),
    ("OPENAI_API_KEY=", (f"OPENAI_API_KEY={S}",)), ("ANTHROPIC_API_KEY=", (f"ANTHROPIC_API_KEY={S}",)),
    ("NGC_API_KEY=", (f"NGC_API_KEY={S}",)), ("NVIDIA_API_KEY=", (f"NVIDIA_API_KEY={S}",)),
    ("WANDB_API_KEY=", (f"WANDB_API_KEY={S}",)), ("AWS_SECRET_ACCESS_KEY=", (f"AWS_SECRET_ACCESS_KEY={S}",)),
    ("AWS_SESSION_TOKEN=", (f"AWS_SESSION_TOKEN={S}",)), ("GITHUB_TOKEN=", (f"GITHUB_TOKEN={S}",)),
    ("GITHUB_PAT=", (f"GITHUB_PAT={S}",)), ("PGPASSWORD=", (f"PGPASSWORD={S}",)), ("MYSQL_PWD=", (f"MYSQL_PWD={S}",)),
    ("DB_PASS=", (f"DB_PASS={S}",)), ("REDIS_PASSWORD=", (f"REDIS_PASSWORD={S}",)), ("VLLM_API_KEY=", (f"VLLM_API_KEY={S}",)),
    ("AZURE_OPENAI_KEY=", (f"AZURE_OPENAI_KEY={S}",)), ("HF_HUB_TOKEN=", (f"HF_HUB_TOKEN={S}",)),
    ("redis://:pass@", ("--cache", f"redis://:{S}@cache:6379/0")), ("https://user:pass@", (f"https://ops:{S}@hub.internal/x",)),
    ("https://TOKEN@", (f"https://{S}@github.com/org/repo.git",)), ("user:pass@host", (f"user:{S}@cache.internal:6379",)),
    ("?sig=", (f"https://acct.blob.core.windows.net/c?sv=2022&sig={S}&se=2030",)),
    ("?X-Amz-Signature=", (f"https://b.s3.amazonaws.com/w?X-Amz-Signature={S}",)), ("?key=", (f"https://maps.example/api?key={S}",)),
    ("?access_token=", (f"https://api.example/v1?access_token={S}",)), ("?token=", (f"https://hooks.example/cb?token={S}&x=1",)),
    ("JSON api_key", ("--config", f'{{"api_key": "{S}"}}')), ("JSON hf_token", ("--model-loader-extra-config", f'{{"hf_token": "{S}"}}')),
    ("dict password", ("--db", f"{{'password': '{S}'}}")), ("YAML token", ("--yaml", f"model: m\ntoken: {S}\n")),
    ("Authorization: Bearer", ("curl", "-H", f"Authorization: Bearer {S}")), ("X-Api-Key header", ("-H", f"X-Api-Key: {S}")),
    ("Authorization: Basic", ("-H", f"Authorization: Basic {S}")), ("bash -c --api-key", ("bash", "-c", f"vllm serve m --api-key {S}")),
    ("bash -c export", ("bash", "-c", f"export HF_TOKEN={S}; vllm serve m")), ("python os.environ", ("python", "-c", f"os.environ['HF_TOKEN']='{S}'")),
    ("Namespace repr", (f"Namespace(api_key='{S}', port=8000)",)), ("ServerArgs repr", (f"ServerArgs(model_path='m', api_key='{S}')",)),
    ("--hf-tok (loosely key-like)", ("--hf-tok", S)), ("MY_APIKEY2= (loosely key-like)", (f"MY_APIKEY2={S}",)),
    ("--sessionid (loosely key-like)", ("--sessionid", S)), ("--privkey= (loosely key-like)", (f"--privkey={S}",)),
]  # fmt: skip


def secret_cases() -> list[tuple[str, tuple[str, ...], str]]:
    """(id, argv, secret): every shaped token in every place, then every named spelling."""
    shaped = [
        (f"{issuer} as {place}", tuple(part.format(token) for part in argv), token)
        for issuer, token in TOKENS.items()
        for place, argv in PLACES.items()
    ]
    return shaped + [(name, argv, S) for name, argv in NAMED]


# (id, argv): what an operator must read as it is
BENIGN: list[tuple[str, tuple[str, ...]]] = [
    ("--max-total-tokens", ("--max-total-tokens", "1000000")), ("--kv-cache-dtype fp8_e4m3", ("--kv-cache-dtype", "fp8_e4m3")),
    ("--kv-cache-dtype fp8_e5m2", ("--kv-cache-dtype", "fp8_e5m2")), ("--kv-cache-dtype=fp8", ("--kv-cache-dtype=fp8",)),
    ("--max-model-len", ("--max-model-len", "32768")), ("--context-length", ("--context-length", "131072")),
    ("--gpu-memory-utilization", ("--gpu-memory-utilization", "0.95")), ("--mem-fraction-static", ("--mem-fraction-static", "0.88")),
    ("--tp", ("--tp", "8")), ("--tensor-parallel-size", ("--tensor-parallel-size", "4")), ("--pp-size", ("--pp-size", "2")),
    ("--dp", ("--dp", "2")), ("--ep-size", ("--ep-size", "8")), ("--max-num-seqs", ("--max-num-seqs", "256")),
    ("--max-num-batched-tokens", ("--max-num-batched-tokens", "8192")), ("--max-prefill-tokens", ("--max-prefill-tokens", "16384")),
    ("--chunked-prefill-size -1", ("--chunked-prefill-size", "-1")), ("--page-size", ("--page-size", "64")),
    ("--block-size", ("--block-size", "16")), ("--swap-space", ("--swap-space", "4")), ("--cpu-offload-gb", ("--cpu-offload-gb", "10")),
    ("--kv-cache-memory-bytes", ("--kv-cache-memory-bytes", "40GiB")), ("--num-gpu-blocks-override", ("--num-gpu-blocks-override", "2048")),
    ("--dtype bfloat16", ("--dtype", "bfloat16")), ("--quantization fp8", ("--quantization", "fp8")),
    ("--quantization awq_marlin", ("--quantization", "awq_marlin")), ("--load-format safetensors", ("--load-format", "safetensors")),
    ("--model-path local", ("--model-path", "/models/Qwen3-235B-A22B-FP8")), ("--model hub id", ("--model", "meta-llama/Meta-Llama-3-70B-Instruct")),
    ("vllm serve model", ("vllm", "serve", "openai/gpt-oss-120b")), ("--tokenizer", ("--tokenizer", "meta-llama/Meta-Llama-3-70B")),
    ("--tokenizer-mode", ("--tokenizer-mode", "auto")), ("--skip-tokenizer-init", ("--skip-tokenizer-init",)),
    ("--tokenizer-revision sha", ("--tokenizer-revision", "c4a54320a52ed5f88b7a2f84496903ea4ff07b45")),
    ("--revision sha", ("--revision", "0e9e39f249a16976918f6564b8830bc894c89659")), ("--code-revision", ("--code-revision", "v2.1.0")),
    ("--served-model-name", ("--served-model-name", "llama3-70b")), ("--host", ("--host", "0.0.0.0")), ("--port", ("--port", "30000")),
    ("--dist-init-addr", ("--dist-init-addr", "10.0.0.1:5000")), ("--nnodes", ("--nnodes", "2")), ("--node-rank", ("--node-rank", "1")),
    ("--speculative-token-map", ("--speculative-token-map", "/models/hot_token_map.pt")),
    ("--speculative-num-draft-tokens", ("--speculative-num-draft-tokens", "4")), ("--speculative-algorithm", ("--speculative-algorithm", "EAGLE3")),
    ("--speculative-draft-model-path", ("--speculative-draft-model-path", "lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B")),
    ("--bucket-time-to-first-token", ("--bucket-time-to-first-token", "0.1", "0.5", "1", "5")),
    ("--bucket-inter-token-latency", ("--bucket-inter-token-latency", "0.01")), ("--collect-tokens-histogram", ("--collect-tokens-histogram",)),
    ("--num-reserved-decode-tokens", ("--num-reserved-decode-tokens", "512")), ("--swa-full-tokens-ratio", ("--swa-full-tokens-ratio", "0.8")),
    ("--key-cache-dtype", ("--key-cache-dtype", "fp8")), ("--kv-cache-key-dtype", ("--kv-cache-key-dtype", "fp8_e4m3")),
    ("--long-prefill-token-threshold", ("--long-prefill-token-threshold", "4096")), ("--return-tokens-as-token-ids", ("--return-tokens-as-token-ids",)),
    ("--enable-prompt-tokens-details", ("--enable-prompt-tokens-details",)), ("--token-usage-low-watermark", ("--token-usage-low-watermark", "0.6")),
    ("--max-prefill-token-num", ("--max-prefill-token-num", "8192")), ("--num-tokens-per-iter", ("--num-tokens-per-iter", "4096")),
    ("--session-len", ("--session-len", "32768")), ("--cache-max-entry-count", ("--cache-max-entry-count", "0.8")),
    ("--quant-policy", ("--quant-policy", "8")), ("--max_seq_len", ("--max_seq_len", "8192")), ("--max_num_tokens", ("--max_num_tokens", "8192")),
    ("--kv_cache_free_gpu_memory_fraction", ("--kv_cache_free_gpu_memory_fraction", "0.9")),
    ("--tokens_per_block", ("--tokens_per_block", "32")), ("--max_batch_size", ("--max_batch_size", "256")),
    ("--extra_llm_api_options", ("--extra_llm_api_options", "/etc/trtllm/extra.yaml")), ("--backend pytorch", ("--backend", "pytorch")),
    ("--attention-backend", ("--attention-backend", "flashinfer")), ("--ssl-keyfile", ("--ssl-keyfile", "/etc/ssl/private/server.pem")),
    ("--ssl-certfile", ("--ssl-certfile", "/etc/ssl/certs/server.crt")), ("--api-key-file", ("--api-key-file", "/run/secrets/api_key")),
    ("--token-file", ("--token-file", "/run/secrets/prometheus_token")), ("--password-file", ("--password-file", "/run/secrets/db_password")),
    ("--hf-token-path", ("--hf-token-path", "/root/.cache/huggingface/token")), ("--allow-credentials", ("--allow-credentials",)),
    ("--enable-auth true", ("--enable-auth", "true")), ("--auth-mode basic", ("--auth-mode", "basic")), ("--sig-figs", ("--sig-figs", "3")),
    ("--signature-version", ("--signature-version", "v4")), ("--cookie-name", ("--cookie-name", "session")),
    ("--key-size", ("--key-size", "2048")), ("--public-key", ("--public-key", "ssh-ed25519")), ("--tls-key", ("--tls-key", "/etc/tls/server.key")),
    ("--download-dir", ("--download-dir", "/mnt/hf-cache")), ("--chat-template", ("--chat-template", "./templates/llama3.jinja")),
    ("--reasoning-parser", ("--reasoning-parser", "deepseek-r1")), ("--tool-call-parser", ("--tool-call-parser", "llama3_json")),
    ("--enable-prefix-caching", ("--enable-prefix-caching",)), ("--enforce-eager", ("--enforce-eager",)), ("--trust-remote-code", ("--trust-remote-code",)),
    ("--seed", ("--seed", "42")), ("--random-seed", ("--random-seed", "1234")), ("--log-level", ("--log-level", "info")),
    ("--watchdog-timeout", ("--watchdog-timeout", "600")), ("--cuda-graph-max-bs", ("--cuda-graph-max-bs", "160")),
    ("--cuda-graph-bs", ("--cuda-graph-bs", "1", "2", "4", "8")), ("--hicache-ratio", ("--hicache-ratio", "2.0")),
    ("--rope-scaling json", ("--hf-overrides", '{"rope_scaling": {"type": "yarn", "factor": 4.0}}')),
    ("--limit-mm-per-prompt", ("--limit-mm-per-prompt", '{"image": 4}')), ("CUDA_VISIBLE_DEVICES", ("CUDA_VISIBLE_DEVICES=0,1,2,3",)),
    ("NCCL_SOCKET_IFNAME", ("NCCL_SOCKET_IFNAME=eth0",)), ("OMP_NUM_THREADS", ("OMP_NUM_THREADS=8",)),
    ("HF_HUB_OFFLINE", ("HF_HUB_OFFLINE=1",)), ("HF_HOME", ("HF_HOME=/mnt/hf",)), ("VLLM_USE_V1", ("VLLM_USE_V1=1",)),
    ("TOKENIZERS_PARALLELISM", ("TOKENIZERS_PARALLELISM=false",)), ("engine title", ("VLLM::Worker_TP0",)),
    ("sglang title", ("sglang::scheduler_DP1_TP3",)), ("a GPU UUID", ("GPU-5c2a9a1e-0f3b-4c1e-9b5a-1f2e3d4c5b6a",)),
    ("a metrics URL", ("http://127.0.0.1:30000/metrics",)), ("a hub URL", ("https://huggingface.co/meta-llama/Llama-3.1-8B",)),
    ("a container image", ("nvcr.io/nvidia/tritonserver:24.08-trtllm-python-py3",)), ("git over ssh", ("git@github.com:sgl-project/sglang.git",)),
    ("an e-mail", ("ops@example.com",)), ("a hostname", ("--host", "gpu-node-07.cluster.local")),
    ("an sk- word", ("--model", "org/sk-learn-model-card-v2")), ("an hf_ word", ("--load-format", "hf_transfer_enabled")),
]  # fmt: skip
