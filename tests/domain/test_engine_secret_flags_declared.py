"""LMDeploy and TensorRT-LLM declare the flags of theirs that take a secret (`EngineFlags.secret_flags`), read from
their CLIs' code: LMDeploy's `serve api_server --api-keys` (ArgumentHelper.api_keys, nargs='*') and `serve api_client
--api-key` (one value, cli/serve.py v0.2.2 to v0.9.2.post1); TensorRT-LLM's trtllm-serve and trtllm-bench take none
(an API key was asked for in NVIDIA/TensorRT-LLM#9950 and not added). Expected masks follow argparse's reading of
those flags, written by hand."""

from __future__ import annotations

from kvtop.domain.launch import engine_flags
from kvtop.domain.redact import redact_argv
from kvtop.domain.secret_names import engine_secret_flags, several_valued_secret_flags


def test_lmdeploy_declares_both_of_its_key_flags() -> None:
    declared = engine_flags("lmdeploy").secret_flags
    assert declared == {"--api-keys", "--api-key"}
    assert declared <= engine_secret_flags()
    assert "--api-keys" in several_valued_secret_flags()


def test_the_api_client_key_takes_one_value() -> None:
    argv = ["lmdeploy", "serve", "api_client", "http://0.0.0.0:23333", "--api-key", "alphakey1", "--session-id", "1"]
    assert list(redact_argv(argv)) == ["lmdeploy", "serve", "api_client", "http://0.0.0.0:23333", "--api-key", "***",
                                 "--session-id", "1"]  # fmt: skip


def test_tensorrt_llm_declares_none() -> None:
    assert engine_flags("trtllm").secret_flags == frozenset()
    argv = ["trtllm-serve", "meta-llama/Llama-3.1-8B", "--backend", "pytorch", "--tp_size", "2", "--port", "8000"]
    assert list(redact_argv(argv)) == argv  # nothing on a plain launch line is taken for a secret
