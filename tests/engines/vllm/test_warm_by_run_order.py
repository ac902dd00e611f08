"""Starts said warm by their source's run order, their own lines unpublished (benchmarks/calibration/corpus.py
`Record.compile_cache`; session 66).

vLLM keeps torch.compile's output under VLLM_CACHE_ROOT, keyed on a hash of the config (compilation/decorators.py:528-546
at v0.28.0, :530-548 at v0.29.0), and a start whose configuration started before it with the same cache root loads it
('Directly load AOT compilation') and compiles nothing inside its profile. Four corpus starts are that second start by
their sources (each record's note says how):

- file61924033443 (a RUNLOG on an RTX 3090 host, vLLM 0.28.0): the serial Milestone 3 pass restarted the configurations
  the parallel pass had started first, one VLLM_CACHE_ROOT for every server: Llama-3.1-8B at max_model_len 33,824
  'GPU KV cache = 48,128 tokens', Qwen2.5-7B-1M (no DCA) at 66,592 121,072 tokens.
- file69381678121 (a Colab T4 script, vLLM 0.29.0): P3, a restart of `--dtype float16 --max-model-len 8192
  --gpu-memory-utilization 0.9` in one VM after at least one start with those flags (KV_PROBE's): 'GPU KV cache
  size: 187,824 tokens'.
- luoaini-sm75 (a Colab T4 notebook, vLLM 0.28.0): the fp16 start rerun after its launcher's bug had kept the first one
  waiting past ready: 337,536 tokens.

Expected values are those logs: said warm, each plans within 5 % of its pool; unsaid (a cold start's figure) each
plans below it, as a cold start holds more beside its profile.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

import pytest

from benchmarks.calibration.corpus import load_all
from kvtop.cli import main
from tests.conftest import DATA

CONFIGS = DATA / "configs"
CALIBRATION = DATA / "calibration" / "configs"


class Start(NamedTuple):
    """One corpus start as `kvtop plan` is given it, and the pool its log printed."""

    record_id: str
    config: Path
    release: str
    gpu: str
    flags: tuple[str, ...]
    logged_tokens: int


STARTS = [Start(*start) for start in (
    ("file61924033443-llama-3.1-8b-rtx3090-v0280-len33824-serial", CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json",
     "0.28.0", "RTX3090", ("--gpu-memory-utilization", "0.90", "--max-model-len", "33824"), 48_128),
    ("file61924033443-qwen2.5-7b-1m-nodca-rtx3090-v0280-len66592-serial",
     CALIBRATION / "Qwen--Qwen2.5-7B-Instruct-1M-noDCA.RECONSTRUCTED.json", "0.28.0", "RTX3090",
     ("--gpu-memory-utilization", "0.90", "--max-model-len", "66592"), 121_072),
    ("file69381678121-qwen2.5-3b-colab-t4-v0290", CONFIGS / "heldout" / "mlc--qwen2.5_3b.json", "0.29.0", "T4",
     ("--dtype", "float16", "--max-model-len", "8192", "--gpu-memory-utilization", "0.9"), 187_824),
    ("luoaini-sm75-qwen2.5-1.5b-colab-t4-v0280-fp16", CALIBRATION / "Qwen--Qwen2.5-1.5B-Instruct.RECONSTRUCTED.json",
     "0.28.0", "T4", ("--max-model-len", "2048", "--gpu-memory-utilization", "0.85", "--no-enable-log-requests"),
     337_536),
)]  # fmt: skip
# The same sources' first starts of their configurations (compiled cold): left unsaid.
COLD = ("file61924033443-llama-3.1-8b-rtx3090-v0280-len8192", "file61924033443-qwen2.5-7b-1m-nodca-rtx3090-v0280-len8192",
        "luoaini-sm75-qwen2.5-1.5b-colab-t4-v0280-awq", "luoaini-sm75-qwen2.5-1.5b-colab-t4-v0280-gptq")  # fmt: skip


def _tokens(capsys: pytest.CaptureFixture[str], start: Start, *said: str) -> int:
    args = ["plan", "--no-calibration-store", "--model", str(start.config), "--engine", "vllm", "--engine-version",
            start.release, "--gpu", start.gpu, *said, "--json", "--", *start.flags]  # fmt: skip
    assert main(args) == 0
    return int(json.loads(capsys.readouterr().out)["token_capacity"])


def test_the_corpus_says_warm_by_run_order() -> None:
    """The four second starts carry `compile_cache: warm` with the reading in their notes, and the launch and pool
    planned below are theirs; their sources' first starts stay unsaid."""
    vllm = {record.id: record for record in load_all()["vllm"]}
    for start in STARTS:
        record = vllm[start.record_id]
        assert record.compile_cache == "warm"
        assert "Session 66 (helper E): `compile_cache: warm` set from the source" in record.raw["note"]
        assert record.host_measured().compile_cache == "warm"
        assert (record.raw["version"], record.gpu) == (start.release, start.gpu)
        assert record.tokens == start.logged_tokens
        assert sorted(record.raw["flags"]) == sorted(start.flags)
        assert str(start.config).endswith(str(record.raw["config"]))
    for record_id in COLD:
        assert vllm[record_id].compile_cache is None


@pytest.mark.parametrize("start", STARTS, ids=[start.record_id for start in STARTS])
def test_said_warm_plans_the_logged_pool(capsys: pytest.CaptureFixture[str], start: Start) -> None:
    """Said warm, within 5 % of the logged pool; unsaid, below it (a cold start's figure charged)."""
    assert abs(_tokens(capsys, start, "--compile-cache", "warm") / start.logged_tokens - 1) < 0.05
    assert _tokens(capsys, start) < start.logged_tokens
