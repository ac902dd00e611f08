"""`VLLM_ATTENTION_BACKEND` outside V1's list runs V0 in v0.8.0-v0.10.2, and V0's 256 default seqs under any V0 start.

Expected values from the PyPI wheels' engine/arg_utils.py (`_is_v1_supported_oracle`): v0.8.0 :1566-1575
`V1_BACKENDS = ["FLASH_ATTN_VLLM_V1", "FLASH_ATTN", "PALLAS", "PALLAS_VLLM_V1", "TRITON_MLA", "FLASHMLA"]` ("No
FlashInfer or XFormers so far"); v0.10.1.1 :1456-1477 adds FLASHINFER, XFORMERS_VLLM_V1 and TRITON_ATTN_VLLM_V1
among others; v0.10.2 :1502-1526 adds FLASHINFER_MLA; the value compared as os.getenv returns it (envs.py). A
name outside the list: `_raise_or_fallback` ('… is not supported by the V1 Engine. Falling back to V0'), or under
VLLM_USE_V1=1 NotImplementedError. V0's max_num_seqs: `_set_default_args_v0` 'Set max_num_seqs to 256 for VLLM_V0'
(v0.10.2 :1611-1613); V1's on an H100: 1024.
"""

from __future__ import annotations

import pytest

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.batching import default_batch_limits, default_max_num_seqs, engine_era
from kvtop.domain.engines.vllm.profile_run import batch_limits
from kvtop.domain.engines.vllm.v0_backends import backend_runs_v0, check_backend_env
from kvtop.domain.engines.vllm.v0_charge import falls_back_to_v0
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.gpus import compute_capability, gpu_total_bytes
from kvtop.domain.launch_check import launch_refusals
from kvtop.domain.launch_line import parse_launch_command
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.ledger import predict
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS

H100 = gpu_total_bytes("H100")
LLAMA_8B = str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")


def _env(name: str) -> dict[str, object]:
    return {"VLLM_ATTENTION_BACKEND": name}


@pytest.mark.parametrize(("version", "name", "v0"), [
    ("0.8.0", "XFORMERS", True), ("0.8.0", "FLASHINFER", True), ("0.8.0", "FLASH_ATTN", False),
    ("0.8.0", "flash_attn", True),  # compared as written: no case folding
    ("0.10.1.1", "FLASHINFER", False), ("0.10.1.1", "XFORMERS", True), ("0.10.1.1", "FLASHINFER_MLA", True),
    ("0.10.2", "FLASHINFER_MLA", False), ("0.10.2", "XFORMERS", True), ("0.10.2", "TRITON_ATTN_VLLM_V1", False),
    ("0.9.2", "XFORMERS", True), ("0.9.2", "FLASH_ATTN", False),  # outside every list read / in every one
    ("0.11.0", "XFORMERS", False), ("0.7.3", "XFORMERS", False),  # no V0 / V0 the release's own: no oracle
])  # fmt: skip
def test_the_oracle_s_backend_list_by_release(version: str, name: str, v0: bool) -> None:
    assert backend_runs_v0(ResolvedVersion(text=version), _env(name)) is v0
    assert falls_back_to_v0(ResolvedVersion(text=version), compute_capability("H100"), _env(name)) is v0


def test_a_name_the_unread_releases_may_hold_is_not_modelled() -> None:
    """FLASHINFER: not V1's at v0.8.0, V1's at v0.10.1.1; the releases between were not read."""
    with pytest.raises(UnsupportedModelError, match="VLLM_ATTENTION_BACKEND=FLASHINFER"):
        check_backend_env(ResolvedVersion(text="0.9.2"), _env("FLASHINFER"))
    check_backend_env(ResolvedVersion(text="0.10.1.1"), _env("FLASHINFER"))


def test_read_from_the_launch_line_it_turns_the_start_to_v0_and_its_default_seqs_to_256() -> None:
    off = parse_launch_command("VLLM_ATTENTION_BACKEND=XFORMERS vllm serve facebook/opt-125m")
    assert off is not None and off.flags.get("VLLM_ATTENTION_BACKEND") == "XFORMERS"
    version = ResolvedVersion(text="0.10.1.1")
    assert engine_era(version, "H100", off.flags) == "v0"
    assert default_max_num_seqs(H100, "H100", version, off.flags)[0] == 256
    assert default_max_num_seqs(H100, "H100", version)[0] == 1024  # V1's on a GPU of >= 70 GiB, not an A100


def test_vllm_use_v1_0_gives_the_budget_and_the_profile_v0_s_256_seqs() -> None:
    """One engine era for both: the budget's max running requests (`default_batch_limits`) and the profile's batch."""
    off = parse_launch_command("VLLM_USE_V1=0 vllm serve facebook/opt-125m --engine-version 0.9.2")
    assert off is not None
    version = ResolvedVersion(text="0.9.2")
    assert default_batch_limits(H100, "H100", version, flags=off.flags)[1] == 256
    assert default_batch_limits(H100, "H100", version)[1] == 1024
    inputs = CalibrationInputs(
        model=None, settings=off, layout=ParallelLayout(), gpu_name="H100", gpu_total_bytes=H100, version=version,
        weights_bytes=0, context_length=4096,
    )  # fmt: skip
    assert batch_limits(inputs)[1] == 256


def test_vllm_use_v1_1_with_a_backend_v1_does_not_take_is_refused() -> None:
    def fields(line: str) -> list[str]:
        settings = parse_launch_command(f"{line} vllm serve {LLAMA_8B} --engine-version 0.10.1.1")
        assert settings is not None
        ledger = predict(load_model(LLAMA_8B), settings, gpu_total_bytes=H100, gpu_name="H100")
        return [refusal.field for refusal in launch_refusals(ledger)]

    assert "VLLM_ATTENTION_BACKEND" in fields("VLLM_USE_V1=1 VLLM_ATTENTION_BACKEND=XFORMERS")
    assert "VLLM_ATTENTION_BACKEND" not in fields("VLLM_USE_V1=1 VLLM_ATTENTION_BACKEND=FLASHINFER")
    assert "VLLM_ATTENTION_BACKEND" not in fields("VLLM_ATTENTION_BACKEND=XFORMERS")  # falls back to V0 and starts


def test_the_t4_start_of_0_10_2_with_a_v1_backend_reads_v1() -> None:
    """kyaushev/ecg_classifier (a03f282): `VLLM_ATTENTION_BACKEND=TRITON_ATTN_VLLM_V1 … api_server`, 'Initializing a V1
    LLM engine (v0.10.2)': the name is in v0.10.2's V1_BACKENDS, so the record reads V1."""
    from benchmarks.calibration.corpus import load_all

    (record,) = [r for r in load_all()["vllm"] if r.id == "kyaushev-ecg-phi-4-mini-colab-t4-v0102"]
    assert record.settings.flags.get("VLLM_ATTENTION_BACKEND") == "TRITON_ATTN_VLLM_V1"
    assert engine_era(ResolvedVersion(text="0.10.2"), "T4", record.settings.flags) == "v1"
