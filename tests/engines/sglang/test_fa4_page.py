"""`fa4`'s page by release (fa4.py), from SGLang's code read in the wheels and one engine log.

The log: vincentzed/jetspec at 18ead1a2, `jetspec/logs/paper_gsm8k_ar_31980_server.log` (tests/data/calibration/
sglang.jsonl `vincentzed-jetspec-qwen3-8b-b300-ar`: Qwen3-8B on a B300, a 2026-06 source build, `attention_backend='fa4'`,
`page_size` 16 typed) prints 'FA4 backend only supports page size 128 for non-MLA model architectures, changing page_size
from 16 to 128' and max_total_num_tokens=1,443,328 (11,276 pages of 128). The rule that prints it for
`--attention-backend fa4` is 0.5.15's `_fa4_page_constraint` (arg_groups/overrides.py:1675-1693); to 0.5.14 only
`--prefill-attention-backend fa4` pages (0.5.14 server_args.py:4651-4659, on SM100), and 0.5.4 … 0.5.7 raise on any
other phase's fa4 (0.5.7 server_args.py:1647-1650).
"""

from __future__ import annotations

import re

import pytest

from kvtop.cli import main
from tests.data_paths import CONFIGS

QWEN3_8B = str(CONFIGS / "Qwen--Qwen3-8B.json")
LAUNCH = ["--mem-fraction-static", "0.8", "--max-running-requests", "1", "--trust-remote-code"]
LOGGED_TOKENS = 1_443_328


def _tokens_and_page(capsys: pytest.CaptureFixture[str], version: str, gpu: str, flags: list[str]) -> tuple[int, int]:
    typed = ["plan", "--model", QWEN3_8B, "--engine", "sglang", "--engine-version", version, "--gpu", gpu, *LAUNCH]
    assert main([*typed, *flags]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.strip().startswith("tokens "))
    found = re.search(r"([\d,]+)\s+page (\d+)", row)
    assert found is not None, row
    return int(found.group(1).replace(",", "")), int(found.group(2))


def test_the_logged_start_pages_by_128_over_the_typed_16(capsys: pytest.CaptureFixture[str]) -> None:
    tokens, page = _tokens_and_page(capsys, "0.5.15", "B300", ["--page-size", "16", "--attention-backend", "fa4"])
    assert page == 128
    assert tokens % 128 == 0 and abs(tokens - LOGGED_TOKENS) <= 128  # one page of the log's 1,443,328
    # 128 typed under fa4 too: without a named backend the B300's default trtllm_mha would page 128 by 64
    # (0.5.15 takes 16, 32 or 64: default_mha.py)
    assert (tokens, page) == _tokens_and_page(capsys, "0.5.15", "B300", ["--page-size", "128", "--attention-backend", "fa4"])


@pytest.mark.parametrize(
    ("version", "gpu", "flags", "page"),
    [
        ("0.5.14", "B300", ["--page-size", "16", "--attention-backend", "fa4"], 16),  # only the prefill field pages
        ("0.5.14", "B300", ["--page-size", "16", "--prefill-attention-backend", "fa4"], 128),
        ("0.5.14", "H100", ["--page-size", "16", "--prefill-attention-backend", "fa4"], 16),  # SM100 only
        ("0.5.9", "H100", ["--page-size", "16", "--prefill-attention-backend", "fa4"], 128),  # any GPU to 0.5.9
        ("0.5.23", "H100", ["--page-size", "16", "--attention-backend", "fa4"], 16),
        ("0.5.23", "B200", ["--attention-backend", "fa4"], 128),
    ],
)
def test_the_page_by_release_gpu_and_phase(
    capsys: pytest.CaptureFixture[str], version: str, gpu: str, flags: list[str], page: int
) -> None:
    assert _tokens_and_page(capsys, version, gpu, flags)[1] == page


def test_fa4_beyond_prefill_is_refused_where_sglang_raises(capsys: pytest.CaptureFixture[str]) -> None:
    typed = ["plan", "--model", QWEN3_8B, "--engine", "sglang", "--engine-version", "0.5.7", "--gpu", "B200", *LAUNCH]
    assert main([*typed, "--attention-backend", "fa4"]) == 2
    assert "FA4 backend is only supported for prefill" in capsys.readouterr().err
