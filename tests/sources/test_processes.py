"""Process attribution: GPU pids → engine, rank, co-tenant, orphan or unattributed."""

from __future__ import annotations

import os
import subprocess
import sys

from kvtop.domain.node import OutsideBytes, build_snapshot, outside_bytes
from kvtop.domain.observe import EngineRank, ProcessInfoState, ProcessRole
from kvtop.domain.process_identity import PidNamespace
from kvtop.sources.processes import (
    ProcessRecord,
    PsutilProcessTable,
    attribute_node,
    rank_parts,
    read_host_memory,
    read_pid_namespace,
)
from tests.fakes.fake_process_table import (
    API_SERVER_CONTEXT_MIB,
    CONTAINER_PID,
    SGLANG_SERVER_PID,
    SGLANG_TP2_LAUNCH,
    VLLM_LAUNCH,
    VLLM_SERVER_PID,
    VLLM_TP8_SERVER_PID,
    FakeProcessTable,
    launched,
    titled,
    two_engine_node,
    vllm_tp8_node,
    vllm_tp8_node_with_api_server,
)
from tests.fakes.fake_pynvml import MIB


def attributed_two_engine_node():
    node, table = two_engine_node()
    return attribute_node(node, table)


def process(node, pid: int):
    return next((gpu.index, p) for gpu in node.gpus for p in gpu.processes if p.pid == pid)


def test_sglang_tp2_workers_map_to_their_engine_rank_and_gpu() -> None:
    node = attributed_two_engine_node()
    engine_id = f"sglang:{SGLANG_SERVER_PID}"
    ranks = [(gpu.index, p.pid, p.rank, p.used_bytes) for gpu, p in node.engine_processes(engine_id)]
    assert ranks == [
        (0, 2160317, EngineRank(tp=0), 9752 * MIB),
        (1, 2159821, EngineRank(tp=1), 9752 * MIB),
    ]
    engine = node.engine(engine_id)
    assert engine is not None and engine.settings is not None
    assert (engine.kind, engine.settings.tp, engine.model) == ("sglang", 2, "/path/to/Qwen3-235B-A22B-FP8")
    assert (engine.host, engine.port) == ("127.0.0.1", 8000)  # --host 0.0.0.0 is reached locally


def test_vllm_engine_core_on_its_own_gpu() -> None:
    node = attributed_two_engine_node()
    gpu_index, core = process(node, 2332308)
    assert (gpu_index, core.role, core.title, core.rank) == (
        2,
        ProcessRole.ENGINE_WORKER,
        "VLLM::EngineCore",
        EngineRank(),
    )
    assert core.used_bytes == 75172 * MIB
    engine = node.engine(f"vllm:{VLLM_SERVER_PID}")
    assert engine is not None and engine.settings is not None
    assert (engine.model, engine.port, engine.settings.gpu_memory_utilization) == (
        "openai/gpt-oss-120b",
        8000,
        0.95,
    )
    assert len(node.engines) == 2


def test_a_process_of_no_engine_is_a_co_tenant() -> None:
    gpu_index, tenant = process(attributed_two_engine_node(), 1105912)
    assert (gpu_index, tenant.role, tenant.name, tenant.user) == (2, ProcessRole.CO_TENANT, "ada_be", "ada")
    assert tenant.used_bytes == 4770 * MIB and tenant.engine_id is None


def test_an_engine_worker_whose_server_is_gone_is_an_orphan() -> None:
    gpu_index, orphan = process(attributed_two_engine_node(), 2095211)
    assert (gpu_index, orphan.role, orphan.engine_kind, orphan.engine_id) == (
        3,
        ProcessRole.ORPHAN,
        "vllm",
        None,
    )
    assert orphan.used_bytes == 75260 * MIB


def test_a_pid_this_namespace_cannot_see_is_unattributed_bytes() -> None:
    node = attributed_two_engine_node()
    gpu_index, hidden = process(node, CONTAINER_PID)
    assert (gpu_index, hidden.role, hidden.info_state) == (
        1,
        ProcessRole.UNATTRIBUTED,
        ProcessInfoState.NOT_VISIBLE,
    )
    assert "--pid=host" in (hidden.info_message or "")
    assert node.unattributed_bytes_by_gpu() == {1: 1706 * MIB}


def test_in_a_containers_pid_namespace_no_pid_is_looked_up() -> None:
    """NVML's pids are the host's. In a container's own namespace the table answers for the same numbers
    with other processes: before, they were attributed (a wrong engine, a wrong process to signal)."""
    node, table = two_engine_node()
    assert all(table.lookup(p.pid) is not None for gpu in node.gpus for p in gpu.processes if p.pid != CONTAINER_PID)
    foreign = attribute_node(node, FakeProcessTable(table.records, PidNamespace.FOREIGN))
    shown = [p for gpu in foreign.gpus for p in gpu.processes]
    assert foreign.pid_namespace is PidNamespace.FOREIGN and foreign.engines == ()
    assert {(p.role, p.info_state, p.identity) for p in shown} == {
        (ProcessRole.UNATTRIBUTED, ProcessInfoState.NOT_VISIBLE, None)
    }
    assert all(p.cmdline == () and "kvtop runs in another PID namespace" in (p.unidentified_reason() or "") for p in shown)
    assert attributed_two_engine_node().pid_namespace is PidNamespace.HOST


def test_the_pid_namespace_is_read_from_its_inode(tmp_path) -> None:
    """The host's PID namespace has the kernel's fixed inode 0xEFFFFFFC; a container's has another."""
    host, container = tmp_path / "host", tmp_path / "container"
    host.symlink_to("pid:[4026531836]")
    container.symlink_to("pid:[4026532594]")
    assert read_pid_namespace(str(host)) is PidNamespace.HOST
    assert read_pid_namespace(str(container)) is PidNamespace.FOREIGN
    assert read_pid_namespace(str(tmp_path / "absent")) is PidNamespace.UNKNOWN


def test_a_process_is_named_only_by_its_start_user_and_executable() -> None:
    node = attributed_two_engine_node()
    _, worker = process(node, 2160317)
    assert worker.identity is not None and (worker.identity.uid, worker.identity.exe) == (0, "/usr/bin/python3.11")
    _, hidden = process(node, CONTAINER_PID)
    assert hidden.identity is None and "kvtop cannot tell which process it is" in (hidden.unidentified_reason() or "")


def test_vllm_tp8_workers_map_through_the_engine_core_to_the_server() -> None:
    node = attribute_node(*vllm_tp8_node())
    workers = node.engine_processes(f"vllm:{VLLM_TP8_SERVER_PID}")
    assert [(gpu.index, p.rank.tp if p.rank else None) for gpu, p in workers] == [(i, i) for i in range(8)]
    assert {p.used_bytes for _, p in workers} == {79028 * MIB}
    assert node.engines[0].settings is not None and node.engines[0].settings.tp == 8


def test_a_vllm_api_server_holding_gpu_memory_is_its_engines_server_not_a_rank() -> None:
    """Issue 21: the API server's own CUDA context (500 MiB) beside the TP8 workers."""
    observed = attribute_node(*vllm_tp8_node_with_api_server())
    engine_id = f"vllm:{VLLM_TP8_SERVER_PID}"
    gpu_index, server = process(observed, VLLM_TP8_SERVER_PID)
    assert (gpu_index, server.role, server.engine_id, server.rank) == (
        0,
        ProcessRole.ENGINE_SERVER,
        engine_id,
        None,
    )
    snapshot = build_snapshot(observed, {})
    [view] = snapshot.engines
    assert [(rank.gpu_index, rank.rank.tp) for rank in view.ranks] == [(i, i) for i in range(8)]
    assert VLLM_TP8_SERVER_PID not in {rank.pid for rank in view.ranks}
    # GPU 0 holds the TP0 worker (79,028 MiB in the listing) and the server: the server's bytes are
    # its engine's, apart from the worker, and not foreign, orphaned, hidden or "no process"
    gpu0 = observed.gpus[0]
    assert outside_bytes(gpu0, engine_id) == OutsideBytes(0, 0, 0, API_SERVER_CONTEXT_MIB * MIB)
    assert outside_bytes(gpu0, None) == OutsideBytes(0, 0, 0, API_SERVER_CONTEXT_MIB * MIB)
    rank0 = view.ranks[0].observed
    assert (rank0.process_bytes, rank0.server_bytes, rank0.foreign_bytes) == (
        79028 * MIB, API_SERVER_CONTEXT_MIB * MIB, 0,
    )  # fmt: skip
    # another engine's server on the same GPU is foreign to that engine
    assert outside_bytes(gpu0, "sglang:1").foreign == (79028 + API_SERVER_CONTEXT_MIB) * MIB


def test_a_server_alone_on_its_gpu_is_no_rank_and_its_bytes_are_its_engines() -> None:
    """The server holds memory while its workers are not on the GPUs (not started, not visible)."""
    observed = attribute_node(*vllm_tp8_node_with_api_server(workers=False))
    _, server = process(observed, VLLM_TP8_SERVER_PID)
    assert (server.role, server.rank) == (ProcessRole.ENGINE_SERVER, None)
    assert [view.ranks for view in build_snapshot(observed, {}).engines] == [()]
    assert outside_bytes(observed.gpus[0], None).server == API_SERVER_CONTEXT_MIB * MIB


def test_rank_parts_from_engine_titles() -> None:
    assert rank_parts("sglang::scheduler_DP1_TP3") == {"dp": 1, "tp": 3}
    assert rank_parts("VLLM::Worker_TP2_EP2") == {"tp": 2, "ep": 2}
    assert rank_parts("VLLM::EngineCore") == {}
    assert rank_parts("ray::MegatronTrainRayActor.train") == {}


def test_vllm_data_parallel_rank_comes_from_the_engine_core_title() -> None:
    node, _ = two_engine_node()
    table = FakeProcessTable.of([
        launched(VLLM_SERVER_PID, [*VLLM_LAUNCH, "--data-parallel-size", "2", "--tensor-parallel-size", "2"]),
        titled(2332250, "VLLM::EngineCore_DP1", VLLM_SERVER_PID),
        titled(2332308, "VLLM::Worker_TP1", 2332250),
    ])  # fmt: skip
    _, worker = process(attribute_node(node, table), 2332308)
    assert worker.rank == EngineRank(dp=1, tp=1)


def test_an_untitled_worker_of_a_multi_gpu_engine_has_no_guessed_rank() -> None:
    """A forked copy of the server (same command line, no title) cannot say which TP rank it is."""
    node, _ = two_engine_node()
    table = FakeProcessTable.of([
        launched(SGLANG_SERVER_PID, SGLANG_TP2_LAUNCH),
        ProcessRecord(pid=2160317, parent_pid=SGLANG_SERVER_PID, cmdline=tuple(SGLANG_TP2_LAUNCH)),
    ])  # fmt: skip
    _, worker = process(attribute_node(node, table), 2160317)
    assert (worker.role, worker.engine_id, worker.rank) == (
        ProcessRole.ENGINE_WORKER,
        f"sglang:{SGLANG_SERVER_PID}",
        None,
    )


def test_access_denied_process_is_named_and_kept() -> None:
    """The SGLang TP0 scheduler as another user sees it: name readable, command line not."""
    node, _ = two_engine_node()
    table = FakeProcessTable.of(
        [ProcessRecord(pid=2160317, name="python3", unreadable=("command line", "environment"))]
    )
    gpu_index, denied = process(attribute_node(node, table), 2160317)
    assert (gpu_index, denied.role) == (0, ProcessRole.UNATTRIBUTED)
    assert denied.info_state is ProcessInfoState.ACCESS_DENIED
    assert denied.used_bytes == 9752 * MIB
    assert "command line" in (denied.info_message or "")


def test_secrets_in_launch_commands_are_redacted_everywhere() -> None:
    node, _ = two_engine_node()
    secret_launch = [
        "env", "HF_TOKEN=hf_abcdefghijklmnop", *VLLM_LAUNCH, "--api-key", "sk-live-123456", "--port", "8001",
    ]  # fmt: skip
    # the launching server itself holds the GPU
    table = FakeProcessTable.of([launched(2332308, [*secret_launch, "--hf-token=hf_x1"])])
    observed = attribute_node(node, table)
    dumped = observed.model_dump_json()
    for secret in ("hf_abcdefghijklmnop", "sk-live-123456", "hf_x1"):
        assert secret not in dumped
    _, server = process(observed, 2332308)
    assert (server.role, server.rank) == (
        ProcessRole.ENGINE_SERVER,
        None,
    )  # its engine's server, never a rank
    assert server.cmdline[:2] == ("env", "HF_TOKEN=***")
    assert server.cmdline[-3:] == ("--port", "8001", "--hf-token=***")
    engine = observed.engine("vllm:2332308")
    assert engine is not None and engine.settings is not None
    assert engine.settings.flags["api-key"] == "***"
    assert engine.port == 8001


def test_psutil_table_reads_this_process() -> None:
    record = PsutilProcessTable().lookup(os.getpid())
    assert record is not None
    assert record.parent_pid == os.getppid()
    with open("/proc/self/cmdline", "rb") as own:  # the kernel's own record (pytest, or an xdist worker)
        assert list(record.cmdline) == own.read().decode().rstrip("\0").split("\0")
    assert record.start_time is not None and record.user
    assert (record.uid, record.exe) == (os.getuid(), os.path.realpath(sys.executable))  # what names it


def test_psutil_table_returns_none_for_an_exited_pid() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert PsutilProcessTable().lookup(child.pid) is None


def test_host_memory_is_read_from_the_os() -> None:
    total, available = read_host_memory()
    assert 0 < available <= total
