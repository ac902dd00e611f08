"""The rope cache's growth after SGLang's load where a --context-length above the positions is taken (rope_growth.py).

Expected values by hand from SGLang 0.5.10 utils/common.py:3700-3737 (`reserve = context + steps × draft × 2 + 256`,
rounded up to 128) and rotary_embedding's `_ensure_cos_sin_cache_length(reserve − 1)` (rows up to `reserve`, float32 on
CUDA), for Llama-3.1-8B-Instruct's config.json (max_position_embeddings 131,072, head 4,096 / 32 = 128, rope_type
llama3: one cache of 131,072 rows): --context-length 200,000 → reserve ⌈200,256 / 128⌉ × 128 = 200,320 rows, grown by
69,248 rows × 128 × 4 B = 35,454,976 B; with EAGLE's 3 steps × 4 draft tokens × 2 = 24 more: ⌈200,280 / 128⌉ × 128 =
200,320 again; --context-length 300,000: ⌈300,256 / 128⌉ × 128 = 300,288, grown by 169,216 × 512 = 86,638,592 B.
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from kvtop.domain.engines.sglang.rope_growth import rope_growth
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.launch import parse_flags
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS

LLAMA_PATH = str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")
LLAMA = load_model(LLAMA_PATH)
AT = ResolvedVersion(text="0.5.10")


def _grown(flags: list[str], version: ResolvedVersion = AT) -> int | None:
    found = rope_growth(LLAMA, parse_flags("sglang", flags), version)
    return None if found is None else found[0]


def test_the_growth_above_the_positions_is_the_reserves_rows() -> None:
    assert _grown(["--context-length", "200000"]) == 35_454_976
    assert _grown(["--context-length", "300000"]) == 86_638_592
    assert _grown(["--context-length", "200000", "--speculative-num-steps", "3",
                   "--speculative-num-draft-tokens", "4"]) == 35_454_976  # fmt: skip


def test_no_growth_charged_at_or_below_the_positions_or_before_0_5_6() -> None:
    """At 131,072 the growth is the margin's 256 rows (131,328 − 131,072; 256 × 512 B = 128 KiB): not charged;
    0.5.5 has no reserve_rope_cache_for_long_sequences (0.5.4, 0.5.5 model_runner.py read)."""
    assert _grown(["--context-length", "131072"]) is None
    assert _grown([]) is None
    assert _grown(["--context-length", "200000"], ResolvedVersion(text="0.5.5")) is None


def _kv_budget(capsys: pytest.CaptureFixture[str], context: int) -> int:
    args = ["plan", "--json", "--no-calibration-store", "--model", LLAMA_PATH, "--engine-version", "0.5.10", "--gpu",
            "H100", "--cmd", "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 python -m sglang.launch_server --model-path "
            f"meta-llama/Llama-3.1-8B-Instruct --context-length {context}"]  # fmt: skip
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    found: list[int] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if node.get("label") == "KV budget":
                found.append(node["bytes"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(out)
    return found[0]


def test_the_plan_under_the_override_loses_the_growth_from_its_kv_budget(capsys: pytest.CaptureFixture[str]) -> None:
    """The same launch at 131,072 and at 200,000 (allowed): the KV budget differs by the growth alone."""
    assert _kv_budget(capsys, 131_072) - _kv_budget(capsys, 200_000) == 35_454_976
