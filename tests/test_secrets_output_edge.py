"""A URL's password reaches no output, however kvtop came by the URL.

`kvtop plan` shows the launch it planned: a draft model fetched over a URL with a password (vLLM's
`--speculative-config '{"model": …}'`; TensorRT-LLM's `speculative_config.speculative_model_dir` in the
`--extra_llm_api_options` YAML beside the command) was printed whole, in the `engine flags:` line and as
`"draft_model"` in --json (7 times), because the values a pasted command gives are the operator's own and
not redacted when built, and the output's last mask knew issuers' token shapes only. A URL's user-info is
now a shape (`kvtop.domain.secret_userinfo`), masked where every command prints (`commands/output.py`) and
where the TUI draws (`ui/safe_lines.py`), as well as where outside values are built (`redact_text`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvtop.cli import main
from kvtop.domain.secret_shapes import mask_secret_shapes
from tests.data_paths import CONFIGS

PASSWORD = "Q7vXk2pLm9"  # no issuer's shape: only its place in the URL gives it away
DRAFT = f"https://mirror:{PASSWORD}@hub.internal/eagle"
SHOWN = "https://***@hub.internal/eagle"
QWEN3_8B = str(CONFIGS / "Qwen--Qwen3-8B.json")


@pytest.mark.parametrize("json_flag", [[], ["--json"]], ids=["text", "json"])
def test_a_vllm_draft_model_url_shows_no_password(capsys: pytest.CaptureFixture[str], json_flag: list[str]) -> None:
    command = (f'vllm serve M --speculative-config \'{{"model": "{DRAFT}", "method": "eagle", '
               '"num_speculative_tokens": 3}\'')  # fmt: skip
    assert main(["plan", "--cmd", command, "--model", QWEN3_8B, "--gpu", "H100", *json_flag]) == 0
    out, err = capsys.readouterr()
    leaked = PASSWORD[:5] in out + err
    assert not leaked
    assert SHOWN in out  # the draft is still named, its host and path readable


@pytest.mark.parametrize("json_flag", [[], ["--json"]], ids=["text", "json"])
def test_a_trtllm_options_yaml_draft_url_shows_no_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], json_flag: list[str]
) -> None:
    (tmp_path / "extra.yaml").write_text(
        "kv_cache_config:\n  dtype: fp8\n  free_gpu_memory_fraction: 0.85\n"
        f"speculative_config:\n  decoding_type: Eagle\n  speculative_model_dir: {DRAFT}\n"
    )
    monkeypatch.chdir(tmp_path)
    command = "trtllm-serve M --tp_size 2 --extra_llm_api_options extra.yaml"
    assert main(["plan", "--cmd", command, "--model", QWEN3_8B, "--gpu", "H100", *json_flag]) == 0
    out, err = capsys.readouterr()
    leaked = PASSWORD[:5] in out + err
    assert not leaked
    assert SHOWN in out


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (f"draft {DRAFT} loaded", f"draft {SHOWN} loaded"),
        (f'{{"draft_model": "{DRAFT}"}}', f'{{"draft_model": "{SHOWN}"}}'),
        ("cache redis://:Q7vXk2pLm9@cache:6379/0", "cache redis://***@cache:6379/0"),
        ("got 'https://bob:Q7vXk2pL…", "got 'https://***…"),  # cut inside the password by a quote's limit
        # what stays: a host's port, an address with no password, a model id, an e-mail address
        ("http://127.0.0.1:9090 and gpu1-wl8sg:30000", "http://127.0.0.1:9090 and gpu1-wl8sg:30000"),
        ("meta-llama/Llama-3.1-8B@main by ada@example.com", "meta-llama/Llama-3.1-8B@main by ada@example.com"),
    ],
)
def test_the_last_mask_takes_a_url_s_user_info(text: str, shown: str) -> None:
    assert mask_secret_shapes(text) == shown
