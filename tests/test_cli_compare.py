"""`kvtop plan --compare` as a user runs it: the side-by-side table, the JSON contract, and bad input
refused with one line naming the flag (exit 2).

Llama-3.1-70B at TP4 on H100s; each engine's tokens from its budget are worked by hand in tests/domain/test_compare.py
(the budgets are calibrated: the corpus tests judge them).
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from tests.conftest import CONFIGS

LLAMA70 = str(CONFIGS / "meta-llama--Llama-3.1-70B.json")
BASE = ["plan", "--model", LLAMA70, "--tp", "4"]


def engine_plan(capsys: pytest.CaptureFixture[str], engine: str) -> dict[str, int]:
    """`plan --engine E` on the same launch: the row `--compare` must repeat (one solve, `planned_capacity`; the
    engines' tokens from their budgets are worked by hand in tests/domain/test_compare.py)."""
    assert main([*BASE, "--engine", engine, "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    return {key: plan[key] for key in ("token_capacity", "token_capacity_min", "token_capacity_max", "kv_budget_bytes")}


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main([*BASE, *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_table_shows_every_engine_its_setting_and_the_same_budget_flags(capsys: pytest.CaptureFixture[str]) -> None:
    sglang, vllm = engine_plan(capsys, "sglang"), engine_plan(capsys, "vllm")
    lmdeploy, trtllm = engine_plan(capsys, "lmdeploy"), engine_plan(capsys, "trtllm")
    code, out, _ = run(capsys, "--compare", "all")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("meta-llama--Llama-3.1-70B  ·  TP4 on 4× H100 (79.65 GiB, nvidia-smi's total)")
    rows = {line.split()[0]: line for line in lines if line.startswith("  ") and line.split()[1:2] == ["latest"]}
    assert list(rows) == ["SGLang", "vLLM", "LMDeploy", "TensorRT-LLM", "llama.cpp"]
    assert "--tp: llama.cpp has no tensor" in rows.pop("llama.cpp")  # a row message: it has no TP ranks
    # each row: the engine's own flag and value, the budget in GB and GiB, bytes per token, tokens per rank
    # SGLang's budget is 0.819 × (total − context) − weights: session 69's refit of `sglang.context` (2564963f) on the
    # H100's 132 SMs at TP 4 over NVLink, (0.569292 × 1.32 + 0.471425 × 2) − (0.548366 × 1.32 + 0.454126 × 2) =
    # +0.062220 GiB (66,808,560 B) of context, takes 0.819 × that = 54,716,211 B off: 32,849,294,886 B (32.85 GB,
    # 30.59 GiB) → 32,794,578,675 B (32.79 GB, 30.54 GiB)
    assert "--mem-fraction-static 0.819" in rows["SGLang"] and "32.79 GB (30.54 GiB)" in rows["SGLang"]
    assert f"{sglang['token_capacity']:,}" in rows["SGLang"]  # `plan --engine sglang`'s figure and interval
    assert f"{sglang['token_capacity_min']:,} – {sglang['token_capacity_max']:,}" in rows["SGLang"]
    # vLLM's latest (0.34.0) under its extensible KV cache: the unstated share is 1.0 (tests/domain/test_compare.py),
    # whole granules a layer × 2,048 tokens, as `plan --engine vllm` solves it
    assert "--gpu-memory-utilization 1 " in rows["vLLM"] and f"{vllm['token_capacity']:,}" in rows["vLLM"]
    assert vllm["token_capacity"] % 2_048 == 0
    assert "--cache-max-entry-count 0.8" in rows["LMDeploy"] and f"{lmdeploy['token_capacity']:,}" in rows["LMDeploy"]
    assert "--kv_cache_free_gpu_memory_fraction 0.9" in rows["TensorRT-LLM"] and f"{trtllm['token_capacity']:,}" in rows["TensorRT-LLM"]
    assert all("81,920 B bf16" in row for row in rows.values())
    assert "Same KV budget per rank as SGLang, 32.79 GB (30.54 GiB), re-solved under each engine's rules:" in lines
    assert any(
        # whole blocks of 64 at 0.34.0 of SGLang's budget ÷ 81,920 B a token (tests/domain/test_compare.py)
        line.startswith("  vLLM ") and f"{sglang['kv_budget_bytes'] // 81_920 // 64 * 64:,}" in line
        and f"--kv-cache-memory-bytes {sglang['kv_budget_bytes']}" in line
        for line in lines
    )
    # LMDeploy's share of the memory free after the weights, 37,862,899,847 B at its 0.8: the largest share to 3
    # decimals under SGLang's budget, 0.8 × 32,794,578,675 ÷ 37,862,899,847 = 0.6929 → 0.692 (0.6941 → 0.694 before)
    assert any("--cache-max-entry-count 0.692" in line and "share searched" in line for line in lines)
    assert "total GPU memory" in out and "the memory free after the weights" in out  # what each share is of
    # TensorRT-LLM's row as trtllm-serve takes it: serve's --tp_size and the cap as the --extra_llm_api_options YAML's
    # kv_cache_config.max_gpu_total_bytes (serve declares no --kv_cache_config.* option: tensorrt_llm/commands/serve.py's
    # @click.option list at 00209af1), never kvtop's own `--kv_cache_config.max_gpu_total_bytes`
    trtllm_same = next(line for line in lines if line.startswith("  TensorRT-LLM ") and "flags" not in line
                       and "extra_llm_api_options" in line)  # fmt: skip
    assert ("--tp_size 4 --extra_llm_api_options extra_llm_api_options.yaml · extra_llm_api_options.yaml: "
            f"{{kv_cache_config: {{max_gpu_total_bytes: {sglang['kv_budget_bytes']}}}}}") in trtllm_same
    assert "--kv_cache_config." not in out


def test_llamacpp_shows_its_context_not_a_share(capsys: pytest.CaptureFixture[str]) -> None:
    """llama.cpp takes no share of memory: its row shows -c and what it came to (0: the training context,
    config.json's max_position_embeddings 131,072), never `-c 1`; its JSON has no share."""
    llama8 = str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")
    assert main(["plan", "--model", llama8, "--gpu", "H100", "--compare", "all"]) == 0
    out = capsys.readouterr().out
    assert "-c 1" not in out
    row = next(line for line in out.splitlines() if line.startswith("  llama.cpp latest"))
    assert "-c 0 (training context 131,072)" in row and "131,072" in row.split("fp16")[1]
    assert main(["plan", "--model", llama8, "--gpu", "H100", "--compare", "llamacpp,vllm", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    llama, vllm = data["engines"]
    assert (llama["memory_fraction"], llama["capacity_setting"]) == (None, "-c 0 (training context 131,072)")
    # vLLM's latest (0.34.0): the extensible KV cache's unstated share, 1.0 (v0.34.0 config/cache.py:216, :493-501)
    assert (vllm["memory_fraction"], vllm["capacity_setting"]) == (1.0, None)


def test_json_gives_each_engines_row_and_the_same_budget_list(capsys: pytest.CaptureFixture[str]) -> None:
    sglang = engine_plan(capsys, "sglang")
    code, out, _ = run(capsys, "--compare", "trtllm,sglang", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["reference"] == "trtllm" and [row["engine"] for row in data["engines"]] == ["trtllm", "sglang"]
    row = data["engines"][1]
    for key in ("engine_version", "version_source", "memory_fraction_flag", "memory_fraction",
                "memory_fraction_source", "kv_budget_bytes", "kv_bytes_per_token", "token_capacity",
                "max_running_requests", "fits", "error"):
        assert key in row
    assert (row["engine_version"], row["version_source"], row["kv_budget_bytes"]) == (None, "not_stated", sglang["kv_budget_bytes"])
    # SGLang's budget is below TensorRT-LLM's: SGLang's cap cannot raise it, so its share is searched
    same = data["same_budget"][0]
    assert set(same) >= {"engine", "flags", "kv_budget_bytes", "token_capacity", "reached"}
    assert same["engine"] == "sglang" and same["method"] == "share" and same["reached"] is True
    assert "--mem-fraction-static" in same["flags"]
    assert same["kv_budget_bytes"] <= data["target_kv_budget_bytes"] == data["engines"][0]["kv_budget_bytes"]


def test_a_dtype_one_engine_lacks_is_that_rows_message(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--compare", "sglang,trtllm", "--kv-cache-dtype", "fp8_e4m3")
    assert code == 0
    assert "TensorRT-LLM has no KV cache dtype 'fp8_e4m3' (one of auto, fp8, nvfp4)" in out
    assert "40,960 B fp8_e4m3" in out  # SGLang's row still solves: 80 × 2 × 2 × 128 × 1 B


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--compare", "all", "--mem-fraction-static", "0.8"], "--mem-fraction-static: SGLang's own setting"),
        (["--compare", "vllm,sglang", "--gpu-memory-utilization", "0.8"], "--gpu-memory-utilization: vLLM's own setting"),
        (["--compare", "all", "--engine-version", "0.5.9"], "--engine-version: --compare solves every engine under"),
        (["--compare", "sglang,tgi"], "--compare: unknown engine 'tgi' (one of sglang, vllm, lmdeploy, trtllm, llamacpp, or all)"),
        (["--compare", "all", "--engine", "vllm"], "--engine: --compare names the engines"),
        (["--compare", "all", "--require-fit"], "--require-fit:"),
        (["--compare", "all", "--max-model-len", "8192"], "--max-model-len: is vLLM's flag: SGLang spells it --context-length"),
    ],
)
def test_bad_input_is_one_line_naming_the_flag(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, out, err = run(capsys, *args)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"kvtop: error: {message}")


def test_a_launch_command_is_compared_with_what_kvtop_does_not_model_named(capsys: pytest.CaptureFixture[str]) -> None:
    command = "vllm serve meta-llama/Llama-3.1-70B --tensor-parallel-size 4 --max-model-len 32768 --trust-remote-code"
    code = main(["plan", "--cmd", command, "--model", LLAMA70, "--compare", "sglang,vllm"])
    out = capsys.readouterr().out
    assert code == 0
    assert "context 32,768" in out.splitlines()[0]
    assert "note: not carried to the other engines (this launch's own; each other engine is solved at its defaults): " \
           "--trust-remote-code" in out


def test_an_environment_variable_a_rule_reads_is_not_carried_as_the_shell_sets_it(capsys: pytest.CaptureFixture[str]) -> None:
    """`VLLM_USE_FLASHINFER_SAMPLER=0` before `vllm serve` is an environment variable a vLLM rule reads (vllm/envs.py
    names it): the note says it as the shell set it, never as a `--VLLM_USE_FLASHINFER_SAMPLER` flag no engine has."""
    command = "VLLM_USE_FLASHINFER_SAMPLER=0 vllm serve meta-llama/Llama-3.1-70B --tensor-parallel-size 4"
    code = main(["plan", "--cmd", command, "--model", LLAMA70, "--compare", "sglang,vllm", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["not_carried"] == ["VLLM_USE_FLASHINFER_SAMPLER=0"]


def test_the_tensorrt_llm_same_budget_row_is_the_launch_plan_json_writes_for_its_flags(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The same-budget row's engine_flags / engine_config / engine_env are `plan --json`'s for the row's own `flags`
    (kvtop's spelling, which `plan --` reads back), so the two never disagree; FP8 KV with the searched share lands in
    the YAML the line names (`kv_cache_config: {dtype: fp8, free_gpu_memory_fraction: …}`: KvCacheConfig's fields,
    llmapi/llm_args.py; serve.py declares no `--kv_cache_config.*`)."""
    code = main(["plan", "--model", LLAMA70, "--tp", "4", "--gpu", "H100", "--kv-cache-dtype", "fp8",
                 "--compare", "vllm,trtllm", "--json"])  # fmt: skip
    (row,) = json.loads(capsys.readouterr().out)["same_budget"]
    assert code == 0 and row["engine"] == "trtllm" and row["method"] == "share"
    share = float(row["flags"][row["flags"].index("--kv_cache_free_gpu_memory_fraction") + 1])
    assert row["engine_config"]["yaml"] == {"kv_cache_config": {"dtype": "fp8", "free_gpu_memory_fraction": share}}
    assert main(["plan", "--model", LLAMA70, "--gpu", "H100", "--engine", "trtllm", "--json", "--", *row["flags"]]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert (row["engine_flags"], row["engine_config"], row["engine_env"]) == (
        plan["engine_flags"], plan["engine_config"], plan["engine_env"])


def test_plan_help_lists_compare(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["plan", "--help"])
    assert "--compare ENGINES" in capsys.readouterr().out


def test_compare_json_names_the_flags_kvtop_did_not_read_as_plan_json_does(capsys: pytest.CaptureFixture[str]) -> None:
    """`flags_not_read` in `--compare --json` and `--layouts --json` as in `plan --json` (a script reads no stderr):
    the SGLang launch's misspelt --max-totl-tokens and unknown --frobnicate, each with the flag it looks like."""
    command = "python -m sglang.launch_server --model-path m --tp-size 4 --max-totl-tokens 4096 --frobnicate"
    expected = [
        {"flag": "--max-totl-tokens", "why": "unknown", "like": "--max-total-tokens"},
        {"flag": "--frobnicate", "why": "unknown", "like": None},
    ]
    assert main(["plan", "--cmd", command, "--model", LLAMA70, "--compare", "sglang,vllm", "--json"]) == 0
    compared = json.loads(capsys.readouterr().out)
    assert compared["flags_not_read"] == expected
    assert main(["plan", "--cmd", command, "--model", LLAMA70, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["flags_not_read"] == expected
    assert main(["plan", "--cmd", command, "--model", LLAMA70, "--layouts", "1x4 tp4", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["flags_not_read"] == expected
    assert main([*BASE, "--compare", "sglang,vllm", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["flags_not_read"] == []


def test_each_engine_row_names_the_measured_input_its_rule_does_not_read(capsys: pytest.CaptureFixture[str]) -> None:
    """--non-kv-memory is what vLLM and TensorRT-LLM subtract (a profiled runtime figure, their reserve); SGLang's pool
    is free memory less a share of pre-load (docs/engines/sglang.md §4), so its row alone names it (before: no row)."""
    assert main(["plan", "--no-calibration-store", "--model", "llama-3.1-8b", "--gpu", "H100",
                 "--compare", "sglang,vllm,trtllm", "--non-kv-memory", "2GiB", "--json"]) == 0  # fmt: skip
    rows = json.loads(capsys.readouterr().out)["engines"]
    named = {row["engine"]: [(f["flag"], f["why"]) for f in row["flags_not_read"]] for row in rows}
    assert named == {"sglang": [("--non-kv-memory", "not_read_by_rule")], "vllm": [], "trtllm": []}
