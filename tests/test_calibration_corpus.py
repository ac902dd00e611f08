"""The calibration corpus stands behind every fitted constant and every figure docs/calibration.md shows.

- every record names its source; a record that references a case in tests/data/cases agrees with what
  kvtop's own log reader reads from that case's log;
- the constants committed in the engines' packages are the ones the corpus fits;
- docs/calibration.md is what `benchmarks/calibration/run.py --write` renders (a stale doc fails here);
- the held-out judgement is honest: a record's blind plan never uses a fit it took part in.

The tests of the fits, the doc and the held-out capacity read one judgement (`corpus_judgement`, tests/conftest.py:
made once per session, on one xdist worker by their group), the one run.py renders the doc from.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

import pytest

from benchmarks.calibration.corpus import CORPUS, load_all
from benchmarks.calibration.evaluate import Judged, blind, fit_all
from benchmarks.calibration.judgement import Judgement
from benchmarks.calibration.run import DOC, fitted_blocks, render_doc, stale
from kvtop.domain.engines.vllm.log_records import VllmRankLog
from kvtop.sources.engine_logs import read_engine_log
from tests.conftest import JUDGEMENT_GROUP
from tests.data_paths import CASES

CORPUS_RECORDS = load_all()
ONE_WORKER = pytest.mark.xdist_group(JUDGEMENT_GROUP)


def test_every_record_has_a_source_that_exists() -> None:
    for records in CORPUS_RECORDS.values():
        for record in records:
            source = str(record.raw["source"])
            indexed = source.startswith("public GitHub file, search-index id ")  # read whole; its repository unnamed
            public = source.startswith("https://")  # a public thread, file or page (GitHub, an engine's docs, a blog)
            assert public or indexed or (CASES.parent / source).is_dir(), record.id
            assert record.figures or record.tokens, f"{record.id}: no printed figure"
    assert (CORPUS / "SOURCES.md").read_text().count("|") > 10


def test_the_case_records_hold_what_the_case_logs_print() -> None:
    """vLLM's V0 `Memory profiling` figures, read by kvtop's reader from the cases' logs."""
    checked = 0
    for record in CORPUS_RECORDS["vllm"]:
        source = str(record.raw["source"])
        if not source.startswith("cases/"):
            continue
        log = read_engine_log(CASES.parent / source / "engine.log")
        profiles = [p for rank in log.ranks(VllmRankLog) for p in rank.v0_profiles]
        if not profiles or "total_gpu_memory" not in profiles[0].figures:
            continue
        figures = profiles[0].figures
        assert figures["total_gpu_memory"].contains(record.figures["cuda_total"]), record.id
        assert figures["kv_cache_size"].contains(record.figures["kv"]), record.id
        assert figures["non_torch_memory"].contains(record.figures["non_torch"]), record.id
        checked += 1
    assert checked >= 3


@ONE_WORKER
def test_the_committed_fits_are_the_corpus_fits(corpus_judgement: Judgement) -> None:
    assert stale(fitted_blocks(corpus_judgement)) == []


def test_a_blind_plan_never_sees_its_own_record() -> None:
    """The v0.19.0 Qwen2.5-7B record logged 1,096,000 tokens; its blind plan differs from the one made with
    fits that include it (so the left-out fit really left it out), and still lands within 1 %."""
    record = next(r for r in CORPUS_RECORDS["vllm"] if r.id == "llmd-v019-qwen2.5-7b-tp1")
    held_out = blind(record, fit_all(CORPUS_RECORDS, leave_out=record.id), weights_logged=True)
    seen = blind(record, fit_all(CORPUS_RECORDS), weights_logged=True)
    assert held_out is not None and seen is not None and held_out.truth == 1_096_000
    assert held_out.predicted != seen.predicted
    assert abs(held_out.error) < 0.01 and held_out.covered


@ONE_WORKER
def test_docs_calibration_is_what_the_corpus_gives(corpus_judgement: Judgement) -> None:
    expected = render_doc(corpus_judgement)
    assert DOC.read_text() == expected, "docs/calibration.md is stale: python benchmarks/calibration/run.py --write"


def _judged(judgement: Judgement, engine: str, weights_logged: bool) -> Sequence[Judged]:
    """The engine's records as docs/calibration.md judges them: each planned with fits and an interval scale that
    left its whole source out (leave-one-source-out), with the weights its log printed or fully blind."""
    return (judgement.logged if weights_logged else judgement.blind)[engine]


@ONE_WORKER
@pytest.mark.parametrize("weights_logged", [True, False])
def test_vllm_held_out_capacity(corpus_judgement: Judgement, weights_logged: bool) -> None:
    """What docs/calibration.md claims for vLLM, on the judgement it publishes (each record held out with its whole
    source): with the logged weights, 124 records of 68 sources, the targets hold (median ≤ 2 %, ≥ 90 % within 5 %,
    the interval holding ≥ 90 %: 94.4 % and 95.2 % in session 51); fully blind, 136 records of 84 sources, they hold
    too since session 51 (92.6 % and 96.3 %): vLLM v0.6.4's non-torch figure holds the CUDA context (worker.py:206-213)
    and is planned with the engine-neutral one-process context (`cuda_context.py`), which brought the vllm#10517
    RTX 3090 starts from +6.6 / +8.4 % to −2.8 / −4.0 %. Session 51 also added twenty-six held-out starts (110 → 136;
    98 → 124 with their weights printed), split llm-d-planner's January sweep (v0.14.0 by its date) from its v0.11.0
    start (a source more), and made the interval scale the larger of the blind and the logged-weights plans' scales:
    the blind scale alone (× 0.62) held the logged-weights intervals in 88.6 %. Session 52 added thirty-four more
    held-out starts and removed one start recorded twice (136 → 170 records of 108 sources fully blind; 124 → 156 of
    90 with their weights printed): 91.2 % within 5 % and 95.3 % of intervals holding fully blind, 92.3 % and 93.6 %
    with the logged weights; most of the new misses are small pools on small cards (Colab T4s, a GTX 1080).
    Session 53 (hunt_v) added six more held-out starts of six sources (170 → 176 fully blind; 156 → 159 with their
    weights printed), three of them misses: two multimodal profiles and a T4's CUDA-graph estimate; helper b2 five
    more (InferenceX gpt-oss-120b on H200 at TP 1–8, v0.22; two sources), all within 5 % (176 → 181 of 116 sources
    fully blind; 159 → 164 of 95 with their weights printed). The PP stage's unguarded ends, the logged load read as
    stage 0's under PP, Blackwell's all-reduce fusion workspace and Qwen2.5-VL's v0.9.2 encoder profile moved misses
    inside (kubesimplify PP 4 +9.8 → +0.7 %, the llm-d 72B TP 2 pair −10.7 / −11.3 → −4.5 / −5.1 %). Session 54
    (hunt_v) added thirty-five held-out starts of eight sources (six repositories or files, two of them at two
    releases): a GB300 node's MiniMax-M2.5 / Kimi-K2.5 NVFP4 starts (+1.5 – +4.6 %), two sweeps (Qwen3-8B on an H100,
    Llama / Gemma on a B200; all within 3.1 %), Kaggle T4 × 2 and a Qwen3.5-27B TP 4 start (within 4.3 %) and an RTX
    PRO 6000's gpt-oss-120b on Marlin (+312 % of KV): 181 → 216 records of 124 sources fully blind (93.1 % within 5 %,
    92.6 % of intervals holding, median 0.86 %), 164 → 198 of 102 with their weights printed (94.9 %, 91.9 %, 0.60 %).
    Helpers hunt_v2, hunt_v3 and hunt_v4 added forty-eight more of twenty-six sources (committed server logs: an A40
    fork, H100 NVL / L40S serverless and profiling studies, RTX 4090 / 3090 / 2080 Ti / 3060 Ti / A4000 cards, Kimi-K2
    on 8 × H200, a speculative-decoding study on A100s; at most six starts a source from hunt_v3 on), and the
    CUDA-graph estimates ten older records printed were read: 216 → 264 records of 144 sources fully blind (93.6 %
    within 5 %, 94.3 % of intervals holding with the interval scale floored at 1), 198 → 239 of 118 with their
    weights printed (95.0 %, 96.7 %).

    Until session 50 this test refitted every term without each record alone (147 fits, 3 minutes on 2 cores a
    case) and judged the unscaled intervals of that other judgement; it now checks the leave-one-source-out one the
    doc shows (a sibling start of the same source no longer helps its plan, and the interval is scaled as the doc's)."""
    judged = _judged(corpus_judgement, "vllm", weights_logged)
    errors = sorted(abs(j.error) for j in judged)
    assert len(judged) == (239 if weights_logged else 264)
    assert len({j.record.source for j in judged}) == (118 if weights_logged else 144)
    assert statistics.median(errors) <= 0.02 and not any(math.isnan(e) for e in errors)
    assert sum(j.covered for j in judged) / len(judged) >= 0.9
    assert sum(e <= 0.05 for e in errors) / len(errors) >= 0.9


def test_a_derived_figure_is_the_engines_own_definition_of_the_printed_ones() -> None:
    """SGLang #4760 printed `avail mem=63.48 GB, mem usage=15.11 GB` at `Load weight end`; SGLang's mem
    usage is the free memory before the load less after it, so before the load 63.48 + 15.11 = 78.59 GiB."""
    record = next(r for r in CORPUS_RECORDS["sglang"] if r.id == "sglang-pr4760-llama-3.1-8b-h100")
    assert abs(record.figures["free_before_load"] - 78.59 * 2**30) <= 1
    assert record.figures["weights"] == round(15.11 * 2**30)


@ONE_WORKER
@pytest.mark.parametrize("weights_logged", [True, False])
def test_sglang_held_out_capacity(corpus_judgement: Judgement, weights_logged: bool) -> None:
    """What docs/calibration.md claims for SGLang, on the judgement it publishes (each record held out with its whole
    source, its interval scaled by the other sources' scores), against the capacity each log printed (`KV Cache is
    allocated. #tokens` / `max_total_num_tokens`). The counts are the records whose log prints a capacity of a model
    with a config at hand: 24 of 22 sources fully blind, 19 of 17 with the logged weights (the doc's tables; session
    51 added five held-out starts (an L40S Qwen2.5-1.5B start at 0.5.10, −0.8 %, besides): an L40S start, udbhav's sglang.log, +0.05 % blind; an A100 start +0.18 %; and a
    prefill and a decode server of DeepSeek-R1 at TP 16 over two H100 nodes, −1.9 % each).

    Since session 50 SGLang's context is fitted on the GPU's SM count (a per-SM reservation of the CUDA context) and
    TP doublings on NVLink / PCIe, with no "Blackwell" term (the B200's large contexts were its total estimated from
    nvidia-smi's: three torch messages print 178.35 GiB): the RTX 5080 start (84 SMs, 0.26 GiB of context) lands −1.4 %
    with its weights and QwQ-32B on 4 × L4 (58 SMs, 0.41 GiB) +2.8 %, where the constant gave −7.2 % and −8.8 %.
    With the logged weights 18 of 19 within 5 % (94.7 %: the RTX 3090's DeepSeek-R1 distill at +5.8 %, a Docker
    Desktop / WSL2 host holding 0.38 GiB more before the start than a Linux host, not modelled) and every interval
    holding; fully blind 23 of 24 within 5 % (95.8 %, since session 51's caching-allocator rounding of the weights,
    `torch_segments.py`: SGLang's `mem usage` counts whole 2 MiB segments, 226 MiB a rank for QwQ-32B at TP 4, which
    took that start from +12.2 % to +4.4 %; the RTX 3090 start at +6.6 %) and 22 of 24 intervals (91.7 %: the B200's
    and the GB300's DeepSeek-R1-0528 at +1.8 % and +2.3 % outside, their intervals narrower since the weights'
    error shrank).

    Session 52: the Qwen3-14B 4 × RTX 4090 start, recorded twice under one id, is kept once, and a Colab T4 start
    (0.4.3.post2) joined (24 records of 23 sources fully blind, 19 of 18 with the logged weights); DeepSeek's MLA
    copies of kv_b_proj (`mla_split.py`) and a rebuilt config's misspelt exclusions took the B200 and GB300
    DeepSeek-R1-0528 starts inside their intervals (+1.2 %, +0.2 %); QwQ-32B on 4 × L4 moved from +4.4 % to +5.8 %
    as the L4's CUDA total (Colab's L4 logs) and the context fit moved; with the logged weights the Qwen3-VL-8B H200
    start (−0.4 %) falls just outside its interval.

    Session 53: three held-out starts joined (two DeepSeek-R1-0528 NVFP4 starts on B200 at 0.5.9, one FP8 on H200 at
    0.5.12: 27 records of 25 sources fully blind, 22 of 20 with the logged weights). The B200 pair's leaked NVFP4
    block-scale copies (`blockscale_leak.py`, 0.5.3–0.5.11) took them from +21.0 / +4.7 % to about 0; a multimodal
    model's prefill graphs are off before the reserve is sized (`prefill_graphs_off.py`), which took the Qwen3-VL-8B
    H200 start inside its interval. With the interval scale refitted on the new scores, the L40S udbhav start
    (−2.9 %, its context over-predicted on 142 SMs) falls just outside its logged-weights interval.

    Session 54: fifteen held-out starts joined (GB300 MiniMax-M2.5 / Kimi-K2.5 at 0.5.13, RTX 4090 at 0.5.18, 0.5.20
    HiCache runs on A100 / H100 PCIe / H200, Kimi-K2.6 on 8 × H20, a 0.4.9.post3 Llama-2-7b: 42 records of 31 sources
    fully blind, 34 of 25 with the logged weights), all within 2 % blind. The CUDA context is now fitted on the GPU's
    resident threads (a stack per thread: 1,536 a SM on the L40S's and RTX cards' architectures, 2,048 on the
    data-center ones), which took the L40S udbhav start inside its logged-weights interval (−1.9 %); the RTX 3090
    start moves to +8.0 % (its WSL desktop's memory, not modelled); the interval scale is floored at 1.

    Until session 50 this test refitted every term without each record alone and judged that other judgement's
    unscaled intervals; it now checks the leave-one-source-out judgement the doc shows."""
    judged = _judged(corpus_judgement, "sglang", weights_logged)
    errors = sorted(abs(j.error) for j in judged)
    assert len(judged) == (34 if weights_logged else 42)
    assert len({j.record.source for j in judged}) == (25 if weights_logged else 31)
    assert statistics.median(errors) <= 0.02
    missed = {j.record.id: j.truth for j in judged if abs(j.error) > 0.05}
    uncovered = [j.record.id for j in judged if not j.covered]
    if weights_logged:
        assert missed == {"my-deepseek-r1-distill-qwen-7b-3090": 105_531}
        assert uncovered == []
    else:
        assert missed == {"my-deepseek-r1-distill-qwen-7b-3090": 105_531, "file47376055009-qwq-32b-4xl4-tp4": 46_611}
        assert uncovered == []


def test_sglang_context_features_are_the_sms_the_link_and_the_tp_group() -> None:
    """The context's features of four starts: the GPU's resident threads ÷ (100 SMs × 2,048) (NVIDIA's datasheets: B200
    148, RTX 5090 170, H200 132, RTX 4090 128 SMs; the CUDA C++ Programming Guide's threads per SM: 2,048 at compute
    capability 9.0 and 10.0, 1,536 at 8.9 and 12.0 — so 170 × 1,536 / 2,048 = 127.5 for the RTX 5090, 128 × 1,536 /
    2,048 = 96 for the RTX 4090), and the TP doublings by link: the H200 joins its 8 GPUs over NVLink (3 doublings),
    the RTX 4090s over PCIe (2 doublings at TP 4)."""
    from kvtop.domain.engines.sglang.calibration import context_features

    by_id = {r.id: r for r in CORPUS_RECORDS["sglang"]}
    assert context_features(by_id["file52132052242-qwen3-8b-b200"].inputs()) == pytest.approx((1.48, 0.0, 0.0))
    assert context_features(by_id["file70468080142-gemma-4-26b-a4b-fp8-5090"].inputs()) == pytest.approx((1.275, 0.0, 0.0))
    assert context_features(by_id["case-sglang-C04-llama-70b-h200-tp8"].inputs()) == pytest.approx((1.32, 3.0, 0.0))
    assert context_features(by_id["file55529353766-qwen3-14b-4x4090-tp4"].inputs()) == pytest.approx((0.96, 0.0, 2.0))


def test_sglang_context_is_what_the_b200_log_left_free() -> None:
    """Qwen3-8B at SGLang's defaults on one B200 printed `Load weight begin. avail mem=177.57 GB`: the context the
    corpus observes is CUDA's B200 total (178.35 GiB as three torch messages print it, gpus.jsonl since session 50)
    less 177.57 GiB, and the fit that left this record out plans it within its held-out error."""
    from benchmarks.calibration.evaluate import observed
    from kvtop.domain.calibration.terms import Term
    from kvtop.domain.engines.sglang.calibration import context

    record = next(r for r in CORPUS_RECORDS["sglang"] if r.id == "file52132052242-qwen3-8b-b200")
    fits = fit_all(CORPUS_RECORDS, leave_out=record.id)
    total = round(fits["cuda_total.B200"].coefficients[0] * 2**30)
    assert abs(total - 178.35 * 2**30) < 0.01 * 2**30
    measured = observed(record, Term.CONTEXT, fits)
    assert measured is not None and abs(measured - (total - round(177.57 * 2**30))) <= 1
    planned = context(record.inputs(), fits)
    assert planned.source == "calibrated" and abs(planned.bytes - measured) <= planned.error_bytes
