"""`--block-size` values vLLM's command line refuses (kvtop/domain/engines/vllm/block_sizes.py), read from the wheels
the harness installs (.cache/engine_diff/vllm-*): v0.13.0's config/cache.py `BlockSize = Literal[1, 8, 16, 32, 64,
128, 256]` becomes argparse choices, and its parser, run there, says "argument --block-size: invalid choice: 7
(choose from 1, 8, 16, 32, 64, 128, 256)" (also for 0, 24 and 512; 1, 8, 16 and 256 accepted). v0.33.0's
`block_size: int = Field(gt=0)`: its parser accepted 7, 24 and 512. v0.18.0's wheel (config/cache.py `block_size:
SkipValidation[int]`, no Literal; v0.17.1's still the Literal) is the first without the choices, and vLLM 0.29.0 ran a
gpt-oss-20b start at --block-size 96 (akamaslabs/vllm-benchmark studies/10-gpt-oss-20b-goodput-per-gpu/results/
smoke_test_2026-09-15.log, "GPU KV cache size: 82,453 tokens").
"""

from __future__ import annotations

import pytest

from kvtop.cli import main
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.launch_check import launch_refusals
from kvtop.domain.ledger import predict
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS

LLAMA_8B = str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")


def refused(version: str, block: int) -> list[str]:
    settings = parse_flags("vllm", ["--block-size", str(block), "--engine-version", version])
    ledger = predict(load_model(LLAMA_8B), settings, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100")
    return [refusal.field for refusal in launch_refusals(ledger)]


@pytest.mark.parametrize(("block", "taken"), [(7, False), (24, False), (512, False), (1, True), (8, True),
                                              (16, True), (256, True)])  # fmt: skip
def test_v0_13_takes_only_its_literal_sizes(block: int, taken: bool) -> None:
    assert ("--block-size" not in refused("0.13.0", block)) is taken


@pytest.mark.parametrize(("block", "taken"), [(7, False), (24, False), (512, True)])
def test_v0_33_s_parser_takes_any_whole_number_its_runner_multiples_of_16(block: int, taken: bool) -> None:
    """The parser took 7, 24 and 512; the model runner refuses 7 and 24 (test_block_size_kernel.py)."""
    assert ("--block-size" not in refused("0.33.0", block)) is taken


@pytest.mark.parametrize(("version", "block", "taken"), [("0.17.1", 96, False), ("0.18.0", 96, True),
                                                         ("0.29.0", 96, True)])  # fmt: skip
def test_the_choices_end_at_v0_18_0(version: str, block: int, taken: bool) -> None:
    assert ("--block-size" not in refused(version, block)) is taken


def test_plan_refuses_it_naming_the_field_the_range_and_the_source(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["plan", "--model", LLAMA_8B, "--engine", "vllm", "--engine-version", "0.13.0", "--block-size", "7"]
    assert main(argv) == 2
    said = capsys.readouterr().err
    assert said.startswith("kvtop: error: --block-size: vLLM 0.13.0 refuses --block-size 7: its command line takes "
                           "1, 8, 16, 32, 64, 128, 256")  # fmt: skip
    assert "from v0.18.0 any whole number" in said and "config/cache.py BlockSize" in said


# read off the PyPI wheels' engine/arg_utils.py `'--block-size', type=int, choices=[…]` (v0.6.3.post1: 8, 16, 32;
# v0.6.4: to 128; v0.6.5: 8, 16, 32 again; v0.6.6-v0.8.4: to 128) and config.py `BlockSize = Literal[1, 8, 16, 32,
# 64, 128]` (v0.8.5-v0.11.0; 256 from v0.11.1)
@pytest.mark.parametrize(("version", "block", "taken"), [
    ("0.6.3.post1", 64, False), ("0.6.3.post1", 32, True), ("0.6.4", 128, True), ("0.6.5", 64, False),
    ("0.6.6", 64, True), ("0.7.2", 64, True), ("0.8.4", 1, False), ("0.8.5", 1, True), ("0.10.0", 256, False),
    ("0.11.1", 256, True), ("0.9.2", 7, False),
])  # fmt: skip
def test_earlier_releases_take_their_own_choices(version: str, block: int, taken: bool) -> None:
    assert ("--block-size" not in refused(version, block)) is taken
