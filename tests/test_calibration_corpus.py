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
from benchmarks.calibration.evaluate import Judged, blind
from benchmarks.calibration.judgement import Judgement
from benchmarks.calibration.run import DOC, fitted_blocks, render_doc, stale
from kvtop.domain.engines.vllm.log_records import VllmRankLog
from kvtop.sources.engine_logs import read_engine_log
from tests.calibration_fits import ONE_WORKER as SHARED_FITS
from tests.calibration_fits import corpus_fits
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


@SHARED_FITS
def test_a_blind_plan_never_sees_its_own_record() -> None:
    """The v0.19.0 Qwen2.5-7B record logged 1,096,000 tokens; the fits of its release's runtime terms made without it
    differ from those made with it (so the left-out fit really left it out; its blind plan may still round to the
    same page and interval once hundreds of records carry the fit, as in session 67), and that blind plan still lands
    within 1 %."""
    record = next(r for r in CORPUS_RECORDS["vllm"] if r.id == "llmd-v019-qwen2.5-7b-tp1")
    without, with_it = corpus_fits(record.id), corpus_fits()
    assert all(without[term] != with_it[term] for term in ("vllm.activation.v17", "vllm.non_torch.v18"))
    held_out = blind(record, without, weights_logged=True)
    assert held_out is not None and held_out.truth == 1_096_000
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
    """What docs/calibration.md claims for vLLM, on the judgement it publishes: each record planned with fits and an
    interval scale that left its whole source out (a sibling start of the same source would predict it better than a
    plan predicts a log from elsewhere), fully blind and with the weights its log printed; the targets are #27's
    (median ≤ 2 %, ≥ 90 % within 5 %, ≥ 90 % of intervals holding the log's figure). How the counts and misses moved
    session by session: docs/calibration_history.md."""
    judged = _judged(corpus_judgement, "vllm", weights_logged)
    errors = sorted(abs(j.error) for j in judged)
    assert len(judged) == (504 if weights_logged else 720)
    assert len({j.record.source for j in judged}) == (244 if weights_logged else 349)
    assert statistics.median(errors) <= 0.02 and not any(math.isnan(e) for e in errors)
    assert sum(j.covered for j in judged) / len(judged) >= 0.9
    # within 5 %: met with the weights logged in session 72 (455 of 504, 90.3 %, after its 14 held-out vLLM starts and its
    # rules: DFlash drafters, Qwen3-Next's MTP layer, the hybrid prefix-caching class calibrated on any captured graphs),
    # in session 71 (450 of 498, 90.4 %, after its 24 held-out vLLM starts and its
    # rules: the sm_120 pinned segment at the centre, the runner variable, the cold copy on the first stage only) and in
    # session 70 (447 of 496, 90.1 %, after its held-out vLLM starts and its
    # rules: the cold compile's embedding-table copy before v0.29.0 (combo kernels on from v0.11.1; inside V1's peak where
    # said cold, in place of the V1 figure beside V2's profile), the Dynamo image's FlashInfer sampler, Ray Serve's
    # FlashInfer sampler read from its logs); NOT met before (434 of 487, 89.1 %, session 69 after its 32 held-out vLLM starts and its
    # rules: a cold compile's embedding-table copy at V2's profile, a multimodal V2 compile's peak, extract_hidden_states;
    # 407 of 465, 87.5 %, session 68 after its 33 held-out starts, most
    # within, and its rules: vLLM's counted sampler peak from v0.17.0, Qwen3.5's encoder profile; 392 of 456, 86.0 %, session 67 after its 37 held-out
    # starts: gemma-4-E2B on T4s (its double-wide MLP and audio tower booked since: now low), Jetson Thor, one
    # 4 x RTX 3090 host's one-sequence Qwen3.5 starts, WSL2 and desktop cards; 381 of 433, 88.0 %, session 66 after its 32 held-out
    # starts: GB10 unified-memory and laptop starts, one RTX 3090 lab's cold small-batch start; 374 of 420,
    # 89.0 %, session 65 after its 53 held-out starts: the gemma-4 PP/TP ladder on RTX 3090s, none within, and
    # warm-compile T4 starts; 331 of 367 met it mid-session with the Qwen3-VL-Embedding T4 start given its
    # checkpoint's processor; 330 of 367, 89.9 %, session 64; 326 of 363 in session 63: the laptop sweeps
    # under WSL2, an RTX 4070 Laptop's six AWQ starts and an RTX 4080 Laptop's nine, a constant 0.18-0.2 GiB
    # the host holds beside the weights); fully blind NOT met since session 59 (628 of 720, 87.2 %, session 72: the hybrid class's calibrated centre, the
    # DFlash drafters, Qwen3-Next's MTP layer; 612 of 706, 86.7 %, session 71: the 0.1.x batch, the sm_120
    # pinned segment, the msamuelson starts said cold; 572 of 682, 83.9 %, session 70, whose
    # held-out GB10 NVFP4 and RTX 5060 Ti WSL2 starts miss; 552 of 669, 82.5 %, session 69: host XY's RTX 4090, a card holding 1.0-1.4 GiB
    # for another process in six of its nine starts; 521 of 637, 81.8 %, session 68; 495 of 613, 80.8 %, session 67;
    # 480 of 584, 82.2 %, session 66; 458 of 553, 82.8 %, session 65; 400 of 471, session 64; 383 of 451 in session 63): the held-out
    # starts added since include cold torch.compile starts at v0.29.0 (akamas L4, wrbooth RTX 5090) whose
    # compile holds 0.9-2.6 GiB inside the profile, and WSL2 desktop starts (an RTX 4090 lab's 0.27.1 notes,
    # session 61's kuotunyu RTX 4090 desktop: ten starts of one card, seven beyond 5 %), and session 62's
    # warm-cache T4 restarts and desktop RTX 3060 / GTX 1650 / RTX 5070 Ti starts, all invisible at launch
    # (docs/calibration_history.md, docs/engines/vllm.md §2.6)
    assert sum(e <= 0.05 for e in errors) == (455 if weights_logged else 628)
    assert sum(e <= 0.05 for e in errors) / len(errors) >= (0.90 if weights_logged else 0.86)


def test_a_derived_figure_is_the_engines_own_definition_of_the_printed_ones() -> None:
    """SGLang #4760 printed `avail mem=63.48 GB, mem usage=15.11 GB` at `Load weight end`; SGLang's mem
    usage is the free memory before the load less after it, so before the load 63.48 + 15.11 = 78.59 GiB."""
    record = next(r for r in CORPUS_RECORDS["sglang"] if r.id == "sglang-pr4760-llama-3.1-8b-h100")
    assert abs(record.figures["free_before_load"] - 78.59 * 2**30) <= 1
    assert record.figures["weights"] == round(15.11 * 2**30)


# SGLang starts on unified-memory GB10 hosts beyond 5 % (session 71: one DGX Spark's journals, SOURCES.md, session 71
# helpers B and B2; the yukimaru record within since session 72, −5.45 → −4.70 %: the host's share no longer counts
# the engine's CUDA context twice, docs/calibration_history.md)
GB10_MISSED = {"coralleicn-dgxspark-gemma-4-26b-a4b-it-gb10-sglang0518dev-m075-len32768": 213_761,
               "coralleicn-dgxspark-qwen3.8-27b-fp8-gb10-sglang0518dev-m045-mamba16-bf16state": 337_292,
               "coralleicn-dgxspark-qwen3.8-27b-fp8-gb10-sglang0518dev-m045-mamba16-mtp3": 221_044,
               "coralleicn-dgxspark-qwen3.8-27b-fp8-gb10-sglang0518dev-m085-mamba384-mtp3-bs96": 92_478,
               "coralleicn-dgxspark-qwen3.8-27b-nvfp4-gb10-sglang0518dev-m045-ratio459-fp8kv": 176_670,
               "coralleicn-dgxspark-gemma-4-e4b-it-gb10-sglang0518dev-m085-len32768": 997_846}  # fmt: skip


@ONE_WORKER
@pytest.mark.parametrize("weights_logged", [True, False])
def test_sglang_held_out_capacity(corpus_judgement: Judgement, weights_logged: bool) -> None:
    """What docs/calibration.md claims for SGLang, on the judgement it publishes (each record held out with its whole
    source, its interval scaled by the other sources' scores), against the capacity each log printed (`KV Cache is
    allocated. #tokens` / `max_total_num_tokens`): the records whose log prints a capacity of a model with a config at
    hand. The misses beyond 5 % are named with their logged tokens: the RTX 3090 start runs under WSL2, whose desktop
    holds memory before the start that a Linux host does not (the desktop's share is set aside at the interval's low end,
    not modelled at its centre; its CUDA total is the whole card under WSL2); QwQ-32B on 4 × L4 fully blind left the misses in
    session 61 (+5.5 → +4.9 %: its rope cache at Qwen2's whole head is unchanged; the fits moved with the new records).
    Qwen3.5-9B on an RTX 4090 (session 61, Extious, +10.8 % logged, blind beyond 5 %) is a 0.21 GiB pool where 0.03 GiB
    is a thousand tokens: its interval holds. Devstral-Small-2
    AWQ on 2 × RTX 3090 left the misses in session 58 (+6.6 → +3.4 %: its checkpoint's YaRN block makes Ministral3's
    second rope cache 192 MiB). An RTX 3060 under Docker Desktop on WSL2 (session 60, +87.7 %) held about 1 GiB of its
    12 GB for the Windows desktop before SGLang sized its reserve: its interval holds. Five intervals miss fully
    blind: a GB300 PD prefill start within 1 % (+0.89 %) whose interval narrowed in session 60; an
    A40's (+4.2 %), on a GPU model no other record ran (its CUDA total and context are extrapolated from other
    cards), and three B200 DeepSeek starts within 5 % (+1.2, +1.8, +2.2 %) whose intervals narrowed in session 59 when
    eleven held-out starts judged within 0.4 % joined the sources that scale them (median half-width ± 2.7 → ± 2.0 %);
    since session 63 those four hold again (the scale × 1.05 → × 1.00 moved with the new sources, the centres too) and
    the Qwen3.6-27B-FP8 EAGLE start (+3.2 %, its hybrid state modelled after it was judged) missed its narrow interval
    until session 64 read that its MTP layer is not in SGLang's cell and its draft's own embedding and LM head are
    resident at the profile (+0.27 %). Session 65's held-out starts add one miss, a Qwen3-Coder-30B-A3B-FP8 start on an
    L40S-48C vGPU profile (+30 %: its KV budget 1.35 GiB under the bare L40S's, a vGPU's reserved memory kvtop has no figure
    for), and three fully blind intervals that miss within 5 %: two first-of-two-servers H200 starts (+2.8, +3.6 %) and
    Grok-2 FP8 on 8 × H100 (+2.3 %), whose interval narrowed with the new sources. History: docs/calibration_history.md."""
    judged = _judged(corpus_judgement, "sglang", weights_logged)
    errors = sorted(abs(j.error) for j in judged)
    assert len(judged) == (122 if weights_logged else 176)
    assert len({j.record.source for j in judged}) == (52 if weights_logged else 82)
    assert statistics.median(errors) <= 0.02
    missed = {j.record.id: j.truth for j in judged if abs(j.error) > 0.05}
    uncovered = [j.record.id for j in judged if not j.covered]
    if weights_logged:
        # session 71: one DGX Spark's SGLang starts (a 0.5.18-era build), the host's memory beside the plan (kvtop's
        # unified-memory share, 11.73 % ± 7.02 %, for a host that held 6.25 %), and the GB10 record now judged (its total
        # kvtop's own, assumed)
        assert missed == {"my-deepseek-r1-distill-qwen-7b-3090": 105_531, "extious-qwen3.5-9b-dp2-rtx4090-hicache-ctx200k": 7_007,
                          "lukallm-qwen3-coder-30b-a3b-fp8-l40s-48c-v058-mf08": 48_740} | GB10_MISSED  # fmt: skip
        # session 69: the Qwen3.6-27B-FP8 EAGLE start (+0.8 %) outside its interval once the session's 17 held-out SGLang
        # starts, 15 of one H100 box within 2 %, narrowed the scale
        assert uncovered == ["file67494338468-qwen3.6-27b-fp8-rtxpro6000maxq-eagle-nightly",
                             "lukallm-qwen3-coder-30b-a3b-fp8-l40s-48c-v058-mf08"]  # fmt: skip
    else:
        assert missed == {"my-deepseek-r1-distill-qwen-7b-3090": 105_531, "extious-qwen3.5-9b-dp2-rtx4090-hicache-ctx200k": 7_007,
                          "ghourimarti-travel-planner-qwen2.5-7b-awq-rtx3060-wsl2-mf055": 11_881,
                          "lukallm-qwen3-coder-30b-a3b-fp8-l40s-48c-v058-mf08": 48_740} | GB10_MISSED | {
                          "coralleicn-dgxspark-qwen3.8-27b-nvfp4-gb10-sglang0518dev-m070-mamba360-c72": 228_520}  # fmt: skip
        assert uncovered == ["file67328003014-nla-qwen2.5-7b-av-a40-v056post2",
                             "file60710707989-qwen3-0.6b-h200-first-of-two-mf044",
                             "file60710707989-qwen3-0.6b-h200-first-of-two-mf042",
                             "lukallm-qwen3-coder-30b-a3b-fp8-l40s-48c-v058-mf08",
                             # session 67: gpt-oss-20b on an H100 PCIe at 0.5.10.post1 (+3.0 / +3.0 %): SGLang holds
                             # 1.63 GiB of weights beyond kvtop's book (the swizzled MXFP4 scales kept twice explain
                             # ~0.56, docs/calibration_history.md), outside the narrow interval the context sets
                             "chiatzen-gpt-oss-20b-h100pcie-sglang-v0510post1-auto",
                             "chiatzen-gpt-oss-20b-h100pcie-sglang-v0510post1-deterministic",
                             # session 68: one LFM2.5-8B-A1B start of an H200 tuning study (+0.65 %) whose load took
                             # 16.94 GB where its siblings' took 16.34 (SOURCES.md, session 68 helper B2); Grok-2 FP8
                             # on 8 × H100 holds again with the session's sources
                             "gujialiang-e2e-sglang-lfm2.5-8b-a1b-h200-m080-ctx73728",
                             # session 69: two held-out Gemma-4-31B starts of one H100 box, online FP8 (+1.9 %: its load
                             # 18.46 GiB, printed 'GB', against kvtop's 17.85 GiB) and a reconstructed AWQ config (+1.6 %), outside
                             # their narrow intervals (SOURCES.md, session 69 helpers B and B2)
                             "lawjarp-sglang-gemma-4-31b-it-fp8online-h100-tp2-nightly0412-m085-len8192",
                             "lawjarp-sglang-gemma-4-31b-it-awq-h100-tp2-nightly0412-m085-len8192",
                             # session 70: three language-only E/PD servers of one H200 notebook (Qwen3-VL-235B-FP8,
                             # +1.5 - 1.6 % judged held out): their machine had 1.05 GiB less free before the load than the
                             # plan's estimate on 2026-06-18 (0.90 less than on 06-23), not a language-only term (docs/engines/
                             # sglang.md §5; test_language_only_memory.py; SOURCES.md, session 70 helpers B and H)
                             "hzheng-epd-qwen3-vl-235b-fp8-h200-sglang0512dev-pd-tp4-m090",
                             "hzheng-epd-qwen3-vl-235b-fp8-h200-sglang0512dev-pd-tp4-m086"]  # fmt: skip
        # (session 71: the third, at 0.80 with a 131k chunk (+1.64 %), holds again with the session's sources)


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


@SHARED_FITS
def test_sglang_context_is_what_the_b200_log_left_free() -> None:
    """Qwen3-8B at SGLang's defaults on one B200 printed `Load weight begin. avail mem=177.57 GB`: the context the
    corpus observes is CUDA's B200 total (178.35 GiB as three torch messages print it, gpus.jsonl since session 50)
    less 177.57 GiB, and the fit that left this record out plans it within its held-out error."""
    from benchmarks.calibration.evaluate import observed
    from kvtop.domain.calibration.terms import Term
    from kvtop.domain.engines.sglang.calibration import context

    record = next(r for r in CORPUS_RECORDS["sglang"] if r.id == "file52132052242-qwen3-8b-b200")
    fits = corpus_fits(record.id)
    total = round(fits["cuda_total.B200"].coefficients[0] * 2**30)
    assert abs(total - 178.35 * 2**30) < 0.01 * 2**30
    measured = observed(record, Term.CONTEXT, fits)
    assert measured is not None and abs(measured - (total - round(177.57 * 2**30))) <= 1
    planned = context(record.inputs(), fits)
    assert planned.source == "calibrated" and abs(planned.bytes - measured) <= planned.error_bytes
