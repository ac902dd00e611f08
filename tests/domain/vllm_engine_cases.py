"""One case of the engine-diff sweep, planned by kvtop and read from vLLM's own figures.

The engine's figures are those vLLM's own sizing code printed for the same inputs
(tests/data/engine_diff/vllm-<version>.json, made by benchmarks/engine_diff/run.py): 40 GiB of KV memory
(`--kv-cache-memory-bytes`), TP 1/2/4/8, KV auto or fp8, sm80 = A100-80GB, sm90 = H100, sm100 = B200.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.model import ModelSpec
from kvtop.sources.hub import load_model
from tests.data_paths import CONFIGS, DATA

GPUS = {"sm80": "A100-80GB", "sm90": "H100", "sm100": "B200"}
KV_FLAG = {"auto": "auto", "fp8": "fp8_e4m3"}


@cache
def _fixture(version: str) -> dict[tuple[str, int, str, str], dict[str, Any]]:
    data = json.loads((DATA / "engine_diff" / f"vllm-{version}.json").read_text())
    return {(r["config"], r["tp"], r["kv_dtype"], r["gpu"]): r for r in data["results"]}


@cache
def _model(config: str) -> ModelSpec:
    return load_model(str(CONFIGS / f"{config}.json"))


def engine_row(version: str, config: str, tp: int, kv: str, gpu: str) -> dict[str, Any]:
    """vLLM's own result for the case (status, tokens_logged, num_blocks, block_size, bytes_per_block, …)."""
    return _fixture(version)[(config, tp, kv, gpu)]


# kvtop refuses a fixed pool larger than the memory left after the weights (a 671B model at TP 8 on an
# 80 GB GPU, in many rows); the sweep compares the sizing arithmetic, so the memory is said to be there.
UNLIMITED = MeasuredInputs(free_before_load_bytes=1 << 50)


def plan(version: str, config: str, tp: int, kv: str, gpu: str, *extra: str) -> Ledger:
    """kvtop's plan for the case, with the budget and context the engine run had."""
    row = engine_row(version, config, tp, kv, gpu)
    flags = [
        "--tp", str(tp), "--kv-cache-dtype", KV_FLAG[kv], "--max-model-len", str(row["max_model_len"]),
        "--engine-version", version, "--kv-cache-memory-bytes", str(row["budget_bytes"]), *extra,
    ]  # fmt: skip
    name = GPUS[gpu]
    return predict(
        _model(config), parse_flags("vllm", flags), gpu_total_bytes=gpu_total_bytes(name), gpu_name=name,
        measured=UNLIMITED,  # the engine run had no GPU: its fixed KV memory was never checked against one
    )  # fmt: skip


def figures(ledger: Ledger) -> tuple[int, int, int, int]:
    """(tokens, num_blocks, block size, bytes of one block over its layer slots), as the fixture states them."""
    engine = ledger.engine
    blocks = engine.num_blocks or 0
    return engine.token_capacity, blocks, engine.page_size, engine.kv_pool_bytes // blocks if blocks else 0


def engine_figures(row: dict[str, Any]) -> tuple[int, int, int, int]:
    return row["tokens_logged"], row["num_blocks"], row["block_size"], row["bytes_per_block"]


# The flag sets: one launch flag at a time, TP 2 on sm90 with KV auto (or the set's own), vLLM 0.33.0
# (tests/data/engine_diff/vllm-0.33.0.flags.json); `variant` names the set (no-chunked-prefill, pp2, …).
FLAG_SET_VERSION = "0.33.0"


@cache
def _flag_fixture() -> dict[tuple[str, str], dict[str, Any]]:
    data = json.loads((DATA / "engine_diff" / f"vllm-{FLAG_SET_VERSION}.flags.json").read_text())
    return {(r["variant"], r["config"]): r for r in data["results"]}


def flag_row(variant: str, config: str) -> dict[str, Any]:
    """vLLM 0.33.0's own result for the config under the flag set `variant`."""
    return _flag_fixture()[(variant, config)]


def flag_plan(
    variant: str, config: str, version: str = FLAG_SET_VERSION, *extra: str, flags: list[str] | None = None
) -> Ledger:
    """kvtop's plan for the flag-set case: the engine's own flag tokens (or `flags` in their place), its context,
    budget and GPU."""
    row = flag_row(variant, config)
    path = CONFIGS / f"{config}.json"
    if not path.exists():  # a config only the engine-diff harness carries
        path = DATA / "engine_diff" / "configs" / f"{config}.json"
    tokens = [
        "--tp", str(row["tp"]), "--kv-cache-dtype", KV_FLAG.get(row["kv_dtype"], row["kv_dtype"]),
        "--max-model-len", str(row["max_model_len"]), "--engine-version", version,
        "--kv-cache-memory-bytes", str(row["budget_bytes"]), *(row["flags"] if flags is None else flags), *extra,
    ]  # fmt: skip
    name = GPUS[row["gpu"]]
    return predict(
        load_model(str(path)), parse_flags("vllm", tokens, strict=True), gpu_total_bytes=gpu_total_bytes(name),
        gpu_name=name, measured=UNLIMITED,
    )  # fmt: skip
