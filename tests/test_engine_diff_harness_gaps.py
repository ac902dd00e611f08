"""The flag sweep's former "not run" rows (issue 26): each is the engine's answer now, a figure or its refusal.

A real launch of a checkpoint whose configuration class is its own code runs it (--trust-remote-code); the sweep's
runners install checkpoint_configs.py's stand-ins for those classes (Kimi-K2's DeepseekV3Config under kimi_k2,
InternLM's, MiMo's, DeciLM's) and, where an engine ships a copy of the class without mapping the model type to it,
that copy (vLLM 0.13.0's NemotronHConfig). Expected figures: the engines' own runs (tests/data/engine_diff/*.json)
against the arithmetic by hand.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.engine_diff.table import _same_columns, engine_side, kvtop_side, read_fixture, verdict
from kvtop.domain.wording import GIB
from tests.data_paths import DATA

KIMI = "moonshotai--Kimi-K2-Instruct"
# Kimi-K2: 61 layers × (kv_lora_rank 512 + rope 64) × 2 B = 70,272 B a token (MLA: every rank holds the whole latent)
KIMI_TOKEN = 61 * (512 + 64) * 2
GAPS = {  # (engine, version) -> the configs whose rows were "not run"
    ("sglang", "0.5.6.post2"): (KIMI, "internlm--internlm-20b", "google--gemma-3-27b-it"),
    ("vllm", "0.13.0"): (KIMI, "nvidia--Nemotron-H-56B-Base-8K", "nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16",
                         "internlm--internlm-20b"),
    ("sglang", "0.5.23"): ("internlm--internlm-20b", "nvidia--Llama-3_3-Nemotron-Super-49B-v1",
                           "XiaomiMiMo--MiMo-7B-Base", "XiaomiMiMo--MiMo-V2-Flash",
                           "ibm-granite--granite-4.0-h-small.RECONSTRUCTED"),
    ("vllm", "0.33.0"): ("internlm--internlm-20b", "nvidia--Llama-3_3-Nemotron-Super-49B-v1", "XiaomiMiMo--MiMo-7B-Base"),
}  # fmt: skip


def _rows(engine: str, version: str, config: str) -> list[dict[str, Any]]:
    return [r for r in read_fixture(engine, version)["results"] if r["config"] == config]


@pytest.mark.parametrize(("engine", "version"), sorted(GAPS))
def test_no_row_of_these_configs_is_left_unanswered_and_kvtop_agrees(engine: str, version: str) -> None:
    for config in GAPS[(engine, version)]:
        rows = _rows(engine, version, config)
        assert rows and not [r for r in rows if r["status"] == "harness-error"], config
        for row in rows:
            theirs = engine_side(engine, row)
            ours = _same_columns(kvtop_side(engine, version, row), theirs)  # the columns the engine's row has
            assert verdict(ours, theirs) in ("equal", "both refuse"), (
                config,
                row.get("variant"),
                row["tp"],
                ours,
                theirs,
            )


def test_kimi_k2_on_vllm_0_13_with_its_own_configuration_class() -> None:
    """FlashMLA's 64-token block on sm90: 64 × 70,272 B = 4,497,408 B; 40 GiB ÷ that = 9,549 blocks × 64."""
    row = next(
        r
        for r in _rows("vllm", "0.13.0", KIMI)
        if r["tp"] == 1 and r["kv_dtype"] == "auto" and r["gpu"] == "sm90"
    )
    assert (row["block_size"], row["bytes_per_block"]) == (64, 64 * KIMI_TOKEN)
    assert row["tokens_logged"] == 40 * GIB // (64 * KIMI_TOKEN) * 64 == 611_136


def test_kimi_k2_on_sglang_0_5_6_with_its_own_configuration_class() -> None:
    """Page 1 (sm80, sm90): the rest 40 GiB ÷ 70,272 B = 611,191 tokens (fp8_e4m3: ÷ 35,136 = 1,222,383); sm100's
    TRT-LLM MLA page of 64 rounds down to whole pages (611,136)."""
    for row in _rows("sglang", "0.5.6.post2", KIMI):
        per_token = KIMI_TOKEN // (2 if row["kv_dtype"] == "fp8_e4m3" else 1)
        page = row["page_size"]
        assert page == (64 if row["gpu"] == "sm100" else 1)
        assert row["max_total_num_tokens"] == 40 * GIB // per_token // page * page


def test_a_stage_that_refused_is_the_launch_s_answer_not_its_peer_s_broken_connection() -> None:
    """granite-4.0-h-small under SGLang 0.5.23 PP: the last stage's constructor fails (a tied head on a
    PPMissingLayer); the first stage, waiting in a collective, saw gloo's "Connection closed by peer"."""
    rows = [r for r in _rows("sglang", "0.5.23", "ibm-granite--granite-4.0-h-small.RECONSTRUCTED")
            if r.get("variant") in ("pp2", "pp4")]  # fmt: skip
    assert len(rows) == 2
    for row in rows:
        assert (
            row["status"] == "refused"
            and "'PPMissingLayer' object has no attribute 'weight'" in row["message"]
        )
        assert "Connection closed" not in json.dumps(row)
    assert DATA.exists()
