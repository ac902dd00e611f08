"""Sequence parallelism and vLLM's runner pick, read with the GPU (kvtop/domain/engines/vllm/runner_refusals.py
`_sequence_parallel`, runner_eras.py `_release_runs_v2` / `logged_runner_note`; final reader FR1's M2 / M3).

Expected outcomes are vLLM's code, read in the wheels:
- compilation/passes/fusion/sequence_parallelism.py get_sequence_parallelism_threshold (v0.29.0 :40-43, :83-99):
  `SP_MIN_HIDDEN_SIZE = {90: 8192, 100: 8192}`, the Blackwell family collapsed into 100
  (`is_device_capability_family(100)`), any other CUDA capability returns None; config/vllm.py __post_init__ turns
  enable_sp off where the threshold is None and sp_min_token_num unstated (:1491-1512 at v0.29.0); the V2 list
  names "sequence parallelism" while enable_sp stays on at TP > 1 (:3059-3063 at v0.31.0). So Llama-3.1-70B (hidden
  8,192) at TP 4 with enable_sp keeps SP, hence V1, on an H100 (sm90) or B200 / B300 (sm100 / sm103), and runs V2 on
  an L40S (sm89) or RTX PRO 6000 (sm120).
- v0.22.0's use_v2_model_runner asks the class first (config/vllm.py :498-499, before the unsupported features
  :507-515): DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES = {"Qwen3ForCausalLM"} (:69), without experts or a checkpoint
  quantization (:518-533), so RedHatAI's FP8 LlamaForCausalLM runs V1 whatever its launch asks of V2 — its sequence
  parallelism is never read. v0.30.0 asks no class (use_v2_model_runner goes from the variable to the unsupported
  features), so there the GPU decides.
"""

from __future__ import annotations

import pytest

from kvtop.cli import main
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.runner_eras import logged_runner_note, runs_v2
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.launch import LaunchSettings, parse_flags
from kvtop.sources.hub import load_model
from tests.data_paths import DATA

LLAMA_70B_FP8 = load_model(str(DATA / "calibration" / "configs" / "RedHatAI--Meta-Llama-3.1-70B-Instruct-FP8.RECONSTRUCTED.json"))
SP = ("--compilation-config", '{"pass_config": {"enable_sp": true}}')


def _launch(release: str, tp: int, gpu: str | None) -> LaunchSettings:
    settings = parse_flags("vllm", [*SP, "--tensor-parallel-size", str(tp), "--engine-version", release])
    return settings.model_copy(update={"gpu_name": gpu})


def test_a_class_the_release_keeps_on_v1_is_not_asked_about_sequence_parallelism() -> None:
    assert LLAMA_70B_FP8.hidden_size == 8192 and LLAMA_70B_FP8.quant.method == "fp8"
    assert runs_v2(ResolvedVersion(text="0.22.0"), LLAMA_70B_FP8, _launch("0.22.0", 2, None)) is False


@pytest.mark.parametrize(("gpu", "v2"), [("H100", False), ("B200", False), ("B300", False), ("L40S", True),
                                         ("RTX PRO 6000", True)])  # fmt: skip
def test_the_gpu_decides_sequence_parallelism_at_hidden_8192(gpu: str, v2: bool) -> None:
    assert runs_v2(ResolvedVersion(text="0.30.0"), LLAMA_70B_FP8, _launch("0.30.0", 4, gpu)) is v2


def test_no_gpu_named_is_refused_by_name() -> None:
    with pytest.raises(UnsupportedModelError, match="sm90 / sm10x") as err:
        runs_v2(ResolvedVersion(text="0.30.0"), LLAMA_70B_FP8, _launch("0.30.0", 4, None))
    assert err.value.field == "--compilation-config"


def test_a_logged_runner_beside_a_pick_kvtop_cannot_make_says_not_modelled_not_refused() -> None:
    settings = _launch("0.30.0", 4, None).model_copy(update={"logged_runner": "v1"})
    note = logged_runner_note(ResolvedVersion(text="0.30.0"), LLAMA_70B_FP8, settings)
    assert note is not None and "(refused)" not in note
    assert "own pick for this launch is not modelled: sequence parallelism at hidden size 8,192" in note
    known = logged_runner_note(ResolvedVersion(text="0.30.0"), LLAMA_70B_FP8, settings.model_copy(update={"gpu_name": "H100"}))
    assert known is not None and known.endswith(", as vLLM 0.30.0 picks for this launch")


def test_plan_reads_the_named_gpu_for_the_runner(capsys: pytest.CaptureFixture[str]) -> None:
    """The plan's ledger carries --gpu into the launch (`LaunchSettings.gpu_name`, set by `ledger.predict`): an H100
    keeps SP on V1, planned, where kvtop had refused it as if no GPU were named."""
    launch = "vllm serve X -tp 4 --compilation-config '{\"pass_config\": {\"enable_sp\": true}}'"
    args = ["plan", "--model", str(DATA / "calibration" / "configs" / "RedHatAI--Meta-Llama-3.1-70B-Instruct-FP8.RECONSTRUCTED.json"),
            "--engine", "vllm", "--engine-version", "0.30.0", "--gpu", "H100", "--cmd", launch, "--json"]  # fmt: skip
    assert main(args) == 0
    assert "sequence parallelism" not in capsys.readouterr().err
