"""The copied launch carries the environment a rule read: a `--cmd` launch's leading `NAME=VALUE` of the engine's
`env_read` is printed before the engine flags ('engine environment (set before the server's command): …') and given
as `plan --json`'s `engine_env`; pasted back through `--cmd` it plans the original's figure.

Expected figures: the original launch's own plan (the one the operator pasted), and each variable shown to move the
figure by the plan of the same line without it (so a copy that drops it plans another figure and fails here). The
variables' effects are their engines' code: vLLM 0.9.2 `VLLM_USE_V1=0` runs the V0 engine (engine/arg_utils.py
`create_engine_config`, v0.8.0 – v0.10.2: engines/vllm/v0_charge.py `V0_OPT_OUT_ERAS`), SGLang 0.5.18 `SGLANG_MAMBA_SSM_DTYPE=bfloat16` over the config's float32 state (configs/mamba_utils.py:47-107:
engines/sglang/ssm_dtype.py; reader R4 of session 71 found it dropped from the copy).
"""

from __future__ import annotations

import json
import re
import shlex

import pytest

from kvtop.cli import main
from kvtop.domain.engine_launch import env_words
from kvtop.domain.launch_line import parse_launch_command
from kvtop.ui.planning import engine_flag_list, launch_beside
from tests.conftest import DATA

CONFIGS = DATA / "calibration" / "configs"
QWEN_15B = str(CONFIGS / "deepseek-ai--DeepSeek-R1-Distill-Qwen-1.5B.RECONSTRUCTED.json")
QWEN35_9B = str(CONFIGS / "Qwen--Qwen3.5-9B.RECONSTRUCTED.json")  # GDN layers, its config's mamba_ssm_dtype float32

# (the server's command with its model, the engine flags, the variable, kvtop's own flags)
VLLM = (f"vllm serve {QWEN_15B}", "--max-model-len 8192", "VLLM_USE_V1=0", ["--engine-version", "0.9.2"])
SGLANG = (f"python -m sglang.launch_server --model-path {QWEN35_9B}", "--context-length 8192",
          "SGLANG_MAMBA_SSM_DTYPE=bfloat16", ["--engine-version", "0.5.18"])  # fmt: skip
ENV_HEAD = "engine environment (set before the server's command): "


def _plan(capsys: pytest.CaptureFixture[str], command: str, own: list[str], *json_out: str) -> str:
    code = main(["plan", "--cmd", command, "--gpu", "H100", "--no-calibration-store", *own, *json_out])
    out = capsys.readouterr().out
    assert code == 0, out
    return out


def _capacity(text: str) -> int:
    found = re.search(r"^Token capacity\s+([\d,]+) tokens per rank$", text, re.M)
    assert found is not None, text
    return int(found.group(1).replace(",", ""))


@pytest.mark.parametrize(("launch", "with_env", "without_env"), [
    (VLLM, 2_486_992, 2_332_816),  # V0's plan vs V1's
    (SGLANG, 733_760, 734_372),  # bfloat16 SSM state vs the config's float32
])  # fmt: skip
def test_the_printed_launch_pasted_back_plans_the_same_figure(
    capsys: pytest.CaptureFixture[str], launch: tuple[str, str, str, list[str]], with_env: int, without_env: int
) -> None:
    server, flags, variable, own = launch
    original = _plan(capsys, f"{variable} {server} {flags}", own)
    assert _capacity(original) == with_env
    assert _capacity(_plan(capsys, f"{server} {flags}", own)) == without_env  # the variable moves the figure
    lines = original.splitlines()
    env_line = next(line for line in lines if line.startswith(ENV_HEAD))
    flags_line = next(line for line in lines if line.startswith("engine flags: "))
    assert env_line == ENV_HEAD + variable  # on the printed launch, before the engine flags
    assert lines.index(env_line) + 1 == lines.index(flags_line)
    pasted = f"{env_line.removeprefix(ENV_HEAD)} {server} {flags_line.removeprefix('engine flags: ')}"
    assert _capacity(_plan(capsys, pasted, own)) == with_env


@pytest.mark.parametrize("launch", [VLLM, SGLANG])
def test_the_json_launch_pasted_back_plans_the_same_figure(
    capsys: pytest.CaptureFixture[str], launch: tuple[str, str, str, list[str]]
) -> None:
    server, flags, variable, own = launch
    original = json.loads(_plan(capsys, f"{variable} {server} {flags}", own, "--json"))
    name, value = variable.split("=")
    assert original["engine_env"] == {name: value}
    words = [f"{key}={shlex.quote(said)}" for key, said in original["engine_env"].items()]
    pasted = f"{' '.join(words)} {server} {shlex.join(original['engine_flags'])}"
    again = json.loads(_plan(capsys, pasted, own, "--json"))
    assert again["token_capacity"] == original["token_capacity"]
    assert again["engine_env"] == original["engine_env"]


def test_tensorrt_llms_variable_stays_above_its_flags_and_keeps_the_length(capsys: pytest.CaptureFixture[str]) -> None:
    """TLLM_ALLOW_LONG_MAX_MODEL_LEN=1 keeps a --max_seq_len above the config's 131,072 positions (PR #10600:
    engines/trtllm/max_seq_len.py); without it the length is lowered to 131,072. The notes said above the launch (the
    architecture's check) go above the environment's line, not between it and the flags."""
    server = f"trtllm-serve {QWEN_15B}"
    original = _plan(capsys, f"TLLM_ALLOW_LONG_MAX_MODEL_LEN=1 {server} --max_seq_len 200000", [])
    lines = original.splitlines()
    at = lines.index(ENV_HEAD + "TLLM_ALLOW_LONG_MAX_MODEL_LEN=1")
    assert lines[at + 1] == "engine flags: --max_seq_len 200000"
    assert "registers Qwen2ForCausalLM" in lines[at - 1] and not any(line.startswith("note: ") for line in lines[at:])
    pasted = f"{lines[at].removeprefix(ENV_HEAD)} {server} {lines[at + 1].removeprefix('engine flags: ')}"
    assert json.loads(_plan(capsys, pasted, [], "--json"))["context_length"] == 200_000
    assert json.loads(_plan(capsys, f"{server} --max_seq_len 200000", [], "--json"))["context_length"] == 131_072


def test_a_layout_row_and_the_smallest_fit_carry_the_environment(capsys: pytest.CaptureFixture[str]) -> None:
    """Final reader 2, MEDIUM 2: a `--layouts` row said only the flags and its JSON had no `engine_env`, so the row
    pasted back planned V1's figure (2,332,816), not the launch's V0 one (2,486,992: the test above's pair). The
    row's text says the variable first; its JSON's env and flags pasted back plan the row's own figure."""
    server, flags, variable, own = VLLM
    rows = json.loads(_plan(capsys, f"{variable} {server} {flags}", [*own, "--layouts", "1x2"], "--json"))["layouts"]
    (row,) = rows
    assert row["token_capacity"] == 2_486_992 and row["engine_env"] == {"VLLM_USE_V1": "0"}
    words = [f"{key}={shlex.quote(said)}" for key, said in row["engine_env"].items()]
    pasted = json.loads(_plan(capsys, f"{' '.join(words)} {server} {shlex.join(row['engine_flags'])}", own, "--json"))
    assert pasted["token_capacity"] == row["token_capacity"]
    text = _plan(capsys, f"{variable} {server} {flags}", [*own, "--layouts", "1x2"])
    assert f"flags: {variable} · {flags}" in text


def test_the_compare_rows_write_the_launch_as_plan_does(capsys: pytest.CaptureFixture[str]) -> None:
    """Final reader 2, MEDIUM 3: `--compare --json` wrote TensorRT-LLM's `engine_config` as the bare YAML body where
    `plan --json` writes {option, file, yaml, …}; each row now writes `plan --json`'s launch keys, shape for shape."""
    command = f"vllm serve {QWEN_15B} --max-model-len 8192 --kv-cache-dtype fp8"
    rows = json.loads(_plan(capsys, command, ["--compare", "vllm,trtllm"], "--json"))["engines"]
    trtllm = next(row for row in rows if row["engine"] == "trtllm")
    served = f"trtllm-serve {QWEN_15B} --max_seq_len 8192 --kv_cache_config.dtype fp8"
    alone = json.loads(_plan(capsys, served, ["--engine", "trtllm"], "--json"))
    assert trtllm["engine_config"]["yaml"] == {"kv_cache_config": {"dtype": "fp8"}}
    for key in ("engine_flags", "engine_config", "engine_env"):
        assert trtllm[key] == alone[key], key


def test_only_the_variables_a_rule_reads_are_kept_and_redacted_anyway() -> None:
    """`HF_TOKEN=…` is dropped when the line is read (launch_line.with_environment); a read variable holding a key's
    shape is masked on the copy, as every copied word is (redact_argv)."""
    key = "hf_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6"
    settings = parse_launch_command(f"HF_TOKEN={key} VLLM_PP_LAYER_PARTITION={key} VLLM_USE_V1=0 vllm serve m")
    assert settings is not None
    env = settings.engine_launch().env
    assert set(env) == {"VLLM_PP_LAYER_PARTITION", "VLLM_USE_V1"} and env["VLLM_USE_V1"] == "0"
    assert key not in env["VLLM_PP_LAYER_PARTITION"]


def test_a_value_a_shell_would_split_is_quoted_and_read_back() -> None:
    settings = parse_launch_command("VLLM_PP_LAYER_PARTITION='12 12' vllm serve m")
    assert settings is not None
    words = env_words(settings.engine_launch().env)
    assert words == ("VLLM_PP_LAYER_PARTITION='12 12'",)
    again = parse_launch_command(f"{' '.join(words)} vllm serve m")
    assert again is not None and again.flags["VLLM_PP_LAYER_PARTITION"] == "12 12"


def test_the_planner_says_the_variable_beside_the_flags_it_copies() -> None:
    """`c` copies what pastes after the server's command; the variable goes before it, so it is said beside."""
    settings = parse_launch_command(f"SGLANG_MAMBA_SSM_DTYPE=bfloat16 {SGLANG[0]} {SGLANG[1]}")
    assert settings is not None
    assert engine_flag_list(settings, with_model=False, launch=None) == ["--context-length", "8192"]
    assert launch_beside(settings) == (
        "environment (not copied; set it before the server's command): SGLANG_MAMBA_SSM_DTYPE=bfloat16"
    )


@pytest.mark.parametrize("command", [
    f"vllm serve {QWEN_15B} --max-model-len 8192",
    f"python -m sglang.launch_server --model-path {QWEN35_9B} --context-length 8192",
    f"HF_TOKEN=hf_x vllm serve {QWEN_15B} --max-model-len 4096 --gpu-memory-utilization 0.8",  # no read variable
])  # fmt: skip
def test_a_launch_without_a_read_variable_prints_no_environment(
    capsys: pytest.CaptureFixture[str], command: str
) -> None:
    text = _plan(capsys, command, [])
    assert ENV_HEAD.split(" (")[0] not in text and "HF_TOKEN" not in text
    assert json.loads(_plan(capsys, command, [], "--json"))["engine_env"] == {}
    settings = parse_launch_command(command)
    assert settings is not None and launch_beside(settings) == ""


def test_no_environment_line_where_the_release_has_no_servers_command(capsys: pytest.CaptureFixture[str]) -> None:
    """TensorRT-LLM 0.8.0 has no trtllm-serve (first in 0.15.0: serve_launch.py), so no line to copy: an environment
    'set before the server's command' would name a command that is not there (final reader 3 of session 71). The
    variable still plans (the length kept) and `--json` still gives it."""
    command = f"TLLM_ALLOW_LONG_MAX_MODEL_LEN=1 trtllm-serve {QWEN_15B} --max_seq_len 200000"
    lines = _plan(capsys, command, ["--engine-version", "0.8.0"]).splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("engine flags: none to copy (TensorRT-LLM 0.8.0"))
    assert not any(line.startswith(ENV_HEAD.split(" (")[0]) for line in lines), lines[at - 1]
    plan = json.loads(_plan(capsys, command, ["--engine-version", "0.8.0"], "--json"))
    assert plan["engine_env"] == {"TLLM_ALLOW_LONG_MAX_MODEL_LEN": "1"}
    settings = parse_launch_command(command)
    assert settings is not None
    assert "environment" not in launch_beside(settings.model_copy(update={"engine_version": "0.8.0"}))
