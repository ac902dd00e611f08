"""Where the h-zheng E/PD notebook's language-only starts lost their KV (#27, session 71 helper E2): not in the
language server, in the free memory its machine had before the load.

SGLang 0.5.12 sizes the pool as `post − pre × (1 − mem_fraction_static)` (model_runner_kv_cache_mixin.py:62-76):
`pre` is the free memory (min over ranks) read in `init_torch_distributed` (model_runner.py:1299, called at :508),
`post` the same after the load. Two starts of one machine at two fractions therefore give `pre` = Δpool ÷ Δfraction,
and the load `pre − post`, from their logged `max_total_num_tokens` alone (× 24,064 B a token: 94 layers × K and V ×
1 KV head a rank × 128 × 1 B of fp8_e4m3). The three zmq language-only starts of 2026-06-18 (before the notebook's
06-22 'server recovery') meet on one pre-load figure, 137.10 GiB; the aggregated and Mooncake language-only starts of
06-23 on 138.01 GiB; both days load 55.84 GiB. So the language server holds nothing between the readings that the
aggregated one does not, and the 06-18 starts' miss (+1.5 %) is 0.90 GiB × the fraction that the machine lacked
before SGLang's first reading: not a language-only term (docs/engines/sglang.md, the E/PD section).
"""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from kvtop.cli import main
from kvtop.domain.wording import GIB
from tests.corpus_records import RECORDS
from tests.data_paths import DATA

MODEL = DATA / "calibration" / "configs" / "Qwen--Qwen3-VL-235B-A22B-Instruct-FP8.RECONSTRUCTED.json"
CELL = 94 * 2 * 1 * 128 * 1  # bytes a token a rank at TP 4: 4 KV heads ÷ 4 ranks, head_dim 128, fp8
PAGE_SLACK = Fraction(2 * 16 * CELL, GIB)  # two pools each floored to a 16-token page: GiB either way
_ID = "hzheng-epd-qwen3-vl-235b-fp8-h200-sglang0512dev-"
JUNE_18 = ("pd-tp4-m090", "pd-tp4-m086", "pd-tp4-m080-131k")  # zmq_to_scheduler, GPUs 1,2,3,5
JUNE_23 = ("agg-tp4-m080", "pd-tp4-m086-mooncake")  # aggregated and Mooncake language-only, GPUs 1,2,3,4


def _start(suffix: str) -> tuple[Fraction, Fraction]:
    """A start's --mem-fraction-static and its logged pool in GiB."""
    record = RECORDS[_ID + suffix]
    flags = record["flags"]
    fraction = Fraction(flags[flags.index("--mem-fraction-static") + 1])
    return fraction, Fraction(record["logged"]["tokens"] * CELL, GIB)


def _pre(a: str, b: str) -> Fraction:
    """The free memory before the load two starts of one machine imply: Δpool ÷ Δfraction."""
    (fa, pa), (fb, pb) = _start(a), _start(b)
    return (pa - pb) / (fa - fb)


def _load(suffix: str, pre: Fraction) -> Fraction:
    """What the load took (pre − post), post being the pool plus the reserve pre × (1 − fraction)."""
    fraction, pool = _start(suffix)
    return pre - (pool + pre * (1 - fraction))


def _plan(capsys: pytest.CaptureFixture[str], suffix: str) -> dict[str, object]:
    """kvtop's plan of the start's launch as its record types it (the encoder URLs as the harness gave them)."""
    flags = RECORDS[_ID + suffix]["flags"]
    urls = ["--encoder-urls", "http://127.0.0.1:30002"] if "--language-only" in flags else []
    command = " ".join(["python3 -m sglang.launch_server --model-path x", *flags, *urls])
    assert main(["plan", "--json", "--no-calibration-store", "--model", str(MODEL), "--engine", "sglang",
                 "--engine-version", "0.5.12", "--gpu", "H200", "--cmd", command]) == 0  # fmt: skip
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def test_one_machine_state_a_day_and_one_load() -> None:
    early = _pre(JUNE_18[0], JUNE_18[2])
    assert float(early) == pytest.approx(137.10, abs=0.01)
    # the three starts on one line
    assert abs(_pre(JUNE_18[0], JUNE_18[1]) - early) <= PAGE_SLACK / Fraction(4, 100)
    assert abs(_pre(JUNE_18[1], JUNE_18[2]) - early) <= PAGE_SLACK / Fraction(6, 100)
    late = _pre(*JUNE_23)
    assert float(late) == pytest.approx(138.01, abs=0.01)
    assert float(late - early) == pytest.approx(0.90, abs=0.01)
    loads = [_load(s, early) for s in JUNE_18] + [_load(s, late) for s in JUNE_23]
    assert float(loads[0]) == pytest.approx(55.84, abs=0.01)
    # the language-only server (either transport) loads what the aggregated one loads, to 0.01 GiB
    assert float(max(loads) - min(loads)) < 0.01


def test_the_plan_misses_only_the_free_memory_before_the_load(capsys: pytest.CaptureFixture[str]) -> None:
    """kvtop plans the language-only launch as the aggregated one at a given fraction (test_vlm_fraction_skip.py);
    its weights meet the load the logs imply, and with the 06-18 machine's pre-load memory in place of its estimate
    its own arithmetic gives the three 06-18 pools within 0.4 % (they miss by 1.5 - 1.6 % with it)."""
    early, late = _pre(JUNE_18[0], JUNE_18[2]), _pre(*JUNE_23)
    for suffix in JUNE_18:
        plan = _plan(capsys, suffix)
        weights = Fraction(int(plan["weights_bytes"]), GIB)  # type: ignore[call-overload]
        assert float(weights) == pytest.approx(float(_load(suffix, early)), rel=0.005)
        fraction, logged = _start(suffix)
        assert float(early * fraction - weights) == pytest.approx(float(logged), rel=0.004)
    # the plan's free memory before the load, and its context term's error: the 06-23 machine is inside, 06-18's not
    steps = {s["label"]: s["bytes"] for s in plan["steps"]}  # type: ignore[attr-defined]
    terms = {t["term"]: t for t in plan["terms"]}  # type: ignore[attr-defined]
    planned = Fraction(int(steps["free before weight load (min over ranks)"]), GIB)
    error = Fraction(int(terms["context"]["error_bytes"]), GIB)
    assert abs(planned - late) < error < planned - early
