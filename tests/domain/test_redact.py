"""Secret redaction: by the name of the flag or variable, never by guessing at values."""

from __future__ import annotations

from kvtop.domain.redact import MASK, is_secret_name, redact_argv, redact_mapping, redact_text


def test_separate_and_joined_secret_flags_are_masked() -> None:
    argv = ["vllm", "serve", "m", "--api-key", "sk-1", "--hf-token=hf_2", "--port", "8000"]
    assert redact_argv(argv) == ("vllm", "serve", "m", "--api-key", MASK, "--hf-token=***", "--port", "8000")


def test_environment_assignments_in_a_command_are_masked() -> None:
    argv = [
        "env",
        "HF_TOKEN=hf_1",
        "OPENAI_API_KEY=sk-2",
        "DB_PASSWORD=p",
        "CUDA_VISIBLE_DEVICES=0,1",
        "vllm",
    ]
    assert redact_argv(argv) == ("env", "HF_TOKEN=***", "OPENAI_API_KEY=***", "DB_PASSWORD=***",
                                 "CUDA_VISIBLE_DEVICES=0,1", "vllm")  # fmt: skip


def test_token_counts_and_tokenizers_are_not_secrets() -> None:
    argv = ["--max-total-tokens", "4096", "--tokenizer", "Qwen/Qwen3-8B", "--max-num-batched-tokens", "1024"]
    assert redact_argv(argv) == tuple(argv)


def test_secrets_inside_one_shell_argument_are_masked() -> None:
    line = "HF_TOKEN=hf_abc python -m sglang.launch_server --api-key sk-9 --model m"
    assert redact_argv(["bash", "-c", line]) == (
        "bash", "-c", "HF_TOKEN=*** python -m sglang.launch_server --api-key *** --model m",
    )  # fmt: skip


def test_authorization_headers_and_url_passwords_are_masked() -> None:
    assert redact_text("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9") == "Authorization: Bearer ***"
    assert redact_text("https://user:hunter2@hub.example/x") == "https://user:***@hub.example/x"


def test_secret_names() -> None:
    secret = ["--api-key", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "WANDB_API_KEY", "AWS_SECRET_ACCESS_KEY",
              "MY_PASSWORD", "Authorization"]  # fmt: skip
    plain = ["--max-total-tokens", "--tokenizer", "--port", "CUDA_VISIBLE_DEVICES", "--kv-cache-dtype"]
    assert all(is_secret_name(name) for name in secret)
    assert not any(is_secret_name(name) for name in plain)


def test_mapping_values_of_secret_keys_are_masked() -> None:
    assert redact_mapping({"api-key": "sk-1", "trust-remote-code": True, "port": "1"}) == {
        "api-key": MASK, "trust-remote-code": True, "port": "1",
    }  # fmt: skip
