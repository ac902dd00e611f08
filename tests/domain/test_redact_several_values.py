"""A secret flag that takes several values: every value is masked, up to the next flag (session 56 QA).

The engines' own parsers take more than one key after one flag: vLLM's `FrontendArgs.api_key: list[str] | None`
(vllm/entrypoints/openai/cli_args.py, vllm-project/vllm@00522333; `get_kwargs` gives a list `nargs="+"`) and
LMDeploy's `ArgumentHelper.api_keys` (`--api-keys`, `nargs='*'`, lmdeploy/cli/utils.py, InternLM/lmdeploy@00948ee2).
argparse gives such a flag every word up to the next that starts with `-`; `--api-key=k1` gives it one value
only (argparse reads an attached value as the one argument). Every other secret flag takes one value (argparse's
default), so the word after its value stays. After a several-valued key, free text is masked up to the next flag, operator or
line end, prose included: a second key of plain letters must never show. llama.cpp spells its Hugging Face token `-hft`
(common/arg.cpp `{"-hft", "--hf-token"}, "TOKEN"`, ggml-org/llama.cpp@145b6280). Expected outputs are written
by hand from those parsers' rules, not from the redactor.
"""

from __future__ import annotations

import pytest

from kvtop.domain import redact, secret_names
from kvtop.domain.engines.catalogue import ENGINE_IDS
from kvtop.domain.errors import InputError
from kvtop.domain.launch import engine_flags, parse_flags
from kvtop.domain.redact import redact_argv
from kvtop.domain.secret_names import is_secret_name, several_valued_secret_flags
from kvtop.domain.secret_text import redact_text

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
    ("--ssl-keyfile-password takes one value: the key file's path stays, the word after it too",
     ["uvicorn", "--ssl-keyfile", "/etc/tls/key.pem", "--ssl-keyfile-password", K1, "app:main"],
     ["uvicorn", "--ssl-keyfile", "/etc/tls/key.pem", "--ssl-keyfile-password", "***", "app:main"]),
    ("--hf-token takes one value: the model path after it stays (llama.cpp common/arg.cpp, one TOKEN)",
     ["llama-server", "--hf-token", "abcdefgh12", "/models/q.gguf"],
     ["llama-server", "--hf-token", "***", "/models/q.gguf"]),
    ("vLLM reads --api_key as --api-key", ["vllm", "serve", "m", "--api_key", K1, K2],
     ["vllm", "serve", "m", "--api_key", "***", "***"]),
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
    ("a second key of plain letters is masked in text (prose after a several-valued key is hidden too)",
     "vllm serve m --api-key sk-abcdefghijklmnopqrstuvwx secretletters\nready",
     "vllm serve m --api-key *** ***\nready"),
    ("a one-valued secret flag in text: the path after its value stays",
     "llama-server --hf-token abcdefgh12 /models/q.gguf -c 8192", "llama-server --hf-token *** /models/q.gguf -c 8192"),
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
    """SGLang's `--api-key` takes one value (str): the second key is left over, and the error that names it
    quotes it as the redactor shows the line, found by position (the same word as a value before it is no guide);
    a stray word after no secret flag is quoted as typed."""
    with pytest.raises(InputError) as caught:
        parse_flags("sglang", ["--served-model-name", "abc", "--api-key", "abc", "abc"], strict=True)
    assert str(caught.value).endswith("unexpected argument '***'")
    with pytest.raises(InputError, match="unexpected argument 'stray'"):
        parse_flags("vllm", ["--max-model-len", "4096", "stray"], strict=True)


def test_vllm_takes_both_keys_and_lmdeploy_line_keeps_both() -> None:
    """vLLM's `--api-key` is a list (nargs='+', v0.10.1 on) and LMDeploy's `--api-keys` nargs='*': both words are
    the flag's value, no stray argument."""
    typed = parse_flags("vllm", ["--max-model-len", "4096", "--api-key", K1, K2], strict=True)
    assert typed.flags == {"api-key": f"{K1} {K2}"}
    line = parse_flags("lmdeploy", ["--api-keys", K1, K2, "--cache-max-entry-count", "0.5"], engine_line=True)
    assert line.flags["api-keys"] == f"{K1} {K2}"


def test_every_engines_secret_list_flag_runs_on_in_the_redactor() -> None:
    """The redactor runs before an engine is known, so it takes every engine's declared secret flags: those that
    take several values are vLLM's `--api-key` in both spellings its parser reads and LMDeploy's `--api-keys`."""
    secret_lists = {flag for engine in ENGINE_IDS for flag in engine_flags(engine).list_valued if is_secret_name(flag)}
    assert secret_lists == {"--api-key", "--api-keys"}
    assert several_valued_secret_flags() == {"--api-key", "--api_key", "--api-keys"}


def test_an_engines_declared_secret_flag_is_masked() -> None:
    """llama.cpp declares `-hft` (its `--hf-token`): no secret word is in the name, so only the declaration masks
    the word after it; every engine's declared flag masks a plain word, in an argv and in a text."""
    assert "-hft" in engine_flags("llamacpp").secret_flags
    assert redact_argv(["llama-server", "-hft", K1, "-c", "8192"]) == ("llama-server", "-hft", "***", "-c", "8192")
    for engine in ENGINE_IDS:
        for flag in engine_flags(engine).secret_flags:
            assert redact_argv(["serve", flag, K1])[1:] == (flag, "***"), (engine, flag)
            assert redact_text(f"serve {flag} {K1}") == f"serve {flag} ***", (engine, flag)


def test_a_flag_an_engine_declares_is_masked_though_its_name_says_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Shared redaction reads the engines' declarations, not a list of its own: a flag TensorRT-LLM's table were to
    declare is masked, and only while declared."""
    word = ["trtllm-serve", "--frobnicate", K1]
    secret_names._declared_secret_flags.cache_clear()
    redact._redact_argv_cached.cache_clear()
    assert redact_argv(word) == tuple(word)
    monkeypatch.setattr(type(engine_flags("trtllm")), "secret_flags", frozenset({"--frobnicate"}))
    secret_names._declared_secret_flags.cache_clear()
    redact._redact_argv_cached.cache_clear()
    try:
        assert redact_argv(word) == ("trtllm-serve", "--frobnicate", "***")
    finally:
        monkeypatch.undo()
        secret_names._declared_secret_flags.cache_clear()
        redact._redact_argv_cached.cache_clear()
        secret_names._is_secret_name.cache_clear()
