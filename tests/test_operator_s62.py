"""Session 62's operator pass over the headless commands: what `plan` and `explain` print on the inputs an operator has.

- A plan that fits only at the engine's own share, where that layout takes no flag at all, said '(engine flags: )'.
- A gzip-compressed log (a rotated `engine.log.gz`) read as 'no SGLang, vLLM … startup lines', as if not a log.
- `explain`'s block mismatch of 1 MiB read '0.00 GB (0.00 GiB) larger than predicted'.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from tests.cli_in_process import run_kvtop

DATA = Path(__file__).parent / "data"
QWEN3_0_6B = DATA / "calibration" / "configs" / "Qwen--Qwen3-0.6B.json"  # 28 layers, 8 KV heads of 128, BF16
VLLM_LOG = DATA / "cases" / "vllm" / "blog-v0271-qwen3-32b-pp2-rtxpro6000" / "engine.log"  # 'GPU KV cache size: 56,640 tokens'
LMDEPLOY_LOG = DATA / "cases" / "lmdeploy" / "lmdeploy-3411-internvl25-8b-a100-80g" / "engine.log"  # 'block_size = 8.000 MB'


def test_a_layout_that_fits_with_no_flag_says_so() -> None:
    """0.001 of an H100 holds no Qwen3-0.6B; vLLM's own share on one GPU does, and that launch has no flag to print."""
    ran = run_kvtop("plan", "--model", str(QWEN3_0_6B), "--engine", "vllm", "--gpu", "H100", "--gpu-memory-utilization", "0.001")
    assert ran.returncode == 0, ran.stderr
    line = next(line for line in ran.stdout.splitlines() if line.startswith("no layout up to 32×"))
    assert "(engine flags: )" not in line
    assert line.endswith("tokens per rank (no engine flags: the engine's defaults)")


def test_a_gzip_compressed_log_is_read_as_the_log_it_holds(tmp_path: Path) -> None:
    packed = tmp_path / "engine.log.gz"
    packed.write_bytes(gzip.compress(VLLM_LOG.read_bytes()))
    args = ("--engine", "vllm", "--model", str(QWEN3_0_6B), "--json")
    ran = run_kvtop("explain", str(packed), *args)
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["logged"]["token_capacity"] == 56_640  # the log's 'GPU KV cache size: 56,640 tokens'


def test_a_gzip_file_cut_short_names_what_to_do(tmp_path: Path) -> None:
    cut = tmp_path / "engine.log.gz"
    cut.write_bytes(gzip.compress(VLLM_LOG.read_bytes())[:40])
    ran = run_kvtop("explain", str(cut), "--engine", "vllm", "--model", str(QWEN3_0_6B))
    assert ran.returncode == 2
    assert "gzip-compressed, and it does not decompress" in ran.stderr
    assert "zcat FILE | kvtop explain -" in ran.stderr
    assert "Traceback" not in ran.stderr


def test_a_block_mismatch_of_one_mib_is_printed_in_mib() -> None:
    """LMDeploy's 'block_size = 8.000 MB' (MiB: its code divides by 1 << 20) against Qwen3-0.6B's 64 rows of
    28 layers × 8 KV heads × 128 × 2 (K and V) × 2 B = 7,340,032 B: 1,048,576 B larger, 1.00 MiB."""
    ran = run_kvtop("explain", str(LMDEPLOY_LOG), "--engine", "lmdeploy", "--model", str(QWEN3_0_6B))
    assert ran.returncode == 0, ran.stderr
    verdict = next(line for line in ran.stdout.splitlines() if line.startswith("verdict:"))
    assert verdict.startswith("verdict: MISMATCH — the logged block is 1.00 MiB larger than predicted.")
