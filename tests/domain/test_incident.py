"""The incident's answer in one sentence (kvtop.domain.incident), from the worst fault's own figures."""

from __future__ import annotations

from kvtop.domain.diagnose import diagnose
from kvtop.domain.incident import ALL_CLEAR, NO_ENGINE, age, incident_answer
from kvtop.domain.observe import ProcessRole
from tests.diagnose_node import GIB, H100, co_tenant, llama, node, only, sglang_capacity


def test_two_co_tenants_on_one_gpu_are_named_with_their_bytes_and_age() -> None:
    """10 GiB of two notebooks on GPU 3 under SGLang: every rank pays what the co_tenant finding says."""
    taken_at = 1_750_000_000.0
    others = (co_tenant(9001, 6 * GIB, start_time=taken_at - 2 * 86_400 - 5), co_tenant(9002, 4 * GIB, start_time=taken_at - 600))
    snapshot = node(llama(), others={3: others})
    snapshot = snapshot.model_copy(update={"observation": snapshot.observation.model_copy(update={"taken_at": taken_at})})
    found = diagnose(snapshot)
    severity, answer = incident_answer(snapshot, found)
    tokens = only(found, "co_tenant").tokens
    # left running, 10 GiB held: a restart finds the plan's own pre-load free (the H100 less kvtop's default 1 GiB
    # context, `predict` with nothing measured: the explained pool's basis) less the 10 GiB; its share may rise while
    # 1 GiB > (share − 0.818) × 70,295 MiB: to 0.83 (0.82 GiB), not 0.84 (1.51 GiB)
    left = H100 - GIB - 10 * GIB
    gain = sglang_capacity(llama(), left, mem_fraction_static=0.83) - sglang_capacity(llama(), left)
    assert severity is not None and severity.value == "warning"
    assert answer == (
        f"GPU 3 (rank TP3 of sglang:4242) loses {tokens:,} tokens to pid 9001 (python, 6.00 GiB, started 2d ago), "
        "pid 9002 (python, 4.00 GiB, started 10m ago) — stop them, then restart sglang:4242 to recover them; "
        f"or keep them and restart with --mem-fraction-static 0.83 to win back {gain:,} tokens per rank"
    )


def test_an_orphan_on_a_gpu_no_engine_uses_is_a_whole_gpu_and_a_healthy_node_is_all_clear() -> None:
    orphan = co_tenant(5555, 70 * GIB, role=ProcessRole.ORPHAN, title="VLLM::Worker_TP1", engine_kind="vllm", parent_pid=1)
    snapshot = node(llama(), others={8: (orphan,)}, gpus=9)
    assert incident_answer(snapshot, diagnose(snapshot))[1] == (
        "GPU 8 is a whole GPU out of service: pid 5555 (VLLM::Worker_TP1, 70.00 GiB) holds it — kill it"
    )
    healthy = node(llama())
    assert incident_answer(healthy, diagnose(healthy)) == (None, ALL_CLEAR)


def test_a_node_without_an_engine_is_not_said_to_hold_its_plan() -> None:
    """A GPU-only node (the cluster's DCGM-only nodes; a node between engines): no rank has a plan, so the
    answer says nothing was checked, where it said "every rank holds what its plan predicts"."""
    healthy = node(llama())
    bare = healthy.model_copy(update={
        "engines": (), "observation": healthy.observation.model_copy(update={"engines": ()}),
    })  # fmt: skip
    assert not bare.engines and not bare.observation.engines
    assert incident_answer(bare, diagnose(bare)) == (None, NO_ENGINE)


def test_an_age_is_its_largest_whole_unit() -> None:
    assert [age(s) for s in (45, 61, 3_600 * 5 + 59, 86_400 * 2 + 1)] == ["45s", "1m", "5h", "2d"]
