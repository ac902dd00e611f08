"""vLLM's V2 model runner under WSL2 needs pinned memory, which WSL turns off (wsl2_pinned.py, docs/engines/vllm.md §21).

Expected values from vLLM's code and its users' reports, not from kvtop: a V2 start under WSL fails at its worker's init
with 'RuntimeError: UVA is not available' (v1/worker/gpu/buffer_utils.py:39 at v0.22.0, :46-47 at v0.24.0 – v0.29.0;
vllm#43381 'vllm serve Qwen/Qwen3-0.6B' on WSL2, #47387 at v0.24.0, #47292 'It works fine with Qwen3.5-4B, but Qwen3-4B
fails', #54652 at v0.28.1rc1); from v0.24.0 `VLLM_WSL2_ENABLE_PIN_MEMORY=1` lets it start (#47292: 'lets the V2 model
runner initialize and run inference successfully'); from v0.30.0 V2 starts without it and keeps its token ids on the GPU,
max_num_seqs × max_model_len int32 (states.py:34-39), four times that for an M-RoPE model (mm/rope.py:46-51). The corpus's
WSL2 starts all came up, so none of them is a plan that says it fails.
"""

from __future__ import annotations

import json

import pytest

from benchmarks.calibration.corpus import Record
from kvtop.cli import main
from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.gpus import gpu_key
from tests.calibration_fits import CORPUS
from tests.conftest import CONFIGS

CALIBRATION_CONFIGS = CONFIGS.parent / "calibration" / "configs"
QWEN3_8B = CONFIGS / "Qwen--Qwen3-8B.json"  # Qwen3ForCausalLM: V2's listed class from v0.22.0 (runner_eras.py)
UVA = "'RuntimeError: UVA is not available'"


Capsys = pytest.CaptureFixture[str]


def _notes(capsys: Capsys, model: str, version: str, *flags: str, wsl2: bool = True) -> list[str]:
    """The pinned-memory notes of `kvtop plan --json` for the launch on an RTX 4090 (under WSL2 unless `wsl2` is False)."""
    args = ["plan", "--no-calibration-store", "--model", model, "--engine", "vllm", "--engine-version", version,
            "--gpu", "RTX4090", *(["--wsl2"] if wsl2 else []), "--json", "--", *flags]  # fmt: skip
    assert main(args) == 0
    return [note for note in json.loads(capsys.readouterr().out)["notes"] if "pinned memory" in note]


@pytest.mark.parametrize("version", ["0.22.0", "0.23.0"])
def test_before_0_24_a_v2_start_under_wsl2_fails_at_init(capsys: Capsys, version: str) -> None:
    (note,) = _notes(capsys, str(QWEN3_8B), version, "--max-model-len", "4096")
    assert UVA in note and "VLLM_USE_V2_MODEL_RUNNER=0" in note and "VLLM_WSL2_ENABLE_PIN_MEMORY" not in note


@pytest.mark.parametrize("version", ["0.24.0", "0.27.1", "0.29.0"])
def test_from_0_24_it_starts_only_with_pinned_memory_opted_in(capsys: Capsys, version: str) -> None:
    (note,) = _notes(capsys, str(QWEN3_8B), version, "--max-model-len", "4096")
    assert UVA in note and "VLLM_WSL2_ENABLE_PIN_MEMORY=1" in note


def test_from_0_30_it_starts_and_keeps_its_token_ids_on_the_gpu(capsys: Capsys) -> None:
    (note,) = _notes(capsys, str(QWEN3_8B), "0.30.0", "--max-model-len", "4096", "--max-num-seqs", "64")
    assert UVA not in note
    assert "(1.0 MiB: 64 seqs × 4,096 tokens × 4 B)" in note  # 64 × 4,096 × 4 B = 1,048,576 B
    (note,) = _notes(capsys, str(QWEN3_8B), "0.30.0", "--max-model-len", "32768", "--max-num-seqs", "1024")
    assert "(128.0 MiB: 1,024 seqs × 32,768 tokens × 4 B)" in note  # 1,024 × 32,768 × 4 B = 134,217,728 B


def test_an_m_rope_model_keeps_its_prefill_positions_there_too(capsys: Capsys) -> None:
    """Qwen2-VL's three M-RoPE rows beside the token ids: 64 × 4 × 4,096 × 4 B = 4 MiB."""
    qwen2_vl = CALIBRATION_CONFIGS / "Qwen--Qwen2-VL-7B-Instruct.RECONSTRUCTED.json"
    (note,) = _notes(capsys, str(qwen2_vl), "0.30.0", "--max-model-len", "4096", "--max-num-seqs", "64")
    assert "(4.0 MiB: 64 seqs × 4 rows (M-RoPE) × 4,096 tokens × 4 B)" in note


def test_linux_and_the_v1_runner_say_nothing(capsys: Capsys) -> None:
    assert _notes(capsys, str(QWEN3_8B), "0.27.1", "--max-model-len", "4096", wsl2=False) == []
    # Qwen2ForCausalLM is no listed class at v0.23.0: V1, which reads no UVA buffer (the RTX 4080 Laptop ladder started)
    qwen25 = CALIBRATION_CONFIGS / "Qwen--Qwen2.5-1.5B-Instruct.RECONSTRUCTED.json"
    assert _notes(capsys, str(qwen25), "0.23.0", "--max-model-len", "4096") == []
    assert _notes(capsys, str(QWEN3_8B), "0.21.0", "--max-model-len", "4096") == []  # no V2 default before v0.22.0


WSL2_STARTS = [record for record in CORPUS["vllm"] if record.wsl2 and record.model is not None]


@pytest.mark.parametrize("record", WSL2_STARTS, ids=[record.id for record in WSL2_STARTS])
def test_no_wsl2_start_of_the_corpus_is_planned_to_fail(record: Record) -> None:
    """Every WSL2 start of the corpus printed its KV cache: none is a V2 start before v0.24.0 (the RTX 5070 Ti's Qwen3
    FP8 / NVFP4 at v0.23.0 are quantized, which kept the listed class on V1 then)."""
    assert record.gpu_total_bytes is not None
    plan = planned_capacity(record.model, record.settings, gpu_total_bytes=record.gpu_total_bytes,
                            gpu_name=gpu_key(record.gpu), measured=record.host_measured())  # fmt: skip
    assert not any(UVA in note and "VLLM_USE_V2_MODEL_RUNNER=0" in note for note in plan.ledger.engine.notes)


def _cmd_notes(capsys: Capsys, version: str, cmd: str) -> list[str]:
    """The pinned-memory notes of `kvtop plan --wsl2 --cmd …` on an RTX 4090 (the launch line read as typed)."""
    args = ["plan", "--no-calibration-store", "--engine-version", version, "--gpu", "RTX4090", "--wsl2", "--json",
            "--cmd", cmd]  # fmt: skip
    assert main(args) == 0
    return [note for note in json.loads(capsys.readouterr().out)["notes"] if "pinned memory" in note]


def test_a_launch_line_that_sets_the_variable_is_read(capsys: Capsys) -> None:
    """envs.py:1979-1981 at v0.27.1 reads `bool(int(os.getenv("VLLM_WSL2_ENABLE_PIN_MEMORY", "0")))` and
    platforms/cuda.py:286-304 returns it under WSL2 (#47292: '=1 lets the V2 model runner initialize'): a leading
    `=1` starts an opt-in release, `=0` fails it; from v0.30.0 `=1` keeps the request tables in host memory."""
    serve = f"vllm serve {QWEN3_8B} --max-model-len 4096 --max-num-seqs 64"
    (note,) = _cmd_notes(capsys, "0.27.1", f"VLLM_WSL2_ENABLE_PIN_MEMORY=1 {serve}")
    assert UVA not in note and "so it starts" in note
    (note,) = _cmd_notes(capsys, "0.27.1", f"VLLM_WSL2_ENABLE_PIN_MEMORY=0 {serve}")
    assert UVA in note and "=0 in the launch" in note
    (note,) = _cmd_notes(capsys, "0.30.0", f"VLLM_WSL2_ENABLE_PIN_MEMORY=1 {serve}")
    assert "host memory" in note and "MiB" not in note
    (note,) = _cmd_notes(capsys, "0.30.0", f"VLLM_WSL2_ENABLE_PIN_MEMORY=0 {serve}")
    assert "(1.0 MiB: 64 seqs × 4,096 tokens × 4 B)" in note and "=0 in the launch" in note


def test_before_0_24_the_variable_changes_nothing(capsys: Capsys) -> None:
    """v0.23.0's platforms/interface.py:752-762 turns pinned memory off under WSL whatever the environment says."""
    (note,) = _cmd_notes(capsys, "0.23.0", f"VLLM_WSL2_ENABLE_PIN_MEMORY=1 vllm serve {QWEN3_8B} --max-model-len 4096")
    assert UVA in note
