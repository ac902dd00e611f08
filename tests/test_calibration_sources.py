"""Which records the held-out errors leave out together: one source (thread, repository, file, page) at one release.

Expected keys are read off the corpus lines' own `source` fields and the cases' case.json (tests/data/calibration,
tests/data/cases); the scale left out by source is hand arithmetic beside it."""

from __future__ import annotations

from benchmarks.calibration.corpus import load_all, source_key
from benchmarks.calibration.judgement import PlanScores, engine_scale
from kvtop.domain.calibration.coverage import too_few_sources


def test_a_source_is_its_thread_repository_or_indexed_file() -> None:
    assert source_key("https://github.com/vllm-project/vllm/issues/10517") == "vllm-project/vllm#10517"
    assert source_key("https://github.com/sgl-project/sglang/pull/4760") == "sgl-project/sglang#4760"
    # five logs of one benchmarking repository, each at its own commit: one source
    assert (
        source_key(
            "https://github.com/dennislee22/vLLM-benchmarking/blob/391660db/log/vllm-7B-1gpuA10080GB-0.25GRAM.log"
        )
        == source_key(
            "https://github.com/dennislee22/vLLM-benchmarking/blob/0787d88e/log/vllm-120B-4gpuA10080GB-0.8GRAM.log"
        )
        == "dennislee22/vLLM-benchmarking"
    )
    assert source_key("https://github.com/jerryzsj/my-deepseek-r1 (README.md)") == "jerryzsj/my-deepseek-r1"
    assert (
        source_key("public GitHub file, search-index id 60168338778 ('LLM 최적화', jinwoong)")
        == "search-index 60168338778"
    )
    assert (
        source_key("https://myoceane.fr/index.php/ai-vllm-a100-gemma-4/")
        == "https://myoceane.fr/index.php/ai-vllm-a100-gemma-4/"
    )
    # a case in tests/data/cases is the thread its case.json names: issue 10517's case and its corpus line are one source
    assert source_key("cases/vllm/vllm-10517-llama31-8b-3090-v0") == "vllm-project/vllm#10517"


def test_the_corpus_groups_its_sweeps() -> None:
    """The five dennislee22 starts (vLLM 0.10.1.1) are one source; llm-d-planner's sweeps three: its January 2026 text
    starts on `vllm/vllm-openai:latest` (the release out on 2026-01-23, v0.14.0: llm-d-benchmark beb38b5d), its
    Mistral-Small-3.2 start on the v0.11.0 image (a month later, another host), and its v0.19.0 sweep."""
    vllm = load_all()["vllm"]
    dennislee = {r.source for r in vllm if r.id.startswith("dennislee-")}
    assert dennislee == {"dennislee22/vLLM-benchmarking @ 0.10.1.1"}
    sweeps = {r.source for r in vllm if r.id.startswith(("llmd-v011-", "llmd-v019-"))}
    assert sweeps == {
        f"llm-d-incubation/llm-d-planner @ {release}" for release in ("0.14.0", "0.11.0", "0.19.0")
    }


def test_a_records_scale_never_sees_its_own_sources_score() -> None:
    # scores 0.2 (a), 0.4 and 3.0 (b), 0.6 (c): all sources, n = 3, ⌈4 × 0.9⌉ = 4 > 3 → the largest, 3.0; b left
    # out, n = 2 → the largest of a and c, 0.6, which the floor lifts to 1 (fewer than 9 sources never narrow the
    # stated errors: coverage.scale_fit); it never sees b's 3.0
    scores = PlanScores(blind={"vllm": [(0.2, "a"), (0.4, "b"), (3.0, "b"), (0.6, "c")]}, logged={})
    every = engine_scale("vllm", scores)
    without_b = engine_scale("vllm", scores, leave_out="b")
    assert every is not None and every.factor == 3.0 and every.sources == 3
    assert without_b is not None and without_b.factor == 1.0 and without_b.records == 2
    assert engine_scale("sglang", scores) is None


def test_the_scale_holds_in_both_uses_of_plan() -> None:
    # ten sources (⌈11 × 0.9⌉ = 10th of 10: the largest; no floor at 10 sources): blind scores 0.1 … 1.0 give 1.0;
    # the same records with logged weights (narrower terms) score 0.2 … 2.0 and need 2.0: the engine's scale is the
    # larger, 2.0, so a plan with --engine-log holds as often as a blind one
    blind = [(n / 10, f"s{n}") for n in range(1, 11)]
    logged = [(n / 5, f"s{n}") for n in range(1, 11)]
    scale = engine_scale("vllm", PlanScores(blind={"vllm": blind}, logged={"vllm": logged}))
    assert scale is not None and scale.factor == 2.0
    blind_only = engine_scale("vllm", PlanScores(blind={"vllm": blind}, logged={}))
    assert blind_only is not None and blind_only.factor == 1.0


def test_a_way_of_few_sources_does_not_vote() -> None:
    # Since session 54 every scale is floored at 1 (coverage.py: a scale never narrows the terms' errors), so the way
    # that must not vote is one that would WIDEN the scale. Ten blind sources scoring 1.05 … 1.5 give 1.5 (⌈11 × 0.9⌉ =
    # the 10th of 10); the logged-weights plans of 4 sources (too few for the corrected quantile: their largest score,
    # 3.0) would win the max if they voted: they do not, and the blind scale, 1.5, stands
    blind = [(1 + n / 20, f"s{n}") for n in range(1, 11)]
    logged = [(1.0, "s1"), (2.0, "s2"), (2.5, "s3"), (3.0, "s4")]
    assert too_few_sources(4) and not too_few_sources(10)
    scale = engine_scale("vllm", PlanScores(blind={"vllm": blind}, logged={"vllm": logged}))
    assert scale is not None and scale.factor == 1.5 and not scale.weights_logged and scale.sources == 10
    # the same four scores from ten sources do vote: the logged way's 10th of 10 is 3.0 and it is the engine's scale
    logged_ten = [*logged, *((3.0, f"s{n}") for n in range(5, 11))]
    voted = engine_scale("vllm", PlanScores(blind={"vllm": blind}, logged={"vllm": logged_ten}))
    assert voted is not None and voted.factor == 3.0 and voted.weights_logged
    # and blind scores below 1 (0.05 … 0.5) no longer narrow the interval: floored at 1
    low = engine_scale("vllm", PlanScores(blind={"vllm": [(n / 20, f"s{n}") for n in range(1, 11)]}, logged={}))
    assert low is not None and low.factor == 1.0


def test_every_start_is_recorded_once() -> None:
    """A start recorded twice would be judged twice and count twice in every score. Ids are unique, and no two records
    of one engine hold the same source, card, layout, launch and logged capacity (session 52 found the Qwen3-14B
    4 × RTX 4090 SGLang start, search-index id 55529353766, recorded twice under one id)."""
    seen_ids: set[str] = set()
    seen_starts: set[tuple[object, ...]] = set()
    for engine, records in load_all().items():
        for record in records:
            assert record.id not in seen_ids, record.id
            seen_ids.add(record.id)
            raw = record.raw
            start = (engine, source_key(str(raw["source"])), raw.get("config"), raw.get("model"), raw.get("log"), raw.get("version"),
                     record.gpu, raw.get("tp"), raw.get("pp"),
                     str(raw.get("flags")), record.tokens, record.figures.get("kv"))  # fmt: skip
            assert start not in seen_starts, record.id
            seen_starts.add(start)
