"""From v0.18.0 vLLM's command line takes any whole `--block-size` (config/cache.py `SkipValidation[int]`), but its
model runner splits each block into the attention backend's kernel blocks (v1/worker/utils.py
`select_common_block_size`, v0.18.0:326) and every NVIDIA backend's kernel sizes are multiples of 16 (FlashAttention
`MultipleOf(16)`, FlashInfer [16, 32, 64], read off the v0.18.0 and v0.33.0 wheels): 7 raises 'No common block size
for 7' before the cache is allocated. Before v0.18.0 the command line's choices refuse it ('invalid choice: 7');
a gpt-oss-20b start ran at --block-size 96 on v0.29.0 (akamaslabs smoke_test_2026-09-15.log), a multiple of 16."""

from __future__ import annotations

import pytest

from kvtop.cli import main
from tests.conftest import CONFIGS

LLAMA = str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")


@pytest.mark.parametrize(("release", "block", "said"), [
    ("0.18.0", 7, "vLLM 0.18.0 stops at --block-size 7: its command line takes it, but no NVIDIA attention backend "
                  "splits a 7-token block into its kernel blocks (multiples of 16): 'No common block size for 7'"),
    ("0.33.0", 24, "'No common block size for 24'"),
    ("0.17.1", 7, "vLLM 0.17.1 refuses --block-size 7: its command line takes 1, 8, 16, 32, 64, 128, 256"),
])  # fmt: skip
def test_a_block_no_kernel_divides_is_refused(
    capsys: pytest.CaptureFixture[str], release: str, block: int, said: str
) -> None:
    cmd = f"vllm serve {LLAMA} --block-size {block}"
    assert main(["plan", "--cmd", cmd, "--engine-version", release, "--gpu", "H100"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("kvtop: error: --block-size: ") and said in err


@pytest.mark.parametrize("block", [16, 48, 96])
def test_a_multiple_of_16_is_planned(capsys: pytest.CaptureFixture[str], block: int) -> None:
    cmd = f"vllm serve {LLAMA} --block-size {block}"
    assert main(["plan", "--cmd", cmd, "--engine-version", "0.33.0", "--gpu", "H100"]) == 0
    assert f"blocks of {block} tokens" in capsys.readouterr().out
