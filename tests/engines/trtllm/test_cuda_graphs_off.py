"""TensorRT-LLM's `cuda_graph_config: null` read off the launch (trtllm/cuda_graphs.py, docs/engines/trtllm.md §37).

Real launches: ddps-lab/disaggregation-TensorRT-LLM's T1 ctx worker YAML (tests/data/calibration/trtllm.jsonl,
ddpslab-disagg-t1-qwen3-4b-l4-trtllm-121: `cuda_graph_config: null`, Qwen3-4B, 1.2.1, L4) and zufayu/ClaudeSkillsE2EPerf's
DeepSeek-R1-0528 NVFP4 TP 4 start on B200 (1.3.0rc10), whose log prints both MLA workspaces: the eager one 470,115,328 B
(the autotuner's context pass) and the CUDA-graph one 380,108,800 B (`Run generation-only CUDA graph warmup`). With
graphs off, `_run_cuda_graph_warmup` returns before any capture (model_engine.py, stored copy id 707893322), so only
the eager workspace is in the profiled peak.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.calibration.corpus import load_all, resolve
from kvtop.cli import main
from kvtop.domain.engines.trtllm.cuda_graphs import graphs_off
from kvtop.domain.engines.trtllm.mla_workspace import READ_REST_WORKSPACE_BYTES, held_in_torch
from kvtop.domain.errors import InputError
from kvtop.domain.launch import LaunchSettings
from tests.data_paths import CONFIGS

TRTLLM = {record.id: record for record in load_all()["trtllm"]}
TP4_EP4 = "zufayu-e2eperf-dsr1-0528-nvfp4-b200-tp4-ep4-trtllm-130rc10"
QWEN3_4B = CONFIGS / "heldout" / "wave3" / "Qwen--Qwen3-4B.json"
FLAGS = ["--backend", "pytorch", "--tp_size", "1", "--max_batch_size", "256", "--max_num_tokens", "8192",
         "--kv_cache_config.free_gpu_memory_fraction", "0.85"]  # fmt: skip


def _plan(capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, object]:
    assert main(["plan", "--json", "--no-calibration-store", "--model", str(QWEN3_4B), "--engine", "trtllm",
                 "--engine-version", "1.2.1", "--gpu", "L4", "--", *FLAGS, *extra]) == 0  # fmt: skip
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def test_the_yaml_null_and_the_typed_word_turn_graphs_off() -> None:
    """The YAML's null is kept as str(None); `{}` is the default CudaGraphConfig (graphs on); unset is on."""

    def given(**flags: str) -> LaunchSettings:
        return LaunchSettings(engine="trtllm", flags=flags)

    assert graphs_off(given(cuda_graph_config="None"))
    assert graphs_off(given(cuda_graph_config="null"))
    assert not graphs_off(given(cuda_graph_config="{}"))
    assert not graphs_off(given())
    with pytest.raises(InputError):
        graphs_off(given(cuda_graph_config="yes"))


def test_the_ctx_workers_yaml_is_read_and_named(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The T1 ctx worker's YAML line `cuda_graph_config: null`: the plan says graphs are off and what it leaves
    unmodelled; a dense model's figure does not move (the graph pools in the read rest are not subtracted)."""
    options = tmp_path / "ctx.yaml"
    options.write_text("cuda_graph_config: null\n")
    with_graphs = _plan(capsys)
    without = _plan(capsys, "--extra_llm_api_options", str(options))
    notes = " ".join(str(note) for note in without["notes"])  # type: ignore[attr-defined]
    assert "CUDA graphs off" in notes and "not modelled" in notes
    assert "CUDA graphs off" not in " ".join(str(note) for note in with_graphs["notes"])  # type: ignore[attr-defined]
    assert with_graphs["token_capacity"] == without["token_capacity"]


def test_an_mla_start_without_graphs_holds_only_the_eager_workspace() -> None:
    """DeepSeek-R1 at TP 4 with graphs off: the logged eager workspace 470,115,328 B less the 41,960,448 B the read
    rest holds = 428,154,880 B (with graphs, 808,263,680: the graph one's logged 380,108,800 B more)."""
    raw = dict(TRTLLM[TP4_EP4].raw)
    on = held_in_torch(resolve(raw).inputs())
    # the record's `cuda_graph_config.max_batch_size 4` goes with graphs off: a null section holds no keys
    at = raw["flags"].index("--cuda_graph_config.max_batch_size")
    raw["flags"] = [*raw["flags"][:at], *raw["flags"][at + 2 :], "--cuda_graph_config", "null"]
    off = held_in_torch(resolve(raw).inputs())
    assert on is not None and off is not None
    assert off[0] == 470_115_328 - READ_REST_WORKSPACE_BYTES == 428_154_880
    assert on[0] - off[0] == 380_108_800
    assert "cuda_graph_config: null" in off[1]


def test_the_interval_claims_no_graphs_when_they_are_off(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The profiled rest's term said 'CUDA graphs, workspaces, NCCL' beside the note 'CUDA graphs off': with graphs
    off its label names none; the figure and the interval do not move (words only)."""
    options = tmp_path / "ctx.yaml"
    options.write_text("cuda_graph_config: null\n")
    on, off = _plan(capsys), _plan(capsys, "--extra_llm_api_options", str(options))
    said_on, said_off = json.dumps(on), json.dumps(off)
    assert "the profiling run's CUDA graphs, workspaces, NCCL" in said_on
    assert "the profiling run's CUDA graphs" not in said_off and "the profiling run's workspaces, NCCL (no CUDA graphs)" in said_off
    assert (on["token_capacity_min"], on["token_capacity_max"]) == (off["token_capacity_min"], off["token_capacity_max"])


def test_a_bad_value_in_the_yaml_names_the_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """As the YAML's other keys are (flags.settings_with_options): 'cuda_graph_config: … (in FILE)'."""
    options = tmp_path / "ctx.yaml"
    options.write_text("cuda_graph_config: sometimes\n")
    assert main(["plan", "--no-calibration-store", "--model", str(QWEN3_4B), "--engine", "trtllm", "--engine-version",
                 "1.2.1", "--gpu", "L4", "--", *FLAGS, "--extra_llm_api_options", str(options)]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert "cuda_graph_config: expected null (CUDA graphs off) or {} (the default graphs), got 'sometimes'" in err
    assert f"(in {options})" in err
