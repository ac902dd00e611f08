"""llama.cpp's rules by build as `Eras` values (ordered by build number, `build_order`), read the way every
engine's eras are read (`.at(version)`). Expected cells are hand arithmetic from llama.cpp's code as
docs/engines/llamacpp.md §1 and §4 quote it: `common/common.h`'s defaults (`n_ctx = 4096`, later 0 = the
training context; `n_parallel = 1`, later −1 = 4 unified slots) and PR #17046's `GGML_PAD(…, 256)`."""

from __future__ import annotations

import pytest

from kvtop.domain.engines.llamacpp.cells import cache_cells
from kvtop.domain.engines.llamacpp.eras import (
    CTX_PAD_256_ERAS,
    DEFAULT_CTX_ERAS,
    DEFAULT_PARALLEL_ERAS,
    KV_LOG_DIALECTS,
    PER_SLOT_CAP_ERAS,
    SLOT_CAP_ERAS,
    build_order,
    build_release,
    first_build,
)
from kvtop.domain.engines.versions import NOT_STATED, Era, Eras, ResolvedVersion
from kvtop.domain.launch import parse_flags
from kvtop.sources.hub import load_model
from tests.data_paths import CONFIGS

LLAMA_31_8B = CONFIGS / "meta-llama--Llama-3.1-8B.json"  # n_ctx_train 131072


def test_build_order_sorts_builds_by_number_not_as_text() -> None:
    assert build_order("b6980") == build_order("6980") == (6980,)
    assert build_order("b999") < build_order("b6800") < build_order("b10000")  # "b999" > "b6800" as text
    assert build_order("latest") is None and build_order(None) is None


@pytest.mark.parametrize(
    ("build", "ctx", "slots", "padded"),
    [
        (3673, 4096, 1, False),  # the oldest build a real log here states (test_explain_logs)
        (6924, 4096, 1, False),
        (6925, 4096, -1, False),  # -np auto from b6925 (PR #16736, commit cd5e3b57)
        (6979, 4096, -1, False),
        (6980, 0, -1, True),  # -c 0 (training context) and the 256-cell padding from ~b6980
        (None, 0, -1, True),  # not stated: the latest rules
    ],
)
def test_each_rule_holds_from_its_first_build(build: int | None, ctx: int, slots: int, padded: bool) -> None:
    version = build_release(build)
    assert DEFAULT_CTX_ERAS.at(version) == ctx
    assert DEFAULT_PARALLEL_ERAS.at(version) == slots
    assert CTX_PAD_256_ERAS.at(version) is padded


def test_every_era_keeps_its_first_build_and_source() -> None:
    for eras in (KV_LOG_DIALECTS, CTX_PAD_256_ERAS, DEFAULT_CTX_ERAS, DEFAULT_PARALLEL_ERAS, SLOT_CAP_ERAS,
                 PER_SLOT_CAP_ERAS):
        assert isinstance(eras, Eras) and eras.order is build_order
        assert eras[0].since == "" and all(build_order(era.since) for era in eras[1:])
        assert [first_build(era) for era in eras] == sorted(first_build(era) for era in eras)
        assert all(era.source for era in eras)
    assert [first_build(era) for era in KV_LOG_DIALECTS] == [0, 5400, 6400]


def test_cells_follow_the_builds_rules() -> None:
    """-c 10000 over 3 slots: before b6980 no padding, 10000 // 3 = 3333 cells a slot → 9999; from b6980
    GGML_PAD(10000, 256) = 10240, GGML_PAD(3413, 256) = 3584 a slot → 10752. No -c, no -np: 4096 cells in
    one slot before b6925; 4096 cells, 4 unified slots b6925–b6979; the 131,072-token training context from
    b6980."""
    model = load_model(str(LLAMA_31_8B))
    three = parse_flags("llamacpp", ["-c", "10000", "-np", "3"])
    assert cache_cells(model, three, 6979).n_ctx == 9999
    assert cache_cells(model, three, 6980).n_ctx == 10752
    bare = parse_flags("llamacpp", [])
    assert (cache_cells(model, bare, 6000).n_ctx, cache_cells(model, bare, 6000).n_seq_max) == (4096, 1)
    mid = cache_cells(model, bare, 6950)
    assert (mid.n_ctx, mid.n_seq_max, mid.unified) == (4096, 4, True)
    assert cache_cells(model, bare, 6980).n_ctx == cache_cells(model, bare, None).n_ctx == 131072


def test_the_cells_say_the_c_they_took_and_what_it_came_to() -> None:
    """-c as given, or its default (4096 before b6925, 0 from it); 0 is the training context, config.json's
    max_position_embeddings 131,072; --kv-unified-per-slot 4096 over the 4 auto slots sizes 16,384 (PR #24124)."""
    model = load_model(str(LLAMA_31_8B))
    assert cache_cells(model, parse_flags("llamacpp", ["-c", "10000", "-np", "3"]), None).setting == "-c 10000"
    bare = parse_flags("llamacpp", [])
    assert cache_cells(model, bare, 6000).setting == "-c 4096"
    assert cache_cells(model, bare, None).setting == "-c 0 (training context 131,072)"
    capped = parse_flags("llamacpp", ["--kv-unified-per-slot", "4096"])
    assert cache_cells(model, capped, None).setting == "-c 0 (4 slots × --kv-unified-per-slot 4096 = 16,384)"


def test_eras_of_pep440_releases_read_as_before() -> None:
    """The generalised `Eras` keeps PEP 440 order by default: 0.10.0 is after 0.9.2 (not before, as text)."""
    eras: Eras[str] = Eras((Era("", "old", "a"), Era("0.9.2", "mid", "b"), Era("0.10.0", "new", "c")))
    assert [eras.at(ResolvedVersion(text=t)) for t in ("0.4.1", "0.9.2", "0.9.10", "0.10.0")] == [
        "old", "mid", "mid", "new",
    ]
    assert eras.at(NOT_STATED) == "new"
    assert eras.at(ResolvedVersion(text="b6980")) == "new"  # a name this order cannot read: the latest
