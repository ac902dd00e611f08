"""The ledger's memo: equal inputs give the very same ledger, anything different is solved anew."""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.errors import KvtopError
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import forget_solved, predict
from kvtop.domain.memo import Memo
from kvtop.domain.model_config import model_from_config
from tests.conftest import CONFIGS

H100 = 81559 << 20


@pytest.fixture(scope="module")
def llama():
    name = "meta-llama--Meta-Llama-3-70B.json"
    return model_from_config(json.loads((CONFIGS / name).read_text()), source=name)


def test_equal_inputs_give_the_same_ledger_and_a_changed_one_a_new_solve(llama) -> None:
    tp8 = parse_flags("sglang", ["--tp", "8"])
    measured = MeasuredInputs(free_before_load_bytes=80 << 30)
    first = predict(llama, tp8, gpu_total_bytes=H100, measured=measured)
    again = predict(llama, parse_flags("sglang", ["--tp", "8"]), gpu_total_bytes=H100,
                    measured=MeasuredInputs(free_before_load_bytes=80 << 30))  # fmt: skip
    assert again is first
    fp8 = predict(llama, parse_flags("sglang", ["--tp", "8", "--kv-cache-dtype", "fp8_e4m3"]),
                  gpu_total_bytes=H100, measured=measured)  # fmt: skip
    assert fp8.kv_bytes_per_token == first.kv_bytes_per_token // 2
    less_free = predict(
        llama, tp8, gpu_total_bytes=H100, measured=MeasuredInputs(free_before_load_bytes=70 << 30)
    )
    assert less_free.token_capacity < first.token_capacity
    flagged = tp8.model_copy(update={"flags": {"--some-unknown-flag": "1"}})
    assert predict(llama, flagged, gpu_total_bytes=H100, measured=measured) is not first


def test_an_equal_model_read_again_is_solved_for_itself(llama) -> None:
    """The memo names a model by identity: another object (maybe another file) is not a hit."""
    tp8 = parse_flags("sglang", ["--tp", "8"])
    name = "meta-llama--Meta-Llama-3-70B.json"
    other = model_from_config(json.loads((CONFIGS / name).read_text()), source=name)
    first = predict(llama, tp8, gpu_total_bytes=H100)
    second = predict(other, tp8, gpu_total_bytes=H100)
    assert second is not first and second.model is other
    assert second.token_capacity == first.token_capacity


def test_a_failing_solve_is_not_remembered(llama) -> None:
    with pytest.raises(KvtopError):
        predict(llama, parse_flags("sglang", ["--tp", "3"]), gpu_total_bytes=H100)
    with pytest.raises(KvtopError):  # fails again, the same way, rather than returning a stale value
        predict(llama, parse_flags("sglang", ["--tp", "3"]), gpu_total_bytes=H100)


def test_the_memo_keeps_at_most_its_size_and_drops_the_least_recent() -> None:
    memo: Memo[int] = Memo(size=2)
    owner = object()
    calls: list[str] = []

    def compute(key: str) -> int:
        calls.append(key)
        return len(calls)

    assert memo.get("a", owner, lambda: compute("a")) == 1
    assert memo.get("b", owner, lambda: compute("b")) == 2
    assert memo.get("a", owner, lambda: compute("a")) == 1  # a hit; "b" is now the least recent
    assert memo.get("c", owner, lambda: compute("c")) == 3  # evicts "b"
    assert memo.get("b", owner, lambda: compute("b")) == 4
    assert memo.get("b", object(), lambda: compute("b")) == 5  # same key, another owner: no hit
    assert calls == ["a", "b", "c", "b", "b"]


def test_forgetting_the_solves_solves_again_to_the_same_figures(llama) -> None:
    tp8 = parse_flags("sglang", ["--tp", "8"])
    first = predict(llama, tp8, gpu_total_bytes=H100)
    forget_solved()
    again = predict(llama, tp8, gpu_total_bytes=H100)
    assert again is not first
    assert again == first and again.token_capacity == first.token_capacity
