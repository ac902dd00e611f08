"""One truth for a launch's interval: `kvtop explain LOG --gpu` reads its ends from the function `plan` reads them from
(`PreloadEstimate.figures`, the errors of every term together shared among the terms, and `interval_ends.interval_ends`),
so the same launch has the same interval in both, and explain's is narrower only by the terms its log measures.

Before session 72, explain added the estimated input's move and each other term's move in tokens as independent
errors (the root of their squares) where plan shares the combined error among the terms: Qwen2.5-7B-Instruct on an
L4 at vLLM 0.28.0 got 35,477 – 113,534 from explain and 35,584 – 119,088 from plan.

The expected ends are worked by hand here: the terms' figures and errors as `plan --json` lists them, combined as
the interval rule says (the root of the squares of the errors towards an end, shared in proportion to them, no
term below 0 bytes nor beyond its own error) and solved with vLLM's own budget arithmetic (v0.28.0
`request_memory`: ceil(total × 0.92); the KV memory less the weights and the non-KV memory; blocks of 16 tokens of
28 layers × 2 × 4 KV heads × 128 × 2 B; the tokens as blocks × 16).

The log is synthetic (no real start of this launch is held): its pool line, 'GPU KV cache size: 86,432 tokens', is
kvtop's own prediction of the launch, so it checks nothing of kvtop's accuracy (the verdict 'match' follows from it).
It is not the subject: explain's predicted interval does not read the logged pool, which the first test shows by
giving a pool kvtop did not predict (80,000 tokens) and getting the same interval.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from kvtop.cli import main
from tests.conftest import CASES, CONFIGS
from tests.explain_cli import explain_json

QWEN = str(CONFIGS / "Qwen--Qwen2.5-7B-Instruct.json")
BLOCK = 16 * 28 * 2 * 4 * 128 * 2  # 917,504 B: one block of 16 tokens, K and V, 28 layers, 4 KV heads of 128, bf16
# the log's lines only: the release (vLLM 0.28.0's api_server prints it) and the pool (kv_cache_utils.py)
VERSION = "INFO 05-01 10:00:00 [api_server.py:1000] vLLM API server version 0.28.0"
POOL = "INFO 05-01 10:00:30 [kv_cache_utils.py:1000] GPU KV cache size: 86,432 tokens"
WEIGHTS = "INFO 05-01 10:00:20 [gpu_model_runner.py:2000] Model loading took 14.25 GiB memory and 5.2 seconds"


def _plan(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main(["plan", "--engine", "vllm", "--engine-version", "0.28.0", "--model", QWEN, "--gpu", "L4",
                 *argv, "--no-calibration-store", "--json"]) == 0  # fmt: skip
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    return out


def _log(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "engine.log"
    path.write_text("\n".join(lines) + "\n")
    return path


def _tokens(total: int, weights: int, non_kv: int) -> int:
    """vLLM 0.28.0's pool by hand: ceil(total × 0.92) less the weights and the non-KV memory, in whole blocks."""
    return (math.ceil(total * 0.92) - weights - non_kv) // BLOCK * 16


def _ends_by_hand(terms: dict[str, dict[str, int]], weights: int | None) -> tuple[int, int]:
    """The interval's ends from the terms' figures and errors, shared as the interval rule shares them; `weights`:
    the log's (no error), else the weights term's."""
    runtime = ("activation", "non_torch", "cuda_graphs")
    total, non_kv = terms["cuda_total"]["bytes"], sum(terms[t]["bytes"] for t in runtime)
    book = weights if weights is not None else terms["weights"]["bytes"]
    moving = ("cuda_total", *(() if weights is not None else ("weights",)), *runtime)
    # the low end: each term's error above its figure (CUDA's total: below it); the root of their squares, shared
    # in proportion to the errors (none meets a cap: each share is below its term's error, and only CUDA's total
    # moves down, by far less than its figure)
    errors = {t: terms[t]["error_bytes"] for t in moving}
    share = math.sqrt(sum(e * e for e in errors.values())) / sum(errors.values())
    move = {t: round(e * share) for t, e in errors.items()}
    low = _tokens(total - move["cuda_total"], book + move.get("weights", 0), non_kv + sum(move[t] for t in runtime))
    # the high end: the errors below the figures together (√Σe²) exceed the runtime terms' 1.53 GiB, so each runtime
    # term stops at 0 bytes and CUDA's total and the weights move by their whole error (the rest of the share)
    below = [terms[t]["error_below_bytes"] for t in moving]
    assert math.sqrt(sum(e * e for e in below)) > non_kv + errors["cuda_total"] + errors.get("weights", 0)
    high = _tokens(total + terms["cuda_total"]["error_bytes"], book - (0 if weights is not None else errors["weights"]), 0)
    return low, high


def test_plan_and_explain_give_one_launch_one_interval(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A log of its release and pool only: explain estimates the non-KV memory as plan does and measures nothing
    else, so its interval is plan's, both the hand-worked 35,648 – 119,088 (explain's was 35,477 – 113,534; 35,584 at the low end before the refit
    5f9ab079 moved the committed errors, vllm.cuda_graphs' 1,044,712,560 to 1,038,489,157 B among them)."""
    plan = _plan(capsys)
    terms = {term["term"]: term for term in plan["terms"]}
    assert set(terms) == {"cuda_total", "weights", "activation", "non_torch", "cuda_graphs"}
    explained = explain_json(capsys, _log(tmp_path, VERSION, POOL), "--model", QWEN, "--gpu", "L4",
                             "--no-calibration-store")  # fmt: skip
    predicted = explained["predicted"]
    assert predicted["token_capacity"] == plan["token_capacity"] == _tokens(
        terms["cuda_total"]["bytes"], terms["weights"]["bytes"],
        sum(terms[t]["bytes"] for t in ("activation", "non_torch", "cuda_graphs")),
    ) == 86_432
    by_hand = _ends_by_hand(terms, None)
    assert by_hand == (35_648, 119_088)
    assert (plan["token_capacity_min"], plan["token_capacity_max"]) == by_hand
    assert (predicted["token_capacity_min"], predicted["token_capacity_max"]) == by_hand
    assert explained["verdict"] == "match"  # the synthetic pool is kvtop's own figure (module docstring)
    other_pool = POOL.replace("86,432", "80,000")  # a pool kvtop did not predict: the same interval
    elsewhere = explain_json(capsys, _log(tmp_path, VERSION, other_pool), "--model", QWEN, "--gpu", "L4",
                             "--no-calibration-store")["predicted"]  # fmt: skip
    assert (elsewhere["token_capacity"], elsewhere["token_capacity_min"], elsewhere["token_capacity_max"]) == (86_432, *by_hand)


def test_weights_the_log_measures_narrow_explains_interval(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The same log with vLLM's `Model loading took 14.25 GiB` line: the weights are measured (no error), so explain's
    interval is narrower than the blind plan's, and equal to plan's given the same weights (--weights-memory): by hand
    35,776 – 115,248 (35,696 at the low end before the refit 5f9ab079 moved the committed errors)."""
    blind = _plan(capsys)
    weights = round(14.25 * 2**30)  # 15,300,820,992 B: the log's two decimals of GiB
    given = _plan(capsys, "--weights-memory", f"{weights}B")
    explained = explain_json(capsys, _log(tmp_path, VERSION, WEIGHTS, POOL), "--model", QWEN, "--gpu", "L4",
                             "--no-calibration-store")  # fmt: skip
    predicted = explained["predicted"]
    terms = {term["term"]: term for term in blind["terms"]}
    by_hand = _ends_by_hand(terms, weights)
    assert by_hand == (35_776, 115_248)
    assert (predicted["token_capacity_min"], predicted["token_capacity_max"]) == by_hand
    assert (given["token_capacity_min"], given["token_capacity_max"]) == by_hand
    assert blind["token_capacity_min"] < by_hand[0] and by_hand[1] < blind["token_capacity_max"]
    assert [other["term"] for other in explained["estimated"]["others"]] == ["cuda_total"]  # the weights: measured


def test_other_engines_estimates_give_plans_interval(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Where the log measures nothing plan estimates, every engine's rebuild has plan's interval: SGLang C13 without
    its `Load weight` lines (the free memory before the load estimated; before session 72 438,582 – 446,141 against
    plan's 438,538 – 446,185) and lmdeploy#4285's TurboMind TP 8 (1,221,537 – 1,275,371 against 1,217,856 – 1,279,040)."""
    text = (CASES / "sglang/C13/engine.log").read_text()
    excerpt = tmp_path / "c13.log"
    excerpt.write_text("\n".join(line for line in text.splitlines() if "Load weight" not in line))
    launch = ("--model", str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"), "--mem-fraction-static", "0.88",
              "--gpu", "H100", "--no-calibration-store")  # fmt: skip
    explained = explain_json(capsys, excerpt, *launch)["predicted"]
    assert main(["plan", "--engine", "sglang", "--engine-version", "0.4.1.post7", *launch, "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    ends = (plan["token_capacity_min"], plan["token_capacity_max"])
    assert (explained["token_capacity_min"], explained["token_capacity_max"]) == ends == (438_538, 446_185)
    log = CASES / "lmdeploy/lmdeploy-4285-internvl3-78b-tp8-a800/engine.log"
    launch = ("--model", str(CONFIGS / "Qwen--Qwen2.5-72B.json"), "--tp", "8", "--gpu", "A800", "--no-calibration-store")
    explained_out = explain_json(capsys, log, *launch)
    assert main(["plan", "--engine", "lmdeploy", "--engine-version", explained_out["engine_version"], *launch,
                 "--json"]) == 0  # fmt: skip
    plan = json.loads(capsys.readouterr().out)
    ends = (plan["token_capacity_min"], plan["token_capacity_max"])
    predicted = explained_out["predicted"]
    assert (predicted["token_capacity_min"], predicted["token_capacity_max"]) == ends == (1_217_856, 1_279_040)
