"""Why SGLang's context is assumed where its fit cannot be read, said once (`TermEstimate.assumed_because`) and read
by `plan` and `explain` alike. `sglang.context` is fitted on the GPU's SM count (`sm_tp_features`), so a plan by
--gpu-memory alone (no GPU model named) or on a GPU kvtop lists no SM count for takes the stated assumption: 0.75 GiB +
0.75 GiB per doubling of TP (0.75 at TP 1, 1.50 at TP 2), and says that naming the GPU (--gpu) is the fix.

Expected values: the assumption's own arithmetic, and SGLang C13 (tests/data/cases/sglang/C13, Llama-3.1-8B on an
80 GB GPU, mem_fraction_static 0.88 stated by --mem-fraction-static): the log's `max_total_num_tokens=444500`.
"""

from __future__ import annotations

from kvtop.domain.calibration.features import ASSUMED_CONTEXT_ERROR_GIB
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.sglang.calibration import context
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.layout import ParallelLayout
from kvtop.sources.hub import load_model
from kvtop.units import GIB
from tests.cli_in_process import run_kvtop
from tests.conftest import CASES, CONFIGS

LLAMA_8B = CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"
NOT_NAMED = "the GPU model is not named, so its SM count, which sglang.context is fitted on, is unknown: pass --gpu"


def _inputs(gpu_name: str | None, tp: int = 1) -> CalibrationInputs:
    model = load_model(str(LLAMA_8B))
    return CalibrationInputs(model=model, settings=LaunchSettings(engine="sglang", tp=tp), layout=ParallelLayout(tp=tp),
                             gpu_name=gpu_name, gpu_total_bytes=80 * GIB, version=ResolvedVersion(text=None),
                             weights_bytes=15 * GIB, context_length=model.max_position_embeddings)  # fmt: skip


def test_no_gpu_named_is_assumed_for_want_of_its_sm_count() -> None:
    for tp, gib in ((1, 0.75), (2, 1.50)):
        term = context(_inputs(None, tp))
        assert term.source == "assumed" and term.bytes == round(gib * GIB)
        assert term.assumed_because == NOT_NAMED and NOT_NAMED in term.basis
        assert "too few logs" not in term.basis


def test_a_gpu_without_a_listed_sm_count_says_so() -> None:
    """The A16 is not in kvtop's SM table (`gpus.GPU_SMS`; the A40 was until session 52)."""
    term = context(_inputs("NVIDIA A16"))
    assert term.source == "assumed"
    assert term.assumed_because == "kvtop does not know the NVIDIA A16's SM count, which sglang.context is fitted on"


def test_a_named_gpu_reads_the_fit() -> None:
    term = context(_inputs("H100"))
    assert term.source == "calibrated" and term.fit_key == "sglang.context" and term.assumed_because is None


def _kvtop(*args: str) -> str:
    done = run_kvtop(*args)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_plan_says_why_the_context_is_assumed() -> None:
    blind = _kvtop("plan", "--engine", "sglang", "--gpu-memory", "80GiB", "--model", str(LLAMA_8B))
    row = next(line for line in blind.splitlines() if "CUDA context and NCCL before the weights load" in line)
    assert "0.75 GiB" in row and "assumed" in row and NOT_NAMED in row
    named = _kvtop("plan", "--engine", "sglang", "--gpu", "H100", "--model", str(LLAMA_8B))
    row = next(line for line in named.splitlines() if "CUDA context and NCCL before the weights load" in line)
    assert "calibrated" in row and "sglang.context, fitted on" in row and "not named" not in named


def test_explain_says_why_the_context_is_assumed(tmp_path) -> None:
    """C13 without its `Load weight` lines: the free memory before the load is estimated, and the logged 444,500
    tokens lie inside the estimate's interval either way."""
    excerpt = tmp_path / "c13-excerpt.log"
    text = (CASES / "sglang/C13/engine.log").read_text()
    assert "max_total_num_tokens=444500" in text
    excerpt.write_text("\n".join(line for line in text.splitlines() if "Load weight" not in line))
    common = ("explain", str(excerpt), "--model", str(LLAMA_8B), "--mem-fraction-static", "0.88")
    blind = next(line for line in _kvtop(*common, "--gpu-memory", "80GiB").splitlines() if line.startswith("verdict:"))
    # the plan's assumed context term, its basis as plan's row says it (before: explain's own "GPU total − 1 GiB
    # (0.25–2 GiB assumed: …)" fallback; now the term plan charges, 0.75 GiB at TP 1)
    assert blind.startswith("verdict: MATCH with an estimated input") and "kvtop's estimate 79.25 GiB" in blind
    error = round(ASSUMED_CONTEXT_ERROR_GIB * GIB) / GIB  # the assumption's measured error (a FITTED figure)
    assert f"0.75 ± {error:.2f} GiB (assumed: 0.75 GiB assumed at TP 1" in blind and f"{NOT_NAMED};" in blind
    named = next(line for line in _kvtop(*common, "--gpu", "H100").splitlines() if line.startswith("verdict:"))
    assert named.startswith("verdict: MATCH with an estimated input") and "sglang.context, fitted on" in named
    assert "assumed:" not in named
