"""A secret flag that takes several values: every value is masked, up to the next flag (session 56 QA).

The engines' own parsers take more than one key after one flag: vLLM's `FrontendArgs.api_key: list[str] | None`
(vllm/entrypoints/openai/cli_args.py, vllm-project/vllm@00522333; `get_kwargs` gives a list `nargs="+"`) and
LMDeploy's `ArgumentHelper.api_keys` (`--api-keys`, `nargs='*'`, lmdeploy/cli/utils.py, InternLM/lmdeploy@00948ee2).
argparse gives such a flag every word up to the next that starts with `-`; `--api-key=k1` gives it one value
only (argparse reads an attached value as the one argument). llama.cpp spells its Hugging Face token `-hft`
(common/arg.cpp `{"-hft", "--hf-token"}, "TOKEN"`, ggml-org/llama.cpp@145b6280). Expected outputs are written
by hand from those parsers' rules, not from the redactor.
"""

from __future__ import annotations

import pytest

from kvtop.domain.errors import InputError
from kvtop.domain.launch import parse_flags
from kvtop.domain.redact import redact_argv, redact_text

K1, K2, K3 = "alphakey1", "bravokey2", "charliekey3"  # plain words: only the flag they follow makes them keys

ARGV_CASES: list[tuple[str, list[str], list[str]]] = [
    ("vllm --api-key two keys, the next flag stays",
     ["vllm", "serve", "Qwen/Qwen3-8B", "--api-key", K1, K2, "--port", "9000"],
     ["vllm", "serve", "Qwen/Qwen3-8B", "--api-key", "***", "***", "--port", "9000"]),
    ("lmdeploy --api-keys three keys then --hf-token",
     ["lmdeploy", "serve", "api_server", "internlm/internlm2_5-7b-chat", "--api-keys", K1, K2, K3,
      "--hf-token", "hf_notashapedtoken", "--server-port", "23333"],
     ["lmdeploy", "serve", "api_server", "internlm/internlm2_5-7b-chat", "--api-keys", "***", "***", "***",
      "--hf-token", "***", "--server-port", "23333"]),
    ("keys to the end of the line",
     ["vllm", "serve", "m", "--api-key", K1, K2], ["vllm", "serve", "m", "--api-key", "***", "***"]),
    ("--api-key=k1: one value, the positional after it stays",
     ["vllm", "serve", f"--api-key={K1}", "Qwen/Qwen3-8B"], ["vllm", "serve", "--api-key=***", "Qwen/Qwen3-8B"]),
    ("env HF_TOKEN= before the command",
     ["env", f"HF_TOKEN={K1}", "vllm", "serve", "Qwen/Qwen3-8B", "--api-key", K2, K3],
     ["env", "HF_TOKEN=***", "vllm", "serve", "Qwen/Qwen3-8B", "--api-key", "***", "***"]),
    ("llama-server -hft, a word that is no hf_ shape",
     ["llama-server", "-hft", K1, "-m", "/models/q.gguf", "-c", "8192"],
     ["llama-server", "-hft", "***", "-m", "/models/q.gguf", "-c", "8192"]),
    ("--hf-token at the end, -hft beside",
     ["llama-server", "-m", "q.gguf", "--hf-token", K1], ["llama-server", "-m", "q.gguf", "--hf-token", "***"]),
    ("sglang --admin-api-key then --api-key",
     ["python3", "-m", "sglang.launch_server", "--admin-api-key", K1, "--api-key", K2, "--tp", "4"],
     ["python3", "-m", "sglang.launch_server", "--admin-api-key", "***", "--api-key", "***", "--tp", "4"]),
    ("--ssl-keyfile-password, the key file's path stays",
     ["vllm", "serve", "m", "--ssl-keyfile", "/etc/tls/key.pem", "--ssl-keyfile-password", K1, K2],
     ["vllm", "serve", "m", "--ssl-keyfile", "/etc/tls/key.pem", "--ssl-keyfile-password", "***", "***"]),
]  # fmt: skip


@pytest.mark.parametrize(("argv", "expected"), [c[1:] for c in ARGV_CASES], ids=[c[0] for c in ARGV_CASES])
def test_every_value_of_a_secret_flag_is_masked_in_an_argv(argv: list[str], expected: list[str]) -> None:
    assert list(redact_argv(argv)) == expected


TEXT_CASES: list[tuple[str, str, str]] = [
    ("bash -c, two keys then a flag",
     f"vllm serve Qwen/Qwen3-8B --api-key {K1} {K2} --port 9000",
     "vllm serve Qwen/Qwen3-8B --api-key *** *** --port 9000"),
    ("a whole bash -c line, the quote ends the keys",
     f'bash -c "HF_TOKEN={K3} vllm serve m --api-key {K1} {K2}" && echo done',
     'bash -c "HF_TOKEN=*** vllm serve m --api-key *** ***" && echo done'),
    ("a pipe ends the keys",
     f"lmdeploy serve api_server m --api-keys {K1} {K2} | tee serve.log",
     "lmdeploy serve api_server m --api-keys *** *** | tee serve.log"),
    ("quoted keys", f'x --api-key "{K1}" "{K2}" --port 1', 'x --api-key "***" "***" --port 1'),
    ("a new line ends the keys", f"--api-key {K1} {K2}\nmodel loaded", "--api-key *** ***\nmodel loaded"),
    ("--api-key=k1 in text: one value", f"vllm serve --api-key={K1} Qwen/Qwen3-8B",
     "vllm serve --api-key=*** Qwen/Qwen3-8B"),
    ("-hft in text", f"llama-server -hft {K1} -m q.gguf", "llama-server -hft *** -m q.gguf"),
    ("a setting's value after a token-named flag stays",
     "--speculative-token-map /maps/t.json --port 8000", "--speculative-token-map /maps/t.json --port 8000"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in TEXT_CASES], ids=[c[0] for c in TEXT_CASES])
def test_every_value_of_a_secret_flag_is_masked_in_a_text(text: str, expected: str) -> None:
    assert redact_text(text) == expected


def test_bash_c_script_in_an_argv_masks_both_keys() -> None:
    argv = ["bash", "-c", f"vllm serve Qwen/Qwen3-8B --api-key {K1} {K2} --port 9000"]
    assert redact_argv(argv) == ("bash", "-c", "vllm serve Qwen/Qwen3-8B --api-key *** *** --port 9000")


def test_a_second_key_typed_to_kvtop_is_not_echoed_as_a_stray_argument() -> None:
    """kvtop reads one value per flag it passes through: the second key is left over, and the error that
    names it quotes it as the redactor shows the line; a stray word after no secret flag is quoted as typed."""
    with pytest.raises(InputError) as caught:
        parse_flags("vllm", ["--max-model-len", "4096", "--api-key", K1, K2], strict=True)
    assert str(caught.value).endswith("unexpected argument '***'") and K2 not in str(caught.value)
    with pytest.raises(InputError, match="unexpected argument 'stray'"):
        parse_flags("vllm", ["--max-model-len", "4096", "stray"], strict=True)
