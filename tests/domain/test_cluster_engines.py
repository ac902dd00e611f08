"""Joining engine pieces (`kvtop.domain.cluster_engines`) on hand-built values: what joins, what stays
apart, when a tightest rank is clear, and the waterfall's sum."""

from __future__ import annotations

from kvtop.domain.capacity import CapacityCause, CapacitySource
from kvtop.domain.cluster_engines import EnginePiece, group_disaggregated, join_engines
from kvtop.domain.span import EngineSpan, ServingRole

SPAN = EngineSpan(kind="sglang", served_model="m", rendezvous="10.0.0.1:5000", nnodes=2)


def piece(node: str, rank: int, **fields: object) -> EnginePiece:
    span = SPAN.model_copy(update={"node_rank": rank, "serves_api": rank == 0})
    return EnginePiece.model_validate({"node": node, "instance": f"{node}:9401", "engine_id": "sglang:1",
                                       "span": span, **fields})  # fmt: skip


def test_equal_pieces_have_no_clear_tightest_rank() -> None:
    (engine,) = join_engines([
        piece("a", 0, capacity={"clean": 1000, "explained": 1000, "live": 1000}),
        piece("b", 1, capacity={"clean": 1000, "explained": 1000}),
    ])  # fmt: skip
    assert engine.tightest is not None and not engine.tightest.clear
    assert engine.terms == () and engine.actual == (1000, CapacitySource.LIVE)


def test_what_no_node_measured_is_unexplained_and_the_sum_holds() -> None:
    (engine,) = join_engines([
        piece("a", 0, capacity={"clean": 1000, "explained": 1000, "live": 870}),
        piece("b", 1, capacity={"clean": 1000, "explained": 900}, terms={CapacityCause.OTHER_PROCESSES: -100},
              tightest_gpu="5"),
    ])  # fmt: skip
    assert engine.tightest is not None and (engine.tightest.node, engine.tightest.clear) == ("b", True)
    assert [(t.cause, t.tokens, t.node) for t in engine.terms] == [
        (CapacityCause.OTHER_PROCESSES, -100, "b"), (CapacityCause.ENGINE_VS_PREDICTION, -30, None),
    ]  # fmt: skip
    assert 1000 - 100 - 30 == 870


def test_the_largest_cause_is_the_step_that_costs_the_most() -> None:
    """The engine table's 'largest cause': node b's other processes cost 1,000 − 900 = 100 tokens, the engine's
    own figure 900 − 870 = 30 more; the 100 is the larger loss. An engine that holds more than its plan (1,000
    clean, 1,050 live: +50 unexplained) loses nothing: no cause."""
    (engine,) = join_engines([
        piece("a", 0, capacity={"clean": 1000, "explained": 1000, "live": 870}),
        piece("b", 1, capacity={"clean": 1000, "explained": 900}, terms={CapacityCause.OTHER_PROCESSES: -100},
              tightest_gpu="5"),
    ])  # fmt: skip
    worst = engine.largest_loss
    assert worst is not None and (worst.cause, worst.tokens, worst.node, worst.gpu) == (
        CapacityCause.OTHER_PROCESSES, -(1000 - 900), "b", "5")  # fmt: skip
    assert worst.describe().startswith("other processes −100")
    (more,) = join_engines([piece("a", 0, capacity={"clean": 1000, "explained": 1000, "live": 1050})])
    assert [t.tokens for t in more.terms] == [1050 - 1000] and more.largest_loss is None


def test_no_engine_figure_anywhere_ends_on_the_tightest_prediction() -> None:
    (engine,) = join_engines([piece("a", 0, capacity={"clean": 10, "explained": 8}), piece("b", 1, capacity={"clean": 10, "explained": 9})])
    assert engine.actual == (8, CapacitySource.PREDICTED)


def test_pieces_of_a_launch_kvtop_cannot_join_stay_per_node() -> None:
    lone = SPAN.model_copy(update={"not_modelled": "why"})
    pieces = [piece("a", 0).model_copy(update={"span": lone}), piece("b", 1).model_copy(update={"span": lone})]
    assert len(join_engines(pieces)) == 2


def test_a_lone_decode_side_is_a_group_without_a_finding() -> None:
    decode = EngineSpan(kind="vllm", served_model="m", role=ServingRole.DECODE, transfer="NIXL")
    engines = join_engines([EnginePiece(node="d", instance="d:1", engine_id="vllm:1", span=decode, context_length=100,
                                        capacity={"live": 500})])  # fmt: skip
    (group,) = group_disaggregated(engines)
    assert group.prefill == () and group.finding is None and group.transfer == ("NIXL",)
