"""A value from outside quoted in an error is redacted before it is cut: no prefix length shows a secret's head.

Review R8 (session 71) found `{value[:40]!r}` and `repr(value)[:40]` in ~70 error messages: the slice left no `…` and
`repr(…)[:40]` cut off the closing quote, so the redactor (which reads a token as cut only where `…` or the end follows)
no longer knew a key sliced at the boundary: `got 'xxxxxxxxxxxxxxxxxxxx AKIAIOSFODNN7EXAMP` (19 of the key id's 20
characters) from a trtllm-serve process's --extra_llm_api_options YAML in `snapshot --json`, and `hf_` tokens from
`plan --cmd` at prefix lengths 5–24. Every such site now quotes through `redact.quoted` (`repr(shown_cut(…))`).

The keys are AWS's documented example id and an `hf_` token of Hugging Face's shape; a leak is any 5 characters of
either in what kvtop printed (the masked form keeps at most `AKIA` / `hf_`: 4 characters).
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from kvtop.cli import main
from kvtop.commands.output import error_line
from kvtop.domain.cluster import PrometheusError
from kvtop.sources.processes import _engine_from_server
from kvtop.sources.prometheus_parse import _vector
from kvtop.ui.polling import failure_reason
from tests.fakes.fake_process_table import launched

AWS_KEY_ID = "AKIAIOSFODNN7EXAMPLE"  # AWS's documentation's example access key id
HF_TOKEN = "hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456"  # hf_ + 34 letters and digits, a user access token's shape
SECRETS = {"aws": AWS_KEY_ID, "hf": HF_TOKEN}
PREFIXES = range(46)  # filler before the secret: every cut point of a 40-character quote, and past it
KVTOP = Path(__file__).resolve().parent.parent / "kvtop"


def leaked(secret: str, text: str) -> list[str]:
    """The 5-character pieces of `secret` found in `text` (the masked forms `AKIA***`, `hf_***` hold none)."""
    return [secret[i : i + 5] for i in range(len(secret) - 4) if secret[i : i + 5] in text]


# ---------------------------------------------------------------- the guard: no bare cut of a quoted value


def _bare_cut(node: ast.AST) -> bool:
    """`x[:N]` with N a literal whole number."""
    return (
        isinstance(node, ast.Subscript)
        and isinstance(node.slice, ast.Slice)
        and node.slice.lower is None
        and node.slice.step is None
        and isinstance(node.slice.upper, ast.Constant)
        and isinstance(node.slice.upper.value, int)
    )


def _is_repr(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "repr"


def quoted_cuts(tree: ast.AST) -> list[int]:
    """Lines that quote a cut value (`{x[:N]!r}`, `repr(x[:N])`) or cut a quote (`repr(x)[:N]`)."""
    return [node.lineno for node in ast.walk(tree) if isinstance(node, ast.expr) and _quotes_a_cut(node)]


def _quotes_a_cut(node: ast.AST) -> bool:
    if isinstance(node, ast.FormattedValue):  # f"{x[:N]!r}"
        return node.conversion == ord("r") and _bare_cut(node.value)
    if isinstance(node, ast.Subscript) and _bare_cut(node):  # repr(x)[:N]
        return _is_repr(node.value)
    # repr(x[:N])
    return isinstance(node, ast.Call) and _is_repr(node) and any(_bare_cut(arg) for arg in node.args)


def test_the_guard_finds_each_shape_it_refuses() -> None:
    shapes = ['f"got {value[:40]!r}"', "repr(value)[:40]", "repr(value[:40])", 'f"got {str(value)[:40]!r}"']
    assert [bool(quoted_cuts(ast.parse(shape))) for shape in shapes] == [True] * 4
    assert quoted_cuts(ast.parse('f"got {quoted(value)} {value!r} {words[:2]}"')) == []


# Values that are never outside text may be cut so, each with its reason (none today).
ALLOWED: dict[str, str] = {}


def test_no_message_in_kvtop_quotes_a_bare_cut() -> None:
    found = [
        f"{path.relative_to(KVTOP.parent)}:{line}"
        for path in sorted(KVTOP.rglob("*.py"))
        for line in quoted_cuts(ast.parse(path.read_text(), str(path)))
    ]
    assert [site for site in found if site.split(":")[0] not in ALLOWED] == []


# ---------------------------------------------------------------- plan --cmd: one refused flag per engine

ENGINE_FLAGS = {
    "vllm": "vllm serve m --kv-cache-dtype '{text}'",
    "sglang": "python -m sglang.launch_server --model-path m --attention-backend '{text}'",
    "trtllm": "trtllm-serve m --backend '{text}'",
    "llamacpp": "llama-server -m m.gguf -ctk '{text}'",
    "lmdeploy": "lmdeploy serve api_server m --backend '{text}'",
}


@pytest.mark.parametrize("json_flag", [[], ["--json"]], ids=["text", "json"])
@pytest.mark.parametrize("secret", sorted(SECRETS))
@pytest.mark.parametrize("engine", sorted(ENGINE_FLAGS))
def test_a_refused_flag_s_value_shows_no_secret_at_any_cut(
    capsys: pytest.CaptureFixture[str], engine: str, secret: str, json_flag: list[str]
) -> None:
    key = SECRETS[secret]
    shown: dict[int, list[str]] = {}
    for prefix in PREFIXES:
        command = ENGINE_FLAGS[engine].format(text=f"{'x' * prefix} {key}")
        assert main(["plan", "--model", "llama-3.1-8b", "--engine", engine, *json_flag, "--cmd", command]) == 2
        out, err = capsys.readouterr()
        if prefix == 0:
            assert "***" in out + err  # the refusal quotes the value, masked whole
        if leaked(key, out + err):
            shown[prefix] = leaked(key, out + err)
    assert shown == {}


# ---------------------------------------------------------------- the live path: a running trtllm-serve's YAML

YAML_VALUES = {
    "int": "max_batch_size: '{text}'\n",
    "dtype": "kv_cache_config:\n  dtype: '{text}'\n",
    "bool": "disable_overlap_scheduler: '{text}'\n",
    "graphs": "cuda_graph_config: '{text}'\n",
    "kept": "some_key_kvtop_does_not_read: '{text}'\n",
}


@pytest.mark.parametrize("secret", sorted(SECRETS))
@pytest.mark.parametrize("kind", sorted(YAML_VALUES))
def test_a_running_trtllm_serve_s_yaml_value_shows_no_secret_at_any_cut(
    tmp_path: Path, kind: str, secret: str
) -> None:
    """The process's YAML is read when `snapshot` finds it (an absolute path); a value refused there reaches
    `settings_message`, which `snapshot --json` prints as the engine's; one kept unread, its `flags`."""
    key = SECRETS[secret]
    options = tmp_path / "extra.yaml"
    shown: dict[int, list[str]] = {}
    for prefix in PREFIXES:
        options.write_text(YAML_VALUES[kind].format(text=f"{'x' * prefix} {key}"))
        argv = ["trtllm-serve", "meta-llama/Llama-3.1-8B", "--extra_llm_api_options", str(options)]
        engine = _engine_from_server(launched(4100, argv), "trtllm")
        printed = json.dumps(engine.model_dump(mode="json"))
        if prefix == 0:
            assert "***" in printed and (engine.settings_message is not None) == (kind != "kept")
        if leaked(key, printed):
            shown[prefix] = leaked(key, printed)
    assert shown == {}


# ---------------------------------------------------------------- Prometheus's answer


def _answers(text: str) -> dict[str, dict[str, object]]:
    return {
        "errorType": {"status": "error", "errorType": text, "error": "e"},
        "resultType": {"status": "success", "data": {"resultType": text, "result": []}},
        "sample": {"status": "success", "data": {"resultType": "vector", "result": [{"metric": {}, "value": [1, text]}]}},
    }


@pytest.mark.parametrize("secret", sorted(SECRETS))
@pytest.mark.parametrize("field", ["errorType", "resultType", "sample"])
def test_a_prometheus_field_shows_no_secret_at_any_cut(field: str, secret: str) -> None:
    """R8: `errorType[:40]`, `resultType[:40]` and `{pair[1][:40]!r}` showed `query_error: xxx… AKIAIOSFODNN7EXAMPL`."""
    key = SECRETS[secret]
    shown: dict[int, str] = {}
    for prefix in PREFIXES:
        with pytest.raises(PrometheusError) as raised:
            _vector(_answers(f"{'x' * prefix} {key}")[field], "up")
        line = error_line(failure_reason(raised.value))
        if prefix == 0:
            assert "***" in line
        if leaked(key, line):
            shown[prefix] = line
    assert shown == {}
