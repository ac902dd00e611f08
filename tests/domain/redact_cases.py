"""The spellings a secret takes on a command line, each with the redaction a person should see.

`SECRET_ARGV` and `SECRET_TEXT` are the table of issue 21 (every spelling the attacker found
passing through, and their neighbours); `S` marks the planted secret. `PLAIN_*` are values that
look close to a secret and must survive unchanged. Expected outputs are written by hand.
The secrets test of the whole app (tests/test_secrets_everywhere.py) plants the same shapes.
"""

from __future__ import annotations

S = "Zq7vK2pL9xWm"  # the planted secret; no window of 6 of its characters may survive

# (id, argv, the redacted argv)
SECRET_ARGV: list[tuple[str, list[str], list[str]]] = [
    # flags, separate and joined
    ("--api-key value", ["--api-key", S], ["--api-key", "***"]),
    ("--api-key=value", [f"--api-key={S}"], ["--api-key=***"]),
    ("--hf-token value", ["--hf-token", S], ["--hf-token", "***"]),
    ("--hf-token=value", [f"--hf-token={S}"], ["--hf-token=***"]),
    ("--openai-key", ["--openai-key", S], ["--openai-key", "***"]),
    ("--openai-key=", [f"--openai-key={S}"], ["--openai-key=***"]),
    ("--api-keys", ["--api-keys", S], ["--api-keys", "***"]),
    ("-k value", ["-k", S], ["-k", "***"]),
    ("-kVALUE", [f"-k{S}"], ["-k***"]),
    ("--api-key -dash-value", ["--api-key", f"-{S}"], ["--api-key", "***"]),
    ("--api-key=-dash-value", [f"--api-key=-{S}"], ["--api-key=***"]),
    ("--admin-api-key", ["--admin-api-key", S], ["--admin-api-key", "***"]),
    ("--password", ["--password", S], ["--password", "***"]),
    ("--db-password=", [f"--db-password={S}"], ["--db-password=***"]),
    ("--ssl-keyfile-password", ["--ssl-keyfile-password", S], ["--ssl-keyfile-password", "***"]),
    ("--pass", ["--pass", S], ["--pass", "***"]),
    ("--secret", ["--secret", S], ["--secret", "***"]),
    ("--client-secret=", [f"--client-secret={S}"], ["--client-secret=***"]),
    ("--auth", ["--auth", S], ["--auth", "***"]),
    ("--auth-token", ["--auth-token", S], ["--auth-token", "***"]),
    ("--access-token=", [f"--access-token={S}"], ["--access-token=***"]),
    ("--credentials", ["--credentials", S], ["--credentials", "***"]),
    ("--aws-secret-access-key", ["--aws-secret-access-key", S], ["--aws-secret-access-key", "***"]),
    ("--signature", ["--signature", S], ["--signature", "***"]),
    ("--apiKey camelCase", ["--apiKey", S], ["--apiKey", "***"]),
    ("--api_key underscores", ["--api_key", S], ["--api_key", "***"]),
    ("value with spaces", ["--api-key", f"{S} tail{S}"], ["--api-key", "***"]),
    # environment assignments
    ("HF_TOKEN=", [f"HF_TOKEN={S}"], ["HF_TOKEN=***"]),
    ("HFTOKEN=", [f"HFTOKEN={S}"], ["HFTOKEN=***"]),
    ("GITHUB_PAT=", [f"GITHUB_PAT={S}"], ["GITHUB_PAT=***"]),
    ("PGPASSWORD=", [f"PGPASSWORD={S}"], ["PGPASSWORD=***"]),
    ("DB_PASS=", [f"DB_PASS={S}"], ["DB_PASS=***"]),
    ("OPENAI_API_KEY=", [f"OPENAI_API_KEY={S}"], ["OPENAI_API_KEY=***"]),
    ("AWS_SECRET_ACCESS_KEY=", [f"AWS_SECRET_ACCESS_KEY={S}"], ["AWS_SECRET_ACCESS_KEY=***"]),
    ("HUGGING_FACE_HUB_TOKEN=", [f"HUGGING_FACE_HUB_TOKEN={S}"], ["HUGGING_FACE_HUB_TOKEN=***"]),
    ("MYSQL_PWD=", [f"MYSQL_PWD={S}"], ["MYSQL_PWD=***"]),
    ("env assignment with spaces", ["env", f"HF_TOKEN={S} {S}", "vllm"], ["env", "HF_TOKEN=***", "vllm"]),
    # URL user-info, in any scheme and case
    ("redis://:pass@", ["--redis", f"redis://:{S}@cache:6379/0"], ["--redis", "redis://***@cache:6379/0"]),
    ("https://TOKEN@github.com", ["git", "clone", f"https://{S}@github.com/org/repo.git"],
     ["git", "clone", "https://***@github.com/org/repo.git"]),
    ("upper-case scheme", [f"HTTPS://user:{S}@hub.example/x"], ["HTTPS://***@hub.example/x"]),
    ("password with /", [f"--db=postgres://app:pa/{S}@db.internal:5432/x"],
     ["--db=postgres://***@db.internal:5432/x"]),
    ("password with @", [f"postgres://app:p@{S}@db.internal/x"], ["postgres://***@db.internal/x"]),
    ("mongodb+srv user-info", [f"mongodb+srv://admin:{S}@cluster0.example.net/db"],
     ["mongodb+srv://***@cluster0.example.net/db"]),
    ("user:pass@host", ["--cache", f"user:{S}@cache.internal:6379"], ["--cache", "***@cache.internal:6379"]),
    ("--flag=user:pass@host", [f"--cache=user:{S}@cache.internal"], ["--cache=***@cache.internal"]),
    ("x-access-token user-info", [f"https://x-access-token:{S}@github.com/o/r"], ["https://***@github.com/o/r"]),
    # secret query parameters
    ("?sig=", [f"https://acct.blob.core.windows.net/c/w.bin?sv=2022-11-02&sig={S}&se=2030"],
     ["https://acct.blob.core.windows.net/c/w.bin?sv=2022-11-02&sig=***&se=2030"]),
    ("X-Amz-Signature", [f"https://b.s3.amazonaws.com/w?X-Amz-Expires=60&X-Amz-Signature={S}"],
     ["https://b.s3.amazonaws.com/w?X-Amz-Expires=60&X-Amz-Signature=***"]),
    ("?key=", [f"https://maps.example.com/api?key={S}"], ["https://maps.example.com/api?key=***"]),
    ("token= in a query", [f"https://hooks.example.com/cb?token={S}&x=1"], ["https://hooks.example.com/cb?token=***&x=1"]),
    ("?access_token=", [f"https://api.example.com/v1?access_token={S}"], ["https://api.example.com/v1?access_token=***"]),
    ("upper-case query", [f"HTTPS://HOST.EXAMPLE/X?TOKEN={S}"], ["HTTPS://HOST.EXAMPLE/X?TOKEN=***"]),
    ("wss ?auth=", [f"wss://stream.example.com/ws?auth={S}"], ["wss://stream.example.com/ws?auth=***"]),
    # JSON / Python dict / YAML inside an argument
    ("JSON api_key", ["--config", f'{{"api_key": "{S}", "port": 1}}'], ["--config", '{"api_key": "***", "port": 1}']),
    ("Python-dict api_key", ["--config", f"{{'api_key': '{S}', 'port': 1}}"],
     ["--config", "{'api_key': '***', 'port': 1}"]),
    ("--headers={Authorization}", [f'--headers={{"Authorization": "Bearer {S}"}}'], ['--headers={"Authorization": "***"}']),
    ("--headers {Authorization}", ["--headers", f'{{"Authorization": "Bearer {S}"}}'],
     ["--headers", '{"Authorization": "***"}']),
    ("--model-loader-extra-config hf_token", ["--model-loader-extra-config", f'{{"hf_token": "{S}"}}'],
     ["--model-loader-extra-config", '{"hf_token": "***"}']),
    ("YAML api_key", ["--config-yaml", f"model: m\napi_key: {S}\nport: 8000"],
     ["--config-yaml", "model: m\napi_key: ***\nport: 8000"]),
    ("nested under a secret key", ["--kv-transfer-config", f'{{"auth": {{"user": "u", "tokens": ["{S}"]}}, "x": 1}}'],
     ["--kv-transfer-config", '{"auth": ***, "x": 1}']),
    ("JSON without spaces", [f'{{"token":"{S}"}}'], ['{"token":"***"}']),
    ("JSON escaped quote in value", [f'{{"password": "a\\"{S}"}}'], ['{"password": "***"}']),
    ("argparse repr", [f"Namespace(api_key='{S}', port=8000)"], ["Namespace(api_key='***', port=8000)"]),
    # arguments that are shell commands
    ("bash -c --api-key", ["bash", "-c", f"vllm serve m --api-key {S} --port 8000"],
     ["bash", "-c", "vllm serve m --api-key *** --port 8000"]),
    ("bash -c quoted value", ["bash", "-c", f"vllm serve m --api-key '{S} x'"], ["bash", "-c", "vllm serve m --api-key '***'"]),
    ("sh -c HF_TOKEN=", ["sh", "-c", f"HF_TOKEN={S} python -m sglang.launch_server --model-path m"],
     ["sh", "-c", "HF_TOKEN=*** python -m sglang.launch_server --model-path m"]),
    ("bash -c curl header", ["bash", "-c", f"curl -H 'Authorization: Bearer {S}' http://127.0.0.1:8000/v1"],
     ["bash", "-c", "curl -H 'Authorization: Bearer ***' http://127.0.0.1:8000/v1"]),
    ("bash -c export PAT", ["bash", "-c", f"export GITHUB_PAT={S}; git pull"], ["bash", "-c", "export GITHUB_PAT=***; git pull"]),
    ("python -c os.environ", ["python", "-c", f"import os; os.environ['HF_TOKEN'] = '{S}'"],
     ["python", "-c", "import os; os.environ['HF_TOKEN'] = '***'"]),
    ("bash -c escaped JSON", ["bash", "-c", f'vllm serve m --model-loader-extra-config "{{\\"hf_token\\": \\"{S}\\"}}"'],
     ["bash", "-c", 'vllm serve m --model-loader-extra-config "{\\"hf_token\\": \\"***\\"}"']),
    ("a renamed process: the whole line in one argument", [f"python serve.py --api-key={S} --port 9000"],
     ["python serve.py --api-key=*** --port 9000"]),
    # headers
    ("curl -H Authorization", ["curl", "-H", f"Authorization: Bearer {S}"], ["curl", "-H", "Authorization: Bearer ***"]),
    ("curl -H X-Api-Key", ["curl", "-H", f"X-Api-Key: {S}"], ["curl", "-H", "X-Api-Key: ***"]),
    ("Basic credentials", ["curl", "-H", f"Authorization: Basic {S}"], ["curl", "-H", "Authorization: Basic ***"]),
]  # fmt: skip

# (id, text, the redacted text): messages and lines kvtop shows that are not argv
SECRET_TEXT: list[tuple[str, str, str]] = [
    ("a shell line", f"HF_TOKEN={S} vllm serve m --api-key {S}", "HF_TOKEN=*** vllm serve m --api-key ***"),
    ("a quoted flag pair", f"'--api-key' '{S}'", "'--api-key' '***'"),
    ("a Python list of args", f"['--api-key', '{S}', '--port', '1']", "['--api-key', '***', '--port', '1']"),
    ("an error naming a URL", f"GET https://u:{S}@hub.example/x: 401", "GET https://***@hub.example/x: 401"),
    ("a bare bearer token", f"Bearer {S}", "Bearer ***"),
    ("a log line of server args", f"server_args=ServerArgs(model_path='m', api_key='{S}', port=30000)",
     "server_args=ServerArgs(model_path='m', api_key='***', port=30000)"),
]  # fmt: skip

# argvs that hold no secret: they must come back unchanged
PLAIN_ARGV: list[tuple[str, list[str]]] = [
    ("a vLLM launch", ["vllm", "serve", "meta-llama/Meta-Llama-3-70B-Instruct", "--max-total-tokens", "1000",
                       "--tokenizer", "meta-llama/Meta-Llama-3-70B", "--max-num-batched-tokens", "8192",
                       "--served-model-name", "llama3", "--port", "8000", "--host", "0.0.0.0"]),
    ("token-count flags", ["--max-prefill-tokens", "16384", "--speculative-num-draft-tokens", "4",
                           "--tokenizer-mode", "auto", "--skip-tokenizer-init", "--enable-prompt-tokens-details"]),
    ("boolean flags with secret-ish names", ["--return-tokens-as-token-ids", "--port", "8000",
                                             "--allow-credentials", "--host", "node-7.cluster.local"]),
    ("an SGLang launch", ["python3", "-m", "sglang.launch_server", "--model-path", "/models/Qwen3-235B-A22B-FP8",
                          "--tp", "8", "--mem-fraction-static", "0.93", "--kv-cache-dtype", "fp8_e5m2",
                          "--chunked-prefill-size", "-1", "--context-length", "32768"]),
    ("an SSL key file is a path", ["--ssl-keyfile", "/etc/ssl/private/server.pem", "--ssl-certfile", "/etc/ssl/c.pem"]),
    ("environment without secrets", ["env", "CUDA_VISIBLE_DEVICES=0,1", "OMP_NUM_THREADS=8", "NCCL_SOCKET_IFNAME=eth0"]),
    ("URLs without credentials", ["http://127.0.0.1:8000/metrics", "https://huggingface.co/meta-llama/Llama-3-8B",
                                  "https://medium.com/@author/post", "http://localhost:8000/v1/files/@latest",
                                  "https://hub.example/x?page=2&limit=10"]),
    ("addresses that are not user-info", ["git@github.com:org/repo.git", "ops@example.com",
                                          "nvcr.io/nvidia/pytorch:24.01-py3"]),
    ("engine process titles", ["VLLM::Worker_TP0"]),
    ("numbers", ["4096", "-1", "0.9", "--port", "30000"]),
    ("JSON without secrets", ["--hf-overrides", '{"max_tokens": 128, "rope_scaling": {"type": "yarn"}}']),
]  # fmt: skip

PLAIN_TEXT: list[tuple[str, str]] = [
    ("a capacity note", "token capacity from the engine log /var/log/vllm.log"),
    ("a log figure", "max_total_num_tokens=665690, chunked_prefill_size=8192"),
    ("a KV line", "GPU KV cache size: 1,204,432 tokens"),
    ("an endpoint failure", "http://127.0.0.1:8000: connection refused"),
    ("a key-value cache", "key and value caches of 80 layers"),
    # a config field named in an error: its count is the message, not a secret
    ("a KV-head count", "num_key_value_heads: 64 KV heads cannot serve 32 attention heads"),
]  # fmt: skip
