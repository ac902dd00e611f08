"""'Beside the model' as the domain states it (`Ledger.beside_model`), the value the planner's row reads: Llama-3-70B
TP 8 on SGLang 0.5.9 with an EAGLE-3 draft no config names. `kvtop plan` prints `draft weights  not modelled` and the
reserve for the draft and its CUDA graphs, 2048 MiB (server_args.py `_handle_gpu_memory_settings` at v0.5.9: EAGLE
keeps 2 GiB more), so the row is at least 2048 MiB; the draft's KV layers are not known, so the cell is a lower bound."""

from __future__ import annotations

from kvtop.domain.deployment import Charge
from kvtop.domain.ledger_values import BesideModel, BesideState
from tests.domain.test_deployment_terms import LLAMA70B, MIB, plan

AT = ["--tp-size", "8", "--engine-version", "0.5.9"]


def test_an_unpriced_draft_makes_the_row_at_least_the_priced_reserve() -> None:
    eagle = plan(LLAMA70B, "sglang", [*AT, "--speculative-algorithm", "EAGLE3"])
    assert eagle.beside_model == BesideModel(2048 * MIB, BesideState.AT_LEAST)
    assert eagle.kv_cell_unpriced


def test_no_priced_term_beside_the_unpriced_one_is_not_modelled_never_none() -> None:
    eagle = plan(LLAMA70B, "sglang", [*AT, "--speculative-algorithm", "EAGLE3"])
    ranks = tuple(
        r.model_copy(update={"terms": tuple(t for t in r.terms if t.charge is Charge.RESIDENT and not t.modelled)})
        for r in eagle.ranks
    )
    assert eagle.model_copy(update={"ranks": ranks}).beside_model == BesideModel(0, BesideState.NOT_MODELLED)


def test_a_plain_launch_holds_nothing_beside_the_model() -> None:
    plain = plan(LLAMA70B, "sglang", AT)
    assert plain.beside_model == BesideModel(0, BesideState.NONE)
    assert not plain.kv_cell_unpriced
