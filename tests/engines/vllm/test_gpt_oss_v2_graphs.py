"""gpt-oss's CUDA graphs on vLLM's V2 model runner (v0.29.0 on): named as not modelled, never a silent figure.

V2's `profile_cudagraph_memory` (v1/worker/gpu/cudagraph_utils.py:718-801 in the v0.29.0 wheel) measures every
PIECEWISE graph's capture in full, where kvtop's V2 form counts them as one capture; on the V1 runner gpt-oss's capture
ran far above vLLM's two-sample estimate. The figures the note prints are its source's own: chiatzen's gpt-oss-20b
start at v0.26.0 (V1) logged 'Estimated CUDA graph memory: 0.82 GiB total' and 'Graph capturing finished in 12 secs,
took 1.52 GiB' (the corpus record below).
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.gpt_oss_graphs import V1_CAPTURED, V1_ESTIMATED, gpt_oss_v2_graphs_not_modelled
from kvtop.domain.launch import parse_flags
from kvtop.domain.model_config import model_from_config
from tests.data_paths import CONFIGS, DATA

GPT_OSS_20B = CONFIGS / "openai--gpt-oss-20b.json"
MODEL = model_from_config(json.loads(GPT_OSS_20B.read_text()), source="gpt-oss-20b")
QWEN3_8B = model_from_config(json.loads((CONFIGS / "Qwen--Qwen3-8B.json").read_text()), source="Qwen3-8B")
CHIATZEN = "chiatzen-gpt-oss-20b-h100pcie-v0260-nospec-u085-mml65536"


def said(model: object, release: str, *flags: str) -> str | None:
    settings = parse_flags("vllm", ["--engine-version", release, *flags])
    return gpt_oss_v2_graphs_not_modelled(model, settings, ResolvedVersion(text=release))  # type: ignore[arg-type]


def test_the_note_s_figures_are_the_v0_26_log_s() -> None:
    """The estimate and the capture the note quotes are those chiatzen's log printed (its corpus record)."""
    records = [json.loads(line) for line in (DATA / "calibration" / "vllm.jsonl").read_text().splitlines()]
    logged = next(r for r in records if r["id"] == CHIATZEN)["logged"]
    assert (float(logged["cuda_graph_estimate"]), float(logged["cuda_graphs"])) == (V1_ESTIMATED, V1_CAPTURED)


def test_named_where_gpt_oss_runs_v2_with_graphs() -> None:
    """akamaslabs study 10's compiled L4 launch at v0.29.0 (-O2: FULL_AND_PIECEWISE), a launch stating no mode and -O1
    (PIECEWISE): each captures PIECEWISE graphs."""
    for flags in (("--optimization-level", "2", "--max-num-seqs", "256"), (), ("-O1",)):
        note = said(MODEL, "0.29.0", *flags)
        assert note is not None and "V2 model runner" in note and "1.52 GiB against vLLM's two-sample estimate of 0.82" in note, flags


@pytest.mark.parametrize(
    ("model", "release", "flags"),
    [
        (MODEL, "0.29.0", ("--enforce-eager",)),  # the eager DP-4 start's launch: no graphs
        (MODEL, "0.29.0", ("--optimization-level", "0")),  # -O0: cudagraph_mode NONE
        # FULL graphs only: V2 extrapolates them from two samples (cudagraph_utils.py:823-831 at v0.29.0)
        (MODEL, "0.29.0", ("--compilation-config", '{"cudagraph_mode": "FULL_DECODE_ONLY"}')),
        (MODEL, "0.34.0", ("-cc.cudagraph_mode=FULL",)),
        (MODEL, "0.26.0", ()),  # gpt-oss (MoE, no listed class) ran on the V1 runner before v0.29.0
        (QWEN3_8B, "0.29.0", ()),  # another class: its V2 graphs are the graph term's own note
    ],
)
def test_silent_elsewhere(model: object, release: str, flags: tuple[str, ...]) -> None:
    assert said(model, release, *flags) is None


def test_plan_json_lists_it(capsys: pytest.CaptureFixture[str]) -> None:
    """`plan --json` carries the line in its not_modelled list (the one list plan, explain and the planner read)."""
    args = ["plan", "--no-calibration-store", "--json", "--model", str(GPT_OSS_20B), "--engine", "vllm", "--gpu", "L4",
            "--engine-version", "0.29.0", "--max-model-len", "32768", "--gpu-memory-utilization", "0.85"]  # fmt: skip
    assert main(args) == 0
    listed = json.loads(capsys.readouterr().out)["not_modelled"]
    assert any(line.startswith("gpt-oss's CUDA graphs on vLLM 0.29.0's V2 model runner") for line in listed)
