"""`kvtop explain` on real llama-server logs (tests/data/llamacpp/SOURCES.md): the rebuilt cells equal the
logged ones to the cell, and every printed K and V size equals cells × layers × ggml_row_size by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.cli import main
from kvtop.domain.engines.llamacpp.log_records import LlamacppRankLog
from kvtop.sources.engine_logs import read_engine_log
from tests.data_paths import CASES, CONFIGS
from tests.engines.llamacpp.gguf_files import GEMMA2_2B, write_gguf

LOGS = CASES / "llamacpp"
HERMES = LOGS / "ollama-hermes3-llama31-8b-q4_0-rtx2060" / "engine.log"
GEMMA2 = LOGS / "gemma2-2b-it-q4_k_m-np-auto-unified" / "engine.log"
GPT_OSS = LOGS / "gpt-oss-20b-q8_0-kv-hexagon" / "engine.log"
MIB = 1 << 20


def explain_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["explain", "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_log_lines_are_read() -> None:
    log = read_engine_log(str(GPT_OSS))
    assert log.engine == "llamacpp"
    (rank,) = log.ranks(LlamacppRankLog)
    full, swa = rank.kv_caches
    assert (full.cells, full.layers, full.k_type, full.sliding) == (8192, 12, "q8_0", False)
    assert (swa.cells, swa.layers, swa.sliding) == (256, 12, True)
    # gpt-oss-20b: 8 KV heads × 64 = 512 elements a row, q8_0 = 16 blocks × 34 B = 544 B
    assert full.k_size.contains(8192 * 12 * 544) and swa.k_size.contains(256 * 12 * 544)
    assert full.size.contains(2 * 8192 * 12 * 544)


def test_the_training_context_warning_states_the_cells_a_slot_uses(capsys: pytest.CaptureFixture[str]) -> None:
    """`llama_context: n_ctx_per_seq (8192) < n_ctx_train (131072) -- …` is the gpt-oss log's only context line: its
    8192 is cparams.n_ctx_seq, the logged context length. The Hermes log prints it beside `n_ctx_seq     = 32768`
    (32768 both), Ollama's older log beside `n_ctx_per_seq = 2048` (2048 both): one figure, read from either."""
    (gpt_oss,) = read_engine_log(str(GPT_OSS)).ranks(LlamacppRankLog)
    assert gpt_oss.n_ctx_seq == (8192,) and gpt_oss.n_ctx == ()
    (hermes,) = read_engine_log(str(HERMES)).ranks(LlamacppRankLog)
    assert hermes.n_ctx_seq == (32768, 32768)
    (older,) = read_engine_log(str(LOGS / "ollama-llama31-8b-np4-kv-self-size" / "engine.log")).ranks(LlamacppRankLog)
    assert older.n_ctx_seq == (2048, 2048)
    out = explain_json(capsys, str(GPT_OSS), "--model", str(CONFIGS / "openai--gpt-oss-20b.json"))
    assert out["logged"]["context_length"] == 8192 and out["verdict"] == "match"


def test_ollama_launch_line_is_the_logs_launch() -> None:
    log = read_engine_log(str(HERMES))
    assert log.launch_command is not None
    assert log.launch_command.startswith("/usr/lib/ollama/llama-server --model ")
    assert "-c 32768 -np 1" in log.launch_command and not log.launch_command.endswith('"')


def test_llama_31_8b_matches_to_the_cell(capsys: pytest.CaptureFixture[str]) -> None:
    out = explain_json(capsys, str(HERMES), "--model", str(CONFIGS / "meta-llama--Llama-3.1-8B.json"))
    assert out["verdict"] == "match"
    assert out["predicted"]["token_capacity"] == out["logged"]["token_capacity"] == 32768
    checks = {check["name"]: check for check in out["pool_checks"]}
    # 32768 cells × 32 layers × 1024 elements × 2 B (f16) = 2048 MiB each, as printed
    assert checks["K"]["predicted_bytes"] == checks["V"]["predicted_bytes"] == 32768 * 32 * 1024 * 2 == 2048 * MIB
    assert all(check["within_rounding"] for check in checks.values())
    assert any("CPU 2,304.00 MiB, CUDA0 1,792.00 MiB" in note for note in out["notes"])  # partial offload named


def test_gemma2_unified_four_slots_and_its_swa_cache(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """n_seq_max 4, kv_unified true: one stream of 8192 cells; the SWA cache GGML_PAD(min(8192, 4096 × 4 + 512),
    256) = 8192 cells. 13 layers × 8192 × (4 × 256) × 2 B = 208 MiB for K, as printed."""
    model = write_gguf(tmp_path / "gemma2.gguf", GEMMA2_2B, "Gemma 2 2b It")
    out = explain_json(capsys, str(GEMMA2), "--model", str(model))
    assert out["verdict"] == "match" and out["predicted"]["token_capacity"] == 8192
    assert {check["name"] for check in out["pool_checks"]} == {"K", "V", "SWA K", "SWA V"}
    assert all(check["predicted_bytes"] == 13 * 8192 * 1024 * 2 == 208 * MIB for check in out["pool_checks"])


def test_gpt_oss_q8_0_with_the_ubatch_it_ran(capsys: pytest.CaptureFixture[str]) -> None:
    """The log prints 256 SWA cells: GGML_PAD(min(8192, 128 × 1 + 128), 256) at -ub 128; at the default -ub 512
    the rule gives 768 and kvtop says so."""
    config = str(CONFIGS / "openai--gpt-oss-20b.json")
    plain = explain_json(capsys, str(GPT_OSS), "--model", config)
    assert plain["verdict"] == "match" and plain["predicted"]["token_capacity"] == 8192
    assert any("the log prints 256 cells, the rule gives 768" in note for note in plain["notes"])
    told = explain_json(capsys, str(GPT_OSS), "--model", config, "-ub", "128")
    assert not any("sliding-window cache" in note for note in told["notes"])


def test_a_wrong_cache_type_is_a_mismatch_of_the_printed_sizes(capsys: pytest.CaptureFixture[str]) -> None:
    """Read with Llama-3.1-70B (80 layers) the printed 32 layers disagree; with Qwen2.5-7B (4 KV heads × 128 = 512
    elements a row, 28 layers) the printed K size too."""
    out = explain_json(capsys, str(HERMES), "--model", str(CONFIGS / "meta-llama--Llama-3.1-70B.json"))
    assert out["verdict"] == "mismatch"
    assert "the log's full-attention cache holds 32 layers; meta-llama--Llama-3.1-70B has 80" in out["cause"]
    other = explain_json(capsys, str(HERMES), "--model", str(CONFIGS / "Qwen--Qwen2.5-7B.json"))
    sizes = {check["name"]: check for check in other["pool_checks"]}
    assert other["verdict"] == "mismatch"
    assert sizes["K"]["predicted_bytes"] == 32768 * 28 * 512 * 2 and not sizes["K"]["within_rounding"]


def test_the_older_kv_self_size_line_under_ollamas_four_slots(capsys: pytest.CaptureFixture[str]) -> None:
    """`KV self size = 1024.00 MiB` prints no cells: they are `n_ctx = 8192` (Ollama's num_ctx 2048 × 4 slots,
    `n_ctx_per_seq = 2048`); 8192 × 32 layers × 1024 elements × 2 B = 512 MiB for K, as printed."""
    log = LOGS / "ollama-llama31-8b-np4-kv-self-size" / "engine.log"
    out = explain_json(capsys, str(log), "--model", str(CONFIGS / "meta-llama--Llama-3.1-8B.json"))
    assert out["verdict"] == "match"
    assert out["logged"]["token_capacity"] == out["predicted"]["token_capacity"] == 8192
    assert out["logged"]["context_length"] == 2048 and out["logged"]["max_running_requests"] == 4
    assert [check["name"] for check in out["pool_checks"]] == ["K", "V"]
    assert all(check["predicted_bytes"] == 8192 * 32 * 1024 * 2 == 512 * MIB for check in out["pool_checks"])
    assert all(check["within_rounding"] for check in out["pool_checks"])


def test_a_build_line_chooses_the_rules_and_is_not_taken_for_a_release(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """`main: build = 3673 (4084ca73)` (the banner line of llama.cpp's common code, as printed in
    ikawrakow/ik_llama.cpp PR #400's log): build 3673 is before the 256-cell padding; the log still explains."""
    log = tmp_path / "with-build.log"
    log.write_text("main: build = 3673 (4084ca73)\n" + GEMMA2.read_text())
    assert read_engine_log(str(log)).ranks(LlamacppRankLog)[0].builds == (3673,)
    model = write_gguf(tmp_path / "gemma2.gguf", GEMMA2_2B, "Gemma 2 2b It")
    out = explain_json(capsys, str(log), "--model", str(model))
    assert out["verdict"] == "match" and "build b3673" in out["version_detail"]


def test_the_header_names_the_builds_whose_rules_read_the_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`kvtop explain`'s first line names the rules it picked and why, never 'latest' for a picked era: the
    Ollama log prints `llama_new_context_with_model: KV self size = …` (no cells), the wording llama.cpp
    printed before its KV cache refactor of 2025-05 (b5400, src/llama-kv-cache-unified.cpp); a banner
    `main: build = 3673` names its build; a log with neither gets the latest rules."""
    llama = str(CONFIGS / "meta-llama--Llama-3.1-8B.json")
    kv_self = LOGS / "ollama-llama31-8b-np4-kv-self-size" / "engine.log"
    with_build = tmp_path / "with-build.log"
    with_build.write_text("main: build = 3673 (4084ca73)\n" + HERMES.read_text())
    headers = []
    for log in (kv_self, with_build, HERMES):
        assert main(["explain", str(log), "--model", llama, "--no-calibration-store"]) == 0
        headers.append(capsys.readouterr().out.splitlines()[0].split(" · ", 1)[1])
    assert headers == [
        "rules of builds before b5400 (no build line: its `kv_self` KV summary wording (before ~b5400))",
        "rules of b3673 (build b3673, from the log's build line)",
        "rules of latest (no build line: the latest rules)",
    ]
