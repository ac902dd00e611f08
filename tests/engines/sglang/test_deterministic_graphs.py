"""`--enable-deterministic-inference` and SGLang's prefill-graph reserve, by release (prefill_graphs_off.py).

The real start: chiatzenw-cur/lossy-spec-decode-repetition's deterministic round (tests/data/calibration/sglang.jsonl
`chiatzen-gpt-oss-20b-h100pcie-sglang-v0510post1-deterministic`): gpt-oss-20b on one H100 PCIe (81,559 MiB), SGLang
0.5.10.post1, its server_info 'mem_fraction_static': 0.835 and 'disable_piecewise_cuda_graph': True, where the same
launch without the flag printed 0.83 (`…-auto`). The code: 0.5.10.post1 server_args.py:1125-1127 ("13. Deterministic
inference": piecewise graphs off) runs before the reserve (:1305, `if not self.disable_piecewise_cuda_graph`), which
then lacks their 8 MiB a captured size. tc_piecewise's switch-offs read it too (0.5.14 server_args.py:3038-3040 …
0.5.21 arg_groups/cuda_graph_hook.py:239-240); the breakable backend's (the CUDA default from 0.5.15: 0.5.15
server_args.py:3350-3375, 0.5.23 arg_groups/cuda_graph_hook.py) never do, so 0.5.19 keeps its reserve.
"""

from __future__ import annotations

import pytest

from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.sources.hub import load_config_file
from tests.data_paths import CONFIGS

GPT_OSS_20B = CONFIGS / "openai--gpt-oss-20b.json"


def _fraction(version: str, *flags: str) -> tuple[float, str]:
    settings = parse_flags("sglang", list(flags)).model_copy(update={"engine_version": version})
    ledger = predict(load_config_file(GPT_OSS_20B), settings, gpu_total_bytes=gpu_total_bytes("H100-PCIE"),
                     gpu_name="H100-PCIE")  # fmt: skip
    return ledger.engine.memory_fraction, ledger.engine.memory_fraction_source


def test_deterministic_mode_drops_the_prefill_graphs_reserve_at_0_5_10_post1() -> None:
    fraction, source = _fraction("0.5.10.post1", "--enable-deterministic-inference")
    assert round(fraction, 3) == 0.835  # the start's server_info
    assert "off for deterministic inference" in source
    assert round(_fraction("0.5.10.post1")[0], 3) == 0.83  # the same launch without it (its own server_info)


def test_the_breakable_default_keeps_its_reserve_in_deterministic_mode() -> None:
    assert _fraction("0.5.19", "--enable-deterministic-inference") == _fraction("0.5.19")


@pytest.mark.parametrize("version", ["0.5.11", "0.5.13", "0.5.14"])
def test_piecewise_and_tc_piecewise_releases_switch_off(version: str) -> None:
    assert "off for deterministic inference" in _fraction(version, "--enable-deterministic-inference")[1]


@pytest.mark.parametrize("gpu", ["B200", "RTX5090"])
def test_blackwell_without_a_named_backend_is_refused(gpu: str) -> None:
    """SM 10.x / 12.x: the deterministic fallback to flashinfer (0.5.10.post1 server_args.py:3462-3476) is not followed."""
    settings = parse_flags("sglang", ["--enable-deterministic-inference"]).model_copy(
        update={"engine_version": "0.5.10.post1"})
    with pytest.raises(UnsupportedModelError, match="--attention-backend"):
        predict(load_config_file(GPT_OSS_20B), settings, gpu_total_bytes=gpu_total_bytes(gpu), gpu_name=gpu)


def test_blackwell_with_a_named_backend_plans() -> None:
    settings = parse_flags("sglang", ["--enable-deterministic-inference", "--attention-backend", "triton"]).model_copy(
        update={"engine_version": "0.5.10.post1"})
    ledger = predict(load_config_file(GPT_OSS_20B), settings, gpu_total_bytes=gpu_total_bytes("B200"), gpu_name="B200")
    assert ledger.token_capacity > 0
    assert "off for deterministic inference" in ledger.engine.memory_fraction_source  # :1125-1127 reads no GPU


@pytest.mark.parametrize(("version", "backend"), [("0.5.10.post1", "torch_native"), ("0.5.14", "fa4")])
def test_a_named_backend_deterministic_mode_does_not_take_is_refused(version: str, backend: str) -> None:
    """DETERMINISTIC_ATTENTION_BACKEND_CHOICES: flashinfer / fa3 / triton at 0.5.10.post1 (server_args.py:159), with
    ascend at 0.5.14 (:209); any other named backend is SGLang's ValueError (0.5.10.post1 :3478-3482)."""
    flags = ["--attention-backend", backend]
    settings = parse_flags("sglang", [*flags, "--enable-deterministic-inference"]).model_copy(
        update={"engine_version": version})
    with pytest.raises(InputError, match="deterministic-inference with --attention-backend fa3 / flashinfer / triton"):
        predict(load_config_file(GPT_OSS_20B), settings, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100")
