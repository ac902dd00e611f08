"""A copy of a frozen model computes its cached values from its own fields, never keeps its original's.

Found in session 53: `tests/ui/test_planner_desktop_seen.py` failed after `tests/ui/test_planner.py` in one process.
The session's `healthy_snapshot` had built its GPU → engine index (`NodeSnapshot.ranks_by_gpu`, a cached_property)
in an earlier test; the copy with the WSL2 desktop on its engines kept that index (pydantic's `model_copy` copies
`__dict__`, cached values included), so the planner opened on the original engine with the desktop off.
The node is the UI fakes' Llama-3-70B TP8 on H100s (configs/meta-llama--Meta-Llama-3-70B.json: 64 heads, 8 KV heads,
head_dim 8192 / 64 = 128)."""

from __future__ import annotations

import functools
import importlib
import inspect
import pkgutil

from pydantic import BaseModel

import kvtop.domain
from kvtop.domain.fresh_copy import FreshCopyModel
from kvtop.domain.node import NodeSnapshot
from kvtop.domain.weights import WeightRow, WeightsBook
from tests.ui.fakes import llama_model, llama_snapshot


def _with_desktop_on(snapshot: NodeSnapshot) -> NodeSnapshot:
    """`snapshot` with its engines' measured inputs saying a desktop shares the GPUs."""
    views = tuple(
        view.model_copy(update={"ledger": view.ledger.model_copy(
            update={"measured": view.ledger.measured.model_copy(update={"desktop": True})})})
        for view in snapshot.engines
    )  # fmt: skip
    return snapshot.model_copy(update={"engines": views})


def test_a_snapshot_copied_with_other_engines_finds_its_own_engine_on_each_gpu() -> None:
    original = llama_snapshot()
    gpus = [rank.gpu_index for rank in original.engines[0].ranks]
    assert gpus == list(range(8))
    assert original.engine_of_gpu(0) is original.engines[0]  # the index is built (and cached) on the original
    copy = _with_desktop_on(original)
    for gpu in gpus:
        view = copy.engine_of_gpu(gpu)
        assert view is copy.engines[0] and view.ledger is not None and view.ledger.measured.desktop is True
        rank = copy.rank_on_gpu(gpu)
        assert rank is not None and rank is copy.engines[0].ranks[gpu]
    assert original.engine_of_gpu(0) is original.engines[0]  # and the original keeps its own
    assert original.engines[0].ledger is not None and original.engines[0].ledger.measured.desktop is False
    emptied = original.model_copy(update={"engines": ()})
    assert emptied.engine_of_gpu(0) is None and emptied.rank_on_gpu(0) is None


def test_a_model_copied_with_other_heads_has_their_geometry() -> None:
    model = llama_model()
    geometry = model.own_geometry
    assert (geometry.heads, geometry.kv_heads, geometry.head_dim) == (64, 8, 128)
    copy = model.model_copy(update={"num_kv_heads": 1})  # an MQA variant of the same model
    assert copy.own_geometry.kv_heads == 1 and copy.own_geometry.heads == 64
    assert model.own_geometry.kv_heads == 8


def test_a_weights_book_copied_with_fewer_rows_sums_its_own_rows() -> None:
    # a TP8 rank's eighth of the embedding (128,256 × 8,192 / 8 = 131,334,144 bf16 params) and the whole final norm
    embed = WeightRow(component="embed", params=128_256 * 8_192 // 8, bytes=128_256 * 8_192 // 8 * 2, shards=8,
                      bytes_per_param=2.0)  # fmt: skip
    norm = WeightRow(component="norm", params=8_192, bytes=8_192 * 2, shards=1, bytes_per_param=2.0)
    book = WeightsBook(rows=(embed, norm))
    assert book.total_bytes == 262_668_288 + 16_384 and book.total_params == 131_334_144 + 8_192
    copy = book.model_copy(update={"rows": (norm,)})
    assert (copy.total_bytes, copy.total_params) == (16_384, 8_192)


def test_every_domain_model_with_a_cached_value_copies_fresh() -> None:
    """A pydantic model of the domain with a `cached_property` is a `FreshCopyModel` (or a new one would bring the
    stale copy back)."""
    stale: list[str] = []
    for module_info in pkgutil.walk_packages(kvtop.domain.__path__, "kvtop.domain."):
        module = importlib.import_module(module_info.name)
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ != module.__name__ or not issubclass(cls, BaseModel):
                continue
            cached = [key for key, value in vars(cls).items() if isinstance(value, functools.cached_property)]
            if cached and not issubclass(cls, FreshCopyModel):
                stale.append(f"{module.__name__}.{name} ({', '.join(cached)})")
    assert stale == []
