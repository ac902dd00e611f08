"""vLLM's oracle line "Using 'MARLIN' Mxfp4 MoE backend." read as the measured MXFP4 backend (log_facts.py,
mxfp4_backend.py PRINTED_LAYOUTS), and a printed backend kvtop does not build said not modelled.

Independent sources: the engine's own log lines. GloriaXimingLu/inferencex-profiling
`nebius/results/gptoss_tp1_c64_1k1k.log` (commit 72294ff1d083b9fea23874f6b52f59b11b31ef97; the corpus record
gloriaximinglu-inferencex-gpt-oss-120b-h200-v0220-mml2068): gpt-oss-120b on an H200 at v0.22.0, its script exporting
VLLM_MXFP4_USE_MARLIN=1, printed "[mxfp4.py:381] Using 'MARLIN' Mxfp4 MoE backend." and 'Model loading took 66.14 GiB'.
Search-index file 69645388243 quotes v0.26's oracle for gpt-oss on SM100: "Using 'FLASHINFER_TRTLLM_MXFP4_BF16' Mxfp4
MoE backend.". The wheels' f-strings give the other spellings: v0.20.2 … v0.33.0 `_make_log_backend` (quoted), v0.34.0
oracle/base.py:153-166 `make_log_backend` (unquoted, "LoRA ", " out of potential backends: […]"), v0.20.2
oracle/mxfp4.py:267-271 "Using Marlin backend for mxfp4 lora".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.cli import main
from kvtop.commands.explain import _decisions, settings_typed_for_log
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm import calibration as vllm
from kvtop.domain.engines.vllm.mxfp4_backend import MARLIN_ENV, MEASURED_KEY, mxfp4_backend
from kvtop.domain.engines.vllm.mxfp4_unmodelled import mxfp4_not_modelled
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.sources.engine_logs import parse_engine_log
from kvtop.units import GIB
from tests.data_paths import DATA
from tests.engines.vllm.test_mxfp4_backend import inputs_of

GPT_OSS = DATA.parent.parent / "examples" / "models" / "gpt-oss-120b.json"
INFERENCEX = "gloriaximinglu-inferencex-gpt-oss-120b-h200-v0220-mml2068"
# the InferenceX start's own lines (the banner says 'version 0.22.0')
IX_LOG = """\
(APIServer pid=68) INFO 06-05 05:38:04 [utils.py:278] non-default args: {'model_tag': 'openai/gpt-oss-120b', \
'host': '0.0.0.0', 'port': 8888, 'model': 'openai/gpt-oss-120b', 'max_model_len': 2068, 'gpu_memory_utilization': 0.9, \
'enable_prefix_caching': False, 'max_num_batched_tokens': 8192, 'max_num_seqs': 64, 'max_cudagraph_capture_size': 2048}
(EngineCore pid=231) INFO 06-05 05:38:51 [mxfp4.py:381] Using 'MARLIN' Mxfp4 MoE backend.
(EngineCore pid=231) INFO 06-05 05:39:47 [gpu_model_runner.py:5132] Model loading took 66.14 GiB memory and 54.893629 seconds
(EngineCore pid=231) INFO 06-05 05:40:27 [gpu_model_runner.py:6365] Estimated CUDA graph memory: 1.05 GiB total
(EngineCore pid=231) INFO 06-05 05:40:27 [gpu_worker.py:466] Available KV cache memory: 57.22 GiB
(EngineCore pid=231) INFO 06-05 05:40:27 [kv_cache_utils.py:1733] GPU KV cache size: 825,377 tokens
(EngineCore pid=231) INFO 06-05 05:40:27 [kv_cache_utils.py:1734] Maximum concurrency for 2,068 tokens per request: 399.12x
"""
V0220, V0260 = ResolvedVersion(text="0.22.0"), ResolvedVersion(text="0.26.0")


def _printed(line: str) -> list[str]:
    """The MXFP4 backend decisions a one-line log keeps."""
    return [d for d in parse_engine_log(line + "\n").decisions if d.startswith(MEASURED_KEY)]


def _without_env(inputs: CalibrationInputs) -> CalibrationInputs:
    """The inputs without the environment the launch set (MARLIN_ENV): the log's line alone, or the release's guess."""
    flags = {name: value for name, value in inputs.settings.flags.items() if name != MARLIN_ENV}
    return inputs.model_copy(update={"settings": inputs.settings.model_copy(update={"flags": flags})})


def test_the_oracles_line_is_the_measured_backend() -> None:
    """H200 at v0.22.0: the release's guess is Triton (the wheel vendors triton_kernels); the log printed MARLIN, so
    the backend is Marlin, measured, and the weights term is Marlin's: 65.93 GiB against the 66.14 the log printed,
    where Triton's guess is 64.38."""
    log = parse_engine_log(IX_LOG)
    assert f"{MEASURED_KEY}=marlin" in log.decisions
    settings = settings_typed_for_log(_decisions(log.decisions), "vllm", [], "openai/gpt-oss-120b")[0]
    measured = mxfp4_backend(settings, "H200", V0220)
    guessed = mxfp4_backend(settings.model_copy(update={"flags": {}}), "H200", V0220)
    assert measured is not None and (measured.name, measured.source) == ("marlin", "measured")
    assert "'MARLIN'" in measured.why
    assert guessed is not None and (guessed.name, guessed.source) == ("triton", "release")
    # the record carries its launch's VLLM_MXFP4_USE_MARLIN=1 (`env`): the release's guess is the launch without it
    weights = {name: next(t for t in vllm.terms(_without_env(inputs_of(INFERENCEX, **flags))) if t.term is Term.WEIGHTS)
               .bytes / GIB for name, flags in (("printed", {MEASURED_KEY: "marlin"}), ("guessed", {}))}  # fmt: skip
    assert abs(weights["printed"] - 66.14) < 0.25 < 1.5 < abs(weights["guessed"] - 66.14)


@pytest.mark.parametrize(("line", "kept"), [
    ("(EngineCore pid=1) INFO 06-05 05:38:51 [mxfp4.py:381] Using 'TRITON' Mxfp4 MoE backend.", "triton"),
    ("(Worker_TP0 pid=2) INFO 08-18 22:22:14 [oracle/mxfp4.py:729] Using MARLIN Mxfp4 MoE backend out of potential "
     "backends: ['FLASHINFER_TRTLLM_MXFP4_BF16', 'MARLIN'].", "marlin"),  # v0.34.0 base.py make_log_backend
    ("INFO 08-18 22:22:14 [mxfp4.py:700] Using BATCHED_MARLIN Mxfp4 MoE LoRA backend.", "batched_marlin"),
    ("INFO 08-18 22:22:14 [mxfp4.py:271] Using Marlin backend for mxfp4 lora", "marlin"),  # v0.20.2 LoRA
    ("INFO 08-18 22:22:14 [fp8.py:446] Using 'FLASHINFER_CUTLASS' Fp8 MoE backend.", None),  # another method's
    ("INFO 08-18 22:22:14 [fp8.py:1] Using Marlin backend for FP8 MoE", None),
])  # fmt: skip
def test_every_release_spelling(line: str, kept: str | None) -> None:
    assert _printed(line) == ([f"{MEASURED_KEY}={kept}"] if kept else [])


def test_batched_marlin_is_marlins_layout() -> None:
    """BATCHED_MARLIN pads and repacks as MARLIN does (v0.28.0 oracle/mxfp4.py:649, :1325)."""
    settings = settings_typed_for_log({MEASURED_KEY: "batched_marlin"}, "vllm", [], "openai/gpt-oss-120b")[0]
    backend = mxfp4_backend(settings, "H200", V0220)
    assert backend is not None and (backend.name, backend.source) == ("marlin", "measured")


def test_a_printed_backend_kvtop_does_not_build_is_said_never_guessed() -> None:
    """The SM100 line names FlashInfer's TRTLLM backend: no release's guess stands in for it, the plan says so; on
    Hopper too a printed FlashInfer backend is not replaced by the release's Triton."""
    model = model_from_config(json.loads(GPT_OSS.read_text()), source="gpt-oss-120b")
    assert _printed("Using 'FLASHINFER_TRTLLM_MXFP4_BF16' Mxfp4 MoE backend.") == [
        f"{MEASURED_KEY}=flashinfer_trtllm_mxfp4_bf16"]  # fmt: skip
    printed = {MEASURED_KEY: "flashinfer_trtllm_mxfp4_bf16"}
    settings = settings_typed_for_log(printed, "vllm", [], "openai/gpt-oss-120b")[0]
    for gpu, version, counted in (("B200", V0260, "the checkpoint's experts unpadded"),
                                  ("H200", V0220, "triton's padding")):  # fmt: skip
        assert mxfp4_backend(settings, gpu, version) is None
        said = mxfp4_not_modelled(model, ParallelLayout(tp=1), settings, gpu, version)
        assert said is not None and "'FLASHINFER_TRTLLM_MXFP4_BF16'" in said and said.endswith(counted), gpu
    # on B200: no layout built
    marlin = settings_typed_for_log({MEASURED_KEY: "marlin"}, "vllm", [], "openai/gpt-oss-120b")[0]
    said = mxfp4_not_modelled(model, ParallelLayout(tp=1), marlin, "B200", V0260)
    assert said is not None and "the log's 'MARLIN' MoE backend" in said and "FlashInfer TRTLLM or Triton" not in said


def _explain(capsys: pytest.CaptureFixture[str], log: Path, *args: str) -> str:
    assert main(["explain", str(log), "--no-calibration-store", "--model", str(GPT_OSS), *args]) == 0
    return capsys.readouterr().out


def test_explain_says_what_plan_leaves_unmodelled(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The InferenceX start without its backend line, explained on a B200 (family 100: a backend kvtop does not
    build): explain's text and JSON list what `plan --json` of the same launch lists, each once; on its H200 with the
    MARLIN line nothing."""
    log = tmp_path / "engine.log"
    log.write_text("".join(line + "\n" for line in IX_LOG.splitlines() if "Mxfp4" not in line))
    launch = ("--engine-version", "0.22.0", "--gpu", "B200")
    text = _explain(capsys, log, *launch)
    explained = json.loads(_explain(capsys, log, *launch, "--json"))
    assert main(["plan", "--no-calibration-store", "--json", "--model", str(GPT_OSS), "--engine", "vllm", *launch,
                 "--max-model-len", "2068", "--gpu-memory-utilization", "0.9", "--max-num-seqs", "64",
                 "--max-num-batched-tokens", "8192", "--no-enable-prefix-caching"]) == 0  # fmt: skip
    planned = json.loads(capsys.readouterr().out)["not_modelled"]
    assert len(planned) == 1 and planned[0].startswith("vLLM 0.22.0's MXFP4 experts on B200 (SM 10.0)")
    assert explained["not_modelled"] == planned
    assert [line for line in text.splitlines() if "not modelled:" in line] == [f"  note: not modelled: {planned[0]}"]
    log.write_text(IX_LOG)
    assert json.loads(_explain(capsys, log, "--engine-version", "0.22.0", "--gpu", "H200", "--json"))["not_modelled"] == []
