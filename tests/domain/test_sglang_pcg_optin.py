"""The automatic fraction's reserve for `--enable-piecewise-cuda-graph` in SGLang 0.5.6 … 0.5.9 (prefill_graphs_optin.py).

The expected fractions are the engine's arithmetic (`_handle_gpu_memory_settings` of each wheel) and, for 0.5.6, the
fraction SGLang printed: sgl-project/sglang#11830's B200 start of Qwen2.5-VL-7B-Instruct with
`--enable-piecewise-cuda-graph` logged `mem_fraction_static=0.7629746875` = round((183,359 − 27,264) / 183,359, 3)
× 0.95 × 0.94375 (the vision tower's factor), 27,264 MiB = 512 + 1.5 × 16,384 + 2 × 512 + 1/8 × 1,024 + 4,096 // 4.
"""

from __future__ import annotations

import pytest

from kvtop.domain.errors import InputError
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import Ledger, predict
from kvtop.sources.hub import load_model
from tests.data_paths import CONFIGS

MIB = 1 << 20
ON = "--enable-piecewise-cuda-graph"
LLAMA = load_model(str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"))
QWEN25_VL = load_model(str(CONFIGS / "heldout" / "Qwen--Qwen2.5-VL-7B-Instruct.json"))
H100 = 81_559  # MiB, kvtop's H100 total (the auto fraction's gpu_mem)


def plan(version: str, *flags: str, model: object = LLAMA, gpu: str = "H100") -> Ledger:
    settings = parse_flags("sglang", ["--engine-version", version, *flags])
    return predict(model, settings, gpu_total_bytes=gpu_total_bytes(gpu), gpu_name=gpu)  # type: ignore[arg-type]


def test_0_5_6_reserves_a_quarter_of_the_max_tokens_after_the_floor() -> None:
    assert gpu_total_bytes("B200") // MIB == 183_359
    ledger = plan("0.5.6", ON, model=QWEN25_VL, gpu="B200")
    assert ledger.engine.memory_fraction == pytest.approx(0.7629746875, abs=1e-12)  # the #11830 log's figure
    without = plan("0.5.6", model=QWEN25_VL, gpu="B200")  # 26,240 MiB: round(0.85689, 3) = 0.857
    assert without.engine.memory_fraction == pytest.approx(0.857 * 0.95 * 0.94375, abs=1e-12)


def test_0_5_7_reserves_an_eighth_of_the_chunk_and_0_5_5_nothing() -> None:
    base = 512 + 1.5 * 8192 + 2 * 256 + 1 / 8 * 1024  # 13,440 MiB on an 80 GB card at TP 1
    assert plan("0.5.7", ON).engine.memory_fraction == round((H100 - base - 8192 // 8) / H100, 3)
    assert plan("0.5.5", ON).engine.memory_fraction == round((H100 - base) / H100, 3)


def test_0_5_9_reserves_8_mib_a_captured_size() -> None:
    """v0.5.9's sizes up to 8,192 tokens: 8 + 14 + 8 + 8 + 12 + 8 = 58; v0.5.8's list starts its 64-step at 640."""
    base = 512 + 1.5 * 8192 + 2 * 256 + 1 / 8 * 1024
    assert plan("0.5.9", ON).engine.memory_fraction == round((H100 - base - 58 * 8) / H100, 3)
    assert plan("0.5.8", ON).engine.memory_fraction == round((H100 - base - 57 * 8) / H100, 3)


def test_the_floor_binds_before_an_after_floor_term_and_over_a_before_floor_one() -> None:
    """H100, --chunked-prefill-size 2048 --cuda-graph-max-bs 8: 512 + 1.5 × 2048 + 1/8 × 1,024 + 2 × 8 = 3,728 MiB,
    under the 10 GiB floor. v0.5.6 and v0.5.7 add their term after the floor (10,240 + 1,024; 10,240 + 2,048 // 8),
    v0.5.9 before it, so its 8 MiB a size vanish under the floor (10,240)."""
    small = ("--chunked-prefill-size", "2048", "--cuda-graph-max-bs", "8")
    assert plan("0.5.6", ON, *small).engine.memory_fraction == round((H100 - 10_240 - 1_024) / H100, 3)
    assert plan("0.5.7", ON, *small).engine.memory_fraction == round((H100 - 10_240 - 256) / H100, 3)
    assert plan("0.5.9", ON, *small).engine.memory_fraction == round((H100 - 10_240) / H100, 3)
    assert plan("0.5.9", *small).engine.memory_fraction == round((H100 - 10_240) / H100, 3)


@pytest.mark.parametrize("version", ["0.5.3", "0.5.3.post1", "0.5.14", "0.5.16", "0.5.23"])
def test_a_release_without_the_flag_refuses_it_by_name(version: str) -> None:
    """The wheels' server_args.py: no `--enable-piecewise-cuda-graph` before v0.5.4 nor from v0.5.14 (v0.5.16 :7232
    has only --disable-piecewise-cuda-graph); SGLang's argparse refuses it there."""
    with pytest.raises(InputError, match="has no --enable-piecewise-cuda-graph"):
        plan(version, ON)


@pytest.mark.parametrize("version", ["0.5.4", "0.5.10rc0", "0.5.13"])
def test_a_release_with_the_flag_takes_it(version: str) -> None:
    """v0.5.4 … v0.5.5: the flag, no reserve term; v0.5.10rc0 … v0.5.13: a DeprecatedAction (on by default)."""
    assert plan(version, ON).engine.memory_fraction == plan(version).engine.memory_fraction
