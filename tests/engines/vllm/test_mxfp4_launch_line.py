"""What a launch line can say about vLLM's MXFP4 backend on Hopper, release by release (engines/vllm/mxfp4_backend.py
MARLIN_ENV_ERAS, LORA_MARLIN_ERAS, FLASHINFER_BF16_ERAS).

Independent source: the wheels' own code. VLLM_MXFP4_USE_MARLIN is returned where set by v0.10.1's
`_should_use_marlin` (mxfp4.py:123-125); v0.10.2's and v0.11.0's wheels define it in envs.py and read it nowhere
(grepped); v0.11.1 on force Marlin with it (v0.11.2 mxfp4.py:134-142). `--enable-lora` takes
`get_mxfp4_backend_with_lora`, Marlin on CUDA at v0.11.1/v0.11.2 (:77-86). VLLM_USE_FLASHINFER_MOE_MXFP4_BF16=1 on
SM 9.0 selects FlashInfer's SM90 BF16 MoE (:95-102). No variable or flag selects Triton."""

from __future__ import annotations

import pytest

from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import from_flag
from kvtop.domain.engines.vllm.mxfp4_backend import FLASHINFER_BF16_ENV, MARLIN_ENV, mxfp4_backend
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.launch import parse_flags
from kvtop.domain.launch_line import parse_launch_command


def _backend(version: str, gpu: str = "H100", command: str = "vllm serve openai/gpt-oss-120b"):  # type: ignore[no-untyped-def]
    settings = parse_launch_command(command)
    assert settings is not None and settings.unknown_flags == ()
    return mxfp4_backend(settings, gpu, from_flag(version, engine_rules("vllm").calendar))


@pytest.mark.parametrize(("version", "source"), [
    ("0.10.1", "stated"),  # _should_use_marlin returns the variable
    ("0.10.2", "assumed"),  # read by no file: the wheel's Marlin stays an assumption, Triton the other
    ("0.11.0", "assumed"),
    ("0.11.1", "stated"),
    ("0.11.2", "stated"),
])  # fmt: skip
def test_the_marlin_variable_by_release(version: str, source: str) -> None:
    backend = _backend(version, command=f"{MARLIN_ENV}=1 vllm serve openai/gpt-oss-120b")
    assert backend is not None and (backend.name, backend.source) == ("marlin", source)
    if source == "assumed":
        assert backend.other == "triton" and "read by no file" in backend.why


@pytest.mark.parametrize(("version", "found"), [
    ("0.11.0", ("marlin", "assumed")),  # no LoRA path yet
    ("0.11.2", ("marlin", "stated")),  # get_mxfp4_backend_with_lora: Marlin on CUDA
    ("0.12.0", ("triton", "release")),  # as without LoRA: the wheel's triton_kernels
])  # fmt: skip
def test_lora_takes_marlin_at_v0_11_1_and_v0_11_2(version: str, found: tuple[str, str]) -> None:
    backend = _backend(version, command="vllm serve openai/gpt-oss-120b --enable-lora")
    assert backend is not None and (backend.name, backend.source) == found


def test_flashinfers_sm90_backend_is_said_not_modelled() -> None:
    command = f"{FLASHINFER_BF16_ENV}=1 vllm serve openai/gpt-oss-120b"
    with pytest.raises(UnsupportedModelError, match="FlashInfer's SM90 BF16 MoE"):
        _backend("0.11.2", command=command)
    ampere = _backend("0.11.2", "A100-80GB", command)  # SM 8.x: Marlin whatever the variable
    assert ampere is not None and (ampere.name, ampere.source) == ("marlin", "release")


def test_a_typed_zero_selects_nothing() -> None:
    """VLLM_MXFP4_USE_MARLIN=0 does not select Triton (v0.11.2: `envs.VLLM_MXFP4_USE_MARLIN or …`)."""
    settings = parse_flags("vllm", []).model_copy(update={"flags": {MARLIN_ENV: "0"}})
    backend = mxfp4_backend(settings, "H100", from_flag("0.11.2", engine_rules("vllm").calendar))
    assert backend is not None and (backend.name, backend.source, backend.other) == ("marlin", "assumed", "triton")
    assert "read by no file" not in backend.why  # v0.11.2 reads it (mxfp4.py:136): a 0 there is read, not ignored


def test_a_typed_zero_at_v0_10_1_takes_tritons_layout() -> None:
    """v0.10.1 mxfp4.py:123-125 `if envs.VLLM_MXFP4_USE_MARLIN is not None: return envs.VLLM_MXFP4_USE_MARLIN`,
    envs.py:924-925 `maybe_convert_bool` = bool(int("0")) = False, before the capability checks (:126-134): 0 builds
    Triton's layout (`create_weights` pads to 64 where `use_marlin` is False) on Hopper, and on SM 8.x too, whose
    Triton experts kvtop does not model (refused by the variable's name); the release without it runs Marlin."""
    zero = f"{MARLIN_ENV}=0 vllm serve openai/gpt-oss-120b"
    hopper = _backend("0.10.1", command=zero)
    assert hopper is not None and (hopper.name, hopper.source, hopper.other) == ("triton", "stated", None)
    unset = _backend("0.10.1")
    assert unset is not None and (unset.name, unset.source) == ("marlin", "release")  # torch 2.7.1 < 2.8.0 (:131-134)
    with pytest.raises(UnsupportedModelError, match="Triton's layout on SM 8.x") as refused:
        _backend("0.10.1", "A100-80GB", zero)
    assert refused.value.field == MARLIN_ENV
    ampere = _backend("0.10.1", "A100-80GB", f"{MARLIN_ENV}=1 vllm serve openai/gpt-oss-120b")
    assert ampere is not None and (ampere.name, ampere.source) == ("marlin", "stated")
    with pytest.raises(InputError) as bad:  # bool(int("false")) raises in vLLM's envs.py
        _backend("0.10.1", command=f"{MARLIN_ENV}=false vllm serve openai/gpt-oss-120b")
    assert bad.value.field == MARLIN_ENV
