"""SGLang's DeepSeek DSA launch overrides against the engine's own recorded runs (S24, S23 of docs/fidelity.md).

Expected figures are SGLang 0.5.23's own, recorded by running its sizing code on each row's inputs
(tests/data/engine_diff/sglang-0.5.23.flags.json, benchmarks/engine_diff/run.py); kvtop's side is
`kvtop plan` in-process with the same argv the table uses (benchmarks/engine_diff/kvtop_side.py).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.engine_diff.cases import config_path
from benchmarks.engine_diff.kvtop_side import kvtop_plan
from kvtop.cli import main
from kvtop.domain.engines.sglang import RULES as SGLANG
from kvtop.domain.engines.sglang.dsa import page_size_of
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.kv_format import resolve_kv_format
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.sources.hub import load_model
from tests.data_paths import DATA

FLAG_ROWS = DATA / "engine_diff" / "sglang-0.5.23.flags.json"


def _row(config: str, variant: str) -> dict[str, Any]:
    rows = json.loads(FLAG_ROWS.read_text())["results"]
    return next(r for r in rows if r["config"] == config and r.get("variant") == variant)


NVFP4 = "nvidia--DeepSeek-V3.2-NVFP4"
H200, B200 = 143771 << 20, 183359 << 20  # CUDA totals of the GPUs (as tests/domain/test_model_facts.py)


@pytest.mark.parametrize("variant", ["page64", "ctx4k", "mrr64", "ep"])
def test_sglang_dsa_auto_kv_on_hopper_is_bf16_over_the_checkpoints_fp8(variant: str) -> None:
    """S24: the checkpoint says FP8 KV (hf_quant_config.json kv_cache_quant_algo), SGLang 0.5.23 on sm90 sizes
    bf16: 61 layers × (512 + 64) × 2 B + 61 × (128 + 128 // 128 × 4) B indexer = 70,272 + 8,052 = 78,324 B."""
    row = _row(NVFP4, variant)
    assert row["kv_cache_dtype"] == "torch.bfloat16" and row["gpu"] == "sm90"
    assert row["cell_size"] == 61 * 576 * 2 + 61 * 132 == 78_324
    plan = kvtop_plan("sglang", "0.5.23", row)
    assert (plan["cell_bytes"], plan["tokens"], plan["block_size"]) == (78_324, 548_352, 64)
    assert (row["cell_size"], row["max_total_num_tokens"], row["page_size"]) == (78_324, 548_352, 64)


def _auto_format(version: str, gpu: str) -> str:
    model = load_model(str(config_path(NVFP4)))
    assert (model.quant.kv_cache_quant_algo or "").upper() == "FP8"  # what the checkpoint says
    settings = parse_flags("sglang", ["--tp", "2"])
    storage = SGLANG.kv_storage_for(model, settings, ResolvedVersion(text=version))
    return resolve_kv_format("auto", model, storage, gpu_name=gpu)


def test_the_dsa_default_comes_first_from_sglangs_dsa_support_on() -> None:
    """From v0.5.3 (server_args.py, then arg_groups/overrides.py): bf16 below SM100, fp8_e4m3 on SM100+;
    before it the checkpoint's FP8 is read (kv_cache_dtype.py)."""
    assert _auto_format("0.5.23", "H200") == "bf16"
    assert _auto_format("0.5.6.post2", "H100") == "bf16"
    assert _auto_format("0.5.23", "B200") == "fp8_e4m3"
    assert _auto_format("0.5.2", "H200") == "fp8_e4m3"


@pytest.mark.parametrize(
    ("config", "cell", "tokens"),
    [
        ("deepseek-ai--DeepSeek-V3.2", 78_324, 548_352),
        ("haoyangli-amd--DeepSeek-V3.2-exp-ptpc", 78_324, 548_352),
        (NVFP4, 78_324, 548_352),
        # 78 layers × (576 × 2 + 132) = 100,152 B; the rest 40 GiB // 100,152 = 428,844 → 428,800 in pages of 64 (428,832 in pages of 32)
        ("zai-org--GLM-5", 100_152, 428_800),
    ],
)
def test_sglang_pages_dsa_by_64_over_a_given_page_size(config: str, cell: int, tokens: int) -> None:
    """S23: `--page-size 32` on a DSA model; SGLang 0.5.23 runs pages of 64 (model_overrides/deepseek_v2.py)."""
    row = _row(config, "page32")
    assert "--page-size" in row["flags"] and "32" in row["flags"]
    assert (row["cell_size"], row["max_total_num_tokens"], row["page_size"]) == (cell, tokens, 64)
    plan = kvtop_plan("sglang", "0.5.23", row)
    assert (plan["cell_bytes"], plan["tokens"], plan["block_size"]) == (cell, tokens, 64)


def test_the_dsa_page_overrides_the_flag_from_sglangs_dsa_support_on() -> None:
    dsa, dense = load_model(str(config_path(NVFP4))), load_model(str(config_path("Qwen--Qwen3-8B")))
    assert page_size_of(dsa, 32, "H100", ResolvedVersion(text="0.5.23"))[0] == 64
    assert page_size_of(dsa, 32, "H100", ResolvedVersion(text="0.5.6.post2"))[0] == 64
    assert page_size_of(dsa, 32, "H100", ResolvedVersion(text="0.5.2"))[0] == 32
    assert page_size_of(dense, 32, "H100", ResolvedVersion(text="0.5.23"))[0] == 32


def test_the_plan_says_why_the_checkpoints_fp8_kv_is_not_used() -> None:
    model = load_model(str(config_path(NVFP4)))
    settings = parse_flags("sglang", ["--tp", "8"]).model_copy(update={"engine_version": "0.5.23"})
    hopper = predict(model, settings, gpu_total_bytes=H200, gpu_name="H200")
    assert hopper.ranks[0].kv.kv_format == "bf16"
    assert any("replaces `auto` before the checkpoint's FP8 KV" in note for note in hopper.engine.notes)
    blackwell = predict(model, settings, gpu_total_bytes=B200, gpu_name="B200")
    assert blackwell.ranks[0].kv.kv_format == "fp8_e4m3"
    assert not any("before the checkpoint's FP8 KV" in note for note in blackwell.engine.notes)


def test_a_given_fraction_the_release_overrides_draws_no_reserve_warning(capsys: pytest.CaptureFixture[str]) -> None:
    """SGLang 0.5.3 sets 0.8 for a DSA model over `--mem-fraction-static 0.9` (server_args.py: 'Setting mem fraction
    static to 0.8 for DeepSeek NSA.'): the 0.8 is the engine's choice, so no note says the user's flag leaves too
    little against the automatic fraction, and no reserve shortfall is claimed."""
    argv = ["plan", "--model", str(config_path("deepseek-ai--DeepSeek-V3.2")), "--engine", "sglang",
            "--engine-version", "0.5.3", "--gpu", "H200", "--tp", "8", "--enable-dp-attention", "--dp", "8", "--json"]
    assert main([*argv, "--mem-fraction-static", "0.9"]) == 0
    given = json.loads(capsys.readouterr().out)
    assert main(argv) == 0
    automatic = json.loads(capsys.readouterr().out)
    assert given["memory_fraction"]["value"] == automatic["memory_fraction"]["value"] == 0.8
    assert given["reserve_bytes"] == automatic["reserve_bytes"]  # pre-load × (1 − 0.8) either way
    assert not any("--mem-fraction-static" in note and "may run out" in note for note in given["notes"])
    assert (given["reserve_needed_bytes"], given["reserve_short_bytes"]) == (None, 0)
