"""The TensorRT-LLM launch a plan prints to copy is one trtllm-serve takes (session 71, review H): the line carries only
`serve`'s click options (tensorrt_llm/commands/serve.py at NVIDIA/TensorRT-LLM 4c05a748 and 00209af1: no option there
has a dot, none is `--moe_config.backend` or `--disable_overlap_scheduler`), every other key a rule reads goes in the
`--extra_llm_api_options` YAML printed beside it, and a TensorRT engine's build flags are said apart.

Expected figures come from the operator's own launch (the corpus records' flags, ddps-lab's YAML), planned as typed;
the printed line and YAML, written to a file and read back through `--cmd`, must plan the same figure, and without the
YAML they plan another (the YAML's keys move the figure, so losing them is seen).
"""

from __future__ import annotations

import json
import shlex
from itertools import takewhile
from pathlib import Path
from typing import Any

import pytest
import yaml

from kvtop.cli import main
from kvtop.domain.engines.trtllm.serve_launch import SERVE_OPTIONS
from tests.data_paths import CONFIGS, DATA
from tests.engines.measured_flags import plan_json

ZUFAYU = "zufayu-e2eperf-gpt-oss-120b-b200-tp1-trtllm-130rc10"
DDPS = "ddpslab-disagg-t1-qwen3-4b-l4-trtllm-121"
LLAMA = str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")


def _record(record_id: str) -> dict[str, Any]:
    for line in (DATA / "calibration" / "trtllm.jsonl").read_text().splitlines():
        record: dict[str, Any] = json.loads(line)
        if record["id"] == record_id:
            return record
    raise AssertionError(f"no corpus record {record_id}")


def _base(record: dict[str, Any]) -> tuple[str, ...]:
    return ("--model", str(CONFIGS / record["config"]), "--engine", "trtllm", "--engine-version", record["version"],
            "--gpu", record["gpu"])  # fmt: skip


def _serve_tokens(line: list[str]) -> list[str]:
    return [token for token in line if token.startswith("--")]


def _printed(capsys: pytest.CaptureFixture[str], args: tuple[str, ...]) -> tuple[list[str], str]:
    """The text plan's launch as an operator copies it: the `engine flags:` line's words (its ` \\` breaks joined,
    split as a shell splits them) and the YAML block under it, dedented, as text."""
    assert main(["plan", "--no-calibration-store", *args]) == 0
    lines = capsys.readouterr().out.splitlines()
    at = next(i for i, text in enumerate(lines) if text.startswith("engine flags: "))
    words, end = lines[at].removeprefix("engine flags: "), at
    while words.endswith("\\"):
        end += 1
        words = words[:-1] + lines[end]
    block: list[str] = []
    if end + 1 < len(lines) and lines[end + 1].startswith("  extra_llm_api_options.yaml (the file "):
        block = list(takewhile(lambda text: text.startswith("    "), lines[end + 2 :]))
    return shlex.split(words), "\n".join(text[4:] for text in block)


def _replan(capsys: pytest.CaptureFixture[str], base: tuple[str, ...], typed: tuple[str, ...], tmp_path: Path) -> dict[str, Any]:
    """The printed text launch planned again: its YAML block written where the line names it, the line read by
    `--cmd`."""
    line, text = _printed(capsys, (*base, *typed))
    if text:
        path = tmp_path / "extra_llm_api_options.yaml"
        path.write_text(text)
        line[line.index("--extra_llm_api_options") + 1] = str(path)
    return plan_json(capsys, base, "--cmd", shlex.join(["trtllm-serve", "MODEL", *line]))


def test_zufayu_gpt_oss_launch_is_serve_options_and_a_yaml_that_plan_it_again(capsys, tmp_path) -> None:
    record = _record(ZUFAYU)
    typed = plan_json(capsys, _base(record), *record["flags"])  # the operator's launch, as kvtop reads it
    line, config = typed["engine_flags"], typed["engine_config"]
    assert set(_serve_tokens(line)) <= SERVE_OPTIONS, line
    assert line == ["--backend", "pytorch", "--max_num_tokens", "8192", "--max_seq_len", "8192",
                    "--extra_llm_api_options", "extra_llm_api_options.yaml"]  # fmt: skip
    # the fraction sits with the kv_cache_config it belongs to (before PR #9262 a YAML section replaced the line's)
    assert config["yaml"] == {"kv_cache_config": {"dtype": "fp8", "free_gpu_memory_fraction": 0.8},
                              "cuda_graph_config": {"max_batch_size": 64}, "moe_config": {"backend": "TRTLLM"}}  # fmt: skip
    assert config["build_flags"] == []
    again = _replan(capsys, _base(record), tuple(record["flags"]), tmp_path)
    assert again["token_capacity"] == typed["token_capacity"]
    # without the YAML the line plans another launch: the checkpoint's BF16 cache (2 B an element, not fp8's 1) at
    # the fraction 0.9, with CUTLASS's padding
    bare = plan_json(capsys, _base(record), "--cmd", " ".join(["trtllm-serve", "MODEL", *line[:-2]]))
    assert bare["token_capacity"] < typed["token_capacity"]


def test_ddps_lab_yaml_comes_back_as_its_yaml(capsys, tmp_path) -> None:
    """ddps-lab's decode worker (1.2.1): `cuda_graph_config: null`, `disable_overlap_scheduler: true`, NIXL's
    transceiver with max_tokens_in_buffer 8192, fraction 0.85 (disagg-exp/gen_extra_llm_api_options.yaml)."""
    options = tmp_path / "gen.yaml"
    options.write_text("disable_overlap_scheduler: true\ncuda_graph_config: null\n"
                       "cache_transceiver_config:\n  backend: NIXL\n  max_tokens_in_buffer: 8192\n"
                       "kv_cache_config:\n  free_gpu_memory_fraction: 0.85\n  enable_block_reuse: false\n")  # fmt: skip
    record = _record(DDPS)
    cmd = ("trtllm-serve Qwen/Qwen3-4B --backend pytorch --tp_size 1 --pp_size 1 --max_batch_size 256 "
           f"--max_num_tokens 8192 --extra_llm_api_options {options}")  # fmt: skip
    typed = plan_json(capsys, _base(record), "--cmd", cmd)
    line, config = typed["engine_flags"], typed["engine_config"]
    assert set(_serve_tokens(line)) <= SERVE_OPTIONS, line
    # no kv_cache_config key kvtop reads besides the fraction: the fraction is serve's own option
    assert line[line.index("--kv_cache_free_gpu_memory_fraction") + 1] == "0.85"
    assert config["yaml"] == {"cache_transceiver_config": {"backend": "NIXL", "max_tokens_in_buffer": 8192},
                              "cuda_graph_config": None, "disable_overlap_scheduler": True}  # fmt: skip
    again = _replan(capsys, _base(record), ("--cmd", cmd), tmp_path)
    assert again["token_capacity"] == typed["token_capacity"]
    assert again["notes"] == typed["notes"]  # graphs off and the transceiver named alike


def test_a_tensorrt_engine_s_build_flags_are_said_apart(capsys) -> None:
    """A TensorRT engine (0.8.0): --qformat is quantize.py's, --tokens_per_block and --max_input_len trtllm-build's,
    --use_gpt_attention_plugin build.py's; none is serve's, and the engine holds its block size (no YAML to write).
    0.8.0 has no trtllm-serve (first in 0.15.0): no line to copy, said so, the settings named as kvtop's."""
    args = ["plan", "--no-calibration-store", "--model", LLAMA, "--engine", "trtllm", "--engine-version", "0.8.0",
            "--gpu", "H100", "--backend", "tensorrt", "--max_batch_size", "8", "--max_input_len", "2048",
            "--kv_cache_config.tokens_per_block", "128", "--use_gpt_attention_plugin", "--qformat", "fp8"]  # fmt: skip
    assert main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    at = next(i for i, text in enumerate(lines) if text.startswith("engine flags:"))
    assert lines[at].startswith("engine flags: none to copy (TensorRT-LLM 0.8.0 has no trtllm-serve, first in 0.15.0")
    assert lines[at].endswith("kvtop's settings: --max_batch_size 8)")
    build = " ".join(text.strip().rstrip("\\") for text in lines[at + 1 :])
    assert build.startswith("build flags (the TensorRT engine's build: quantize.py --qformat / --kv_cache_dtype, ")
    assert build.split("the engine's build limits): ")[1].split() == ["--qformat", "fp8", "--max_input_len", "2048",
                                                        "--tokens_per_block", "128", "--use_gpt_attention_plugin"]  # fmt: skip


def test_before_trtllm_serve_the_llm_api_keys_are_said_not_a_file_name(capsys) -> None:
    """Final reader 2, LOW 7: at 0.14.0 (no trtllm-serve) `--moe_config.backend CUTLASS` was said as
    '--extra_llm_api_options extra_llm_api_options.yaml', a file no launch there reads, its key lost (yaml {}); the
    sentence now holds the options and the keys themselves."""
    out = plan_json(capsys, ("--model", LLAMA, "--engine", "trtllm", "--engine-version", "0.14.0", "--gpu", "H100",
                             "--moe_config.backend", "CUTLASS", "--max_seq_len", "4096"))  # fmt: skip
    said = out["engine_config"]["no_line"]
    assert out["engine_flags"] == [] and "extra_llm_api_options" not in said
    assert said.endswith("kvtop's settings: --max_seq_len 4096; LLM-API keys: {moe_config: {backend: CUTLASS}}")


def test_attention_dp_is_the_yaml_s_switch_not_kvtop_s_dp(capsys) -> None:
    args = ("--model", LLAMA, "--engine", "trtllm", "--gpu", "H100", "--tp_size", "2", "--enable_attention_dp",
            "--dp", "2")  # fmt: skip
    out = plan_json(capsys, args)
    assert "--dp" not in out["engine_flags"] and set(_serve_tokens(out["engine_flags"])) <= SERVE_OPTIONS
    assert out["engine_config"]["yaml"] == {"enable_attention_dp": True}


def test_a_typed_false_is_not_written(capsys) -> None:
    args = ("--model", LLAMA, "--engine", "trtllm", "--gpu", "H100", "--backend", "pytorch",
            "--use_cute_dsl_blockscaling_bmm", "false", "--disable_overlap_scheduler", "0")  # fmt: skip
    out = plan_json(capsys, args)
    assert out["engine_config"] is None
    assert out["engine_flags"] == ["--backend", "pytorch"]


def test_yaml_nulls_are_the_defaults(capsys, tmp_path) -> None:
    """`moe_config.backend: null` and `max_tokens_in_buffer: null` are the LLM API's defaults (pydantic Optional):
    read as unset, not written back as the word None."""
    options = tmp_path / "nulls.yaml"
    options.write_text("moe_config:\n  backend: null\ncache_transceiver_config:\n  backend: UCX\n"
                       "  max_tokens_in_buffer: null\n")  # fmt: skip
    out = plan_json(capsys, ("--model", LLAMA, "--engine", "trtllm", "--gpu", "H100"), "--cmd",
                    f"trtllm-serve MODEL --backend pytorch --extra_llm_api_options {options}")  # fmt: skip
    assert out["engine_config"]["yaml"] == {"cache_transceiver_config": {"backend": "UCX"}}


def test_a_bad_overlap_word_in_the_yaml_names_the_file(capsys, tmp_path) -> None:
    options = tmp_path / "bad.yaml"
    options.write_text("disable_overlap_scheduler: maybe\n")
    args = ["plan", "--no-calibration-store", "--model", LLAMA, "--engine", "trtllm", "--gpu", "H100", "--cmd",
            f"trtllm-serve MODEL --backend pytorch --extra_llm_api_options {options}"]  # fmt: skip
    assert main(args) != 0
    err = capsys.readouterr().err
    assert "--disable_overlap_scheduler" in err and "bad.yaml" in err and "'maybe'" in err


def test_the_planner_copies_serve_s_line_and_says_the_yaml_beside_it() -> None:
    """`c` copies `engine_flag_list`: serve's options only; the status writes the YAML it names on one line."""
    from kvtop.domain.launch import LaunchSettings
    from kvtop.ui.planning import engine_flag_list, launch_beside

    settings = LaunchSettings(engine="trtllm", model="openai/gpt-oss-120b", backend="pytorch", kv_cache_dtype="fp8",
                              free_gpu_memory_fraction=0.8, flags={"moe_config.backend": "TRTLLM"})  # fmt: skip
    copied = engine_flag_list(settings, with_model=True, launch=None)
    assert copied == ["openai/gpt-oss-120b", "--backend", "pytorch", "--extra_llm_api_options",
                      "extra_llm_api_options.yaml"]  # fmt: skip
    assert launch_beside(settings) == (
        "extra_llm_api_options.yaml (not copied; kvtop's keys: merge into your file before the line runs): "
        "{kv_cache_config: {dtype: fp8, free_gpu_memory_fraction: 0.8}, moe_config: {backend: TRTLLM}}"
    )
    assert launch_beside(settings.model_copy(update={"engine": "vllm", "flags": {}})) == ""


def test_the_planner_says_a_tensorrt_engine_s_build_by_its_tool_as_the_fix_does() -> None:
    """The planner's status line names the build step's flags as `launch_words` and the fix do: FP8 KV is
    TensorRT-LLM's examples/quantization/quantize.py `--kv_cache_dtype fp8` (its quantize step, not trtllm-build's),
    one spelling, not a second 'build flags (<the step>): …' form beside it."""
    from kvtop.domain.launch import LaunchSettings
    from kvtop.domain.launch_change import launch_words
    from kvtop.ui.planning import launch_beside

    settings = LaunchSettings(engine="trtllm", model="meta-llama/Llama-3.1-8B-Instruct", backend="tensorrt",
                              engine_version="0.20.0", kv_cache_dtype="fp8")  # fmt: skip
    assert launch_beside(settings) == "the engine's build: quantize.py --kv_cache_dtype fp8"
    assert launch_words(settings.engine_launch()).split(" · ")[-1] == launch_beside(settings)


def test_the_yaml_s_text_values_are_redacted_as_the_line_is() -> None:
    """A speculative model's `s3://user:pass@` path is written to the YAML body masked, as the line masks it."""
    from kvtop.domain.launch import LaunchSettings

    settings = LaunchSettings(engine="trtllm", flags={"speculative_config.decoding_type": "Eagle",
                                                      "speculative_config.speculative_model_dir": "s3://bob:hunter2@b/m"})  # fmt: skip
    config = settings.engine_launch().config
    assert config == {"speculative_config": {"decoding_type": "Eagle", "speculative_model_dir": "s3://***@b/m"}}


def test_an_empty_graph_section_stays_a_mapping_beside_its_batch_size(capsys, tmp_path) -> None:
    """`--cuda_graph_config {}` (the default CudaGraphConfig) with `--cuda_graph_config.max_batch_size 64`: the
    YAML holds the section with its 64 (the empty mapping does not replace it, nor is it written as the string
    '{}', which Optional[CudaGraphConfig] refuses); alone it is written `{}`, which PyYAML reads as a mapping."""
    base = ("--model", LLAMA, "--engine", "trtllm", "--gpu", "H100", "--backend", "pytorch")
    both = ("--cuda_graph_config", "{}", "--cuda_graph_config.max_batch_size", "64")
    typed = plan_json(capsys, base, *both)
    assert typed["engine_config"]["yaml"] == {"cuda_graph_config": {"max_batch_size": 64}}
    again = _replan(capsys, base, both, tmp_path)
    assert again["token_capacity"] == typed["token_capacity"]
    line, text = _printed(capsys, (*base, "--cuda_graph_config", "{}"))
    assert yaml.safe_load(text) == {"cuda_graph_config": {}}


def test_graphs_off_beside_a_graph_key_is_refused_naming_the_section(capsys) -> None:
    """`cuda_graph_config: null` cannot hold `max_batch_size`: the YAML's null drops it, so kvtop refuses the pair."""
    args = ["plan", "--no-calibration-store", "--model", LLAMA, "--engine", "trtllm", "--gpu", "H100", "--backend",
            "pytorch", "--cuda_graph_config", "null", "--cuda_graph_config.max_batch_size", "64"]  # fmt: skip
    assert main(args) != 0
    err = capsys.readouterr().err
    assert "--cuda_graph_config" in err and "cuda_graph_config.max_batch_size" in err and "Traceback" not in err


@pytest.mark.parametrize(("version", "line"), [
    # serve's --backend was Choice(["pytorch"]), default the TensorRT engine, before 1.0 (0.18.2's trtllm-serve docs)
    ("0.18.0", ["--max_batch_size", "8"]),
    ("0.20.0", ["--max_batch_size", "8"]),
    ("1.0.0", ["--backend", "tensorrt", "--max_batch_size", "8"]),
])  # fmt: skip
def test_a_tensorrt_engine_is_served_without_backend_before_1_0(capsys, version: str, line: list[str]) -> None:
    out = plan_json(capsys, ("--model", LLAMA, "--engine", "trtllm", "--engine-version", version, "--gpu", "H100",
                             "--backend", "tensorrt", "--max_batch_size", "8"))  # fmt: skip
    assert out["engine_flags"] == line


def test_the_fraction_on_the_line_is_written_in_full(capsys) -> None:
    out = plan_json(capsys, ("--model", LLAMA, "--engine", "trtllm", "--gpu", "H100", "--backend", "pytorch",
                             "--kv_cache_free_gpu_memory_fraction", "0.123456789"))  # fmt: skip
    assert out["engine_flags"] == ["--backend", "pytorch", "--kv_cache_free_gpu_memory_fraction", "0.123456789"]


def test_the_smallest_fit_is_said_as_trtllm_serve_takes_it(capsys) -> None:
    """Llama-3.1-70B (BF16, 141 GB of weights) fits no H100 alone: the layout that fits is said with serve's options
    and the YAML, never kvtop's `--kv_cache_config.dtype`, which trtllm-serve refuses ("No such option")."""
    args = ["plan", "--no-calibration-store", "--model", str(CONFIGS / "meta-llama--Llama-3.1-70B-Instruct.json"),
            "--engine", "trtllm", "--gpu", "H100", "--backend", "pytorch", "--kv_cache_config.dtype", "fp8"]  # fmt: skip
    assert main(args) == 0
    fit = next(text for text in capsys.readouterr().out.splitlines() if text.startswith("smallest layout that fits:"))
    said = fit.split("(engine flags: ")[1]
    assert said.startswith("--tp_size 2 --backend pytorch --extra_llm_api_options extra_llm_api_options.yaml")
    assert said.endswith("extra_llm_api_options.yaml: {kv_cache_config: {dtype: fp8}})")
    assert main([*args, "--json"]) == 0
    smallest = json.loads(capsys.readouterr().out)["smallest_fit"]
    assert set(_serve_tokens(smallest["engine_flags"])) <= SERVE_OPTIONS
    assert smallest["engine_config"]["yaml"] == {"kv_cache_config": {"dtype": "fp8"}}


def test_a_yaml_before_pr_4603_is_said_not_the_release_s_schema(capsys) -> None:
    """At 0.20.0 the CUDA-graph and MoE knobs sat under pytorch_backend_config (PR #4603, 0.21.0rc0, flattened them):
    the YAML kvtop writes is named as not that release's schema; at 0.21.0 it is."""
    base = ("--model", LLAMA, "--engine", "trtllm", "--gpu", "H100", "--backend", "pytorch",
            "--cuda_graph_config.max_batch_size", "8")  # fmt: skip
    old = plan_json(capsys, (*base, "--engine-version", "0.20.0"))["engine_config"]
    assert old["yaml_note"].startswith("not TensorRT-LLM 0.20.0's schema: cuda_graph_config (pytorch_backend_config.")
    assert plan_json(capsys, (*base, "--engine-version", "0.21.0"))["engine_config"]["yaml_note"] is None


def test_a_compare_row_is_the_launch_trtllm_serve_takes(capsys) -> None:
    """`--compare`'s TensorRT-LLM row: serve's options and the YAML body, not kvtop's `--kv_cache_config.dtype`."""
    args = ["plan", "--no-calibration-store", "--model", LLAMA, "--gpu", "H100", "--compare", "trtllm,vllm", "--json",
            "--kv_cache_config.dtype", "fp8"]  # fmt: skip
    assert main(args) == 0
    rows = {row["engine"]: row for row in json.loads(capsys.readouterr().out)["engines"]}
    assert rows["trtllm"]["engine_flags"] == ["--extra_llm_api_options", "extra_llm_api_options.yaml"]
    assert rows["trtllm"]["engine_config"]["yaml"] == {"kv_cache_config": {"dtype": "fp8"}}  # plan --json's shape
    assert rows["trtllm"]["engine_config"]["file"] == "extra_llm_api_options.yaml"
    assert rows["vllm"]["engine_flags"] == ["--kv-cache-dtype", "fp8"] and rows["vllm"]["engine_config"] is None


def test_the_planner_s_lora_edit_reaches_the_copied_yaml() -> None:
    """The planner's LoRA slots 4 and rank 64 on TensorRT-LLM: written as `lora_config` (they were left out, so the
    copied launch served no LoRA), and read back as the same setup."""
    from kvtop.domain.deployment import DeploymentSetup
    from kvtop.domain.engines.trtllm.deployment import setup, with_setup
    from kvtop.domain.launch import LaunchSettings

    edited = with_setup(LaunchSettings(engine="trtllm", backend="pytorch"),
                        DeploymentSetup(lora=True, max_loras=4, max_lora_rank=64))  # fmt: skip
    assert edited.engine_launch().config == {"lora_config": {"max_loras": 4, "max_lora_rank": 64}}
    assert (setup(edited).lora, setup(edited).max_loras, setup(edited).max_lora_rank) == (True, 4, 64)
    assert with_setup(edited, DeploymentSetup()).engine_launch().config == {}
