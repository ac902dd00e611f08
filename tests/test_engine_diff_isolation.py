"""The differential harness runs every case in a fresh forked process (benchmarks/engine_diff/isolation.py).

The engines write process-wide state while they size a model (environment variables, module
globals, caches). These tests run the harness's own fork runner on cases that write such state and
check that no case sees another's, in either order, and that a case that dies is a named harness
error rather than a figure.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

from benchmarks.engine_diff.isolation import IMPORTED, run_in_child, run_in_children, warm_imports

_STATE: dict[str, int] = {"calls": 0}


def _case_writing_state(case: dict[str, Any]) -> dict[str, Any]:
    """What an engine does: read the environment and a module global, then write both."""
    seen = {"env": os.environ.get("ENGINE_DIFF_TEST_FLAG"), "calls": _STATE["calls"]}
    os.environ["ENGINE_DIFF_TEST_FLAG"] = case["name"]
    _STATE["calls"] += 1
    sys.modules[__name__].__dict__.setdefault("_written_by", case["name"])
    return {"status": "ok", "name": case["name"], **seen, "written_by": globals().get("_written_by")}


def _run(name: str) -> dict[str, Any]:
    result = run_in_child(_case_writing_state, {"name": name})
    warm_imports(result)
    return result


def test_each_case_sees_the_state_of_the_parent_not_of_the_case_before() -> None:
    first = [_run(n) for n in ("A", "B")]
    second = [_run(n) for n in ("B", "A")]
    by_name = {r["name"]: r for r in first}
    assert {r["name"]: r for r in second} == by_name
    assert by_name["B"] == {"status": "ok", "name": "B", "env": None, "calls": 0, "written_by": "B"}
    assert "ENGINE_DIFF_TEST_FLAG" not in os.environ and _STATE["calls"] == 0


def test_the_same_function_in_process_leaks_which_is_why_the_harness_forks() -> None:
    """The control: run in this process, the second case sees what the first wrote."""
    try:
        _case_writing_state({"name": "A"})
        leaked = _case_writing_state({"name": "B"})
        assert (leaked["env"], leaked["calls"]) == ("A", 1)
    finally:
        os.environ.pop("ENGINE_DIFF_TEST_FLAG", None)
        _STATE["calls"] = 0
        globals().pop("_written_by", None)


def _dies(case: dict[str, Any]) -> dict[str, Any]:
    os.kill(os.getpid(), signal.SIGKILL)
    return {"status": "ok"}


def _raises(case: dict[str, Any]) -> dict[str, Any]:
    raise RuntimeError("a bug in the runner")


def _hangs(case: dict[str, Any]) -> dict[str, Any]:
    signal.pause()
    return {"status": "ok"}


def test_a_case_that_dies_raises_or_hangs_is_a_harness_error_not_a_figure() -> None:
    assert run_in_child(_dies, {}) == {
        "status": "harness-error",
        "message": "the case's process died (signal SIGKILL)",
    }
    raised = run_in_child(_raises, {})
    assert raised["status"] == "harness-error" and "RuntimeError: a bug in the runner" in raised["message"]
    assert run_in_child(_hangs, {}, timeout_s=1) == {
        "status": "harness-error",
        "message": "the case's process died (no answer within 1 s)",
    }


def _imports_a_module(case: dict[str, Any]) -> dict[str, Any]:
    import colorsys  # noqa: F401  (a module nothing in the test process has imported)

    return {"status": "ok"}


def test_the_modules_a_child_imported_are_imported_in_the_parent_for_the_next_children() -> None:
    sys.modules.pop("colorsys", None)
    result = run_in_child(_imports_a_module, {})
    assert "colorsys" in result[IMPORTED] and "colorsys" not in sys.modules
    warm_imports(result)
    assert IMPORTED not in result and "colorsys" in sys.modules


def test_a_model_class_module_stays_for_each_case_to_import_after_its_server_arguments(tmp_path: Any) -> None:
    """SGLang 0.5.23's models/deepseek_v4.py reads SGLANG_OPT_FP8_WO_A_GEMM at import, which the server
    arguments set False on sm90 first: warmed in the parent, the next case built wo_a FP8 (the registry's
    DeepSeek-V4-Flash TP 1 row: 180,919,578,804 B where the case alone builds 182,362,067,124 B, bf16)."""
    package = tmp_path / "sglang" / "srt" / "models"
    package.mkdir(parents=True)
    for folder in (tmp_path / "sglang", tmp_path / "sglang" / "srt", package):
        (folder / "__init__.py").write_text("")
    (package / "kvtop_probe_model.py").write_text("")
    sys.path.insert(0, str(tmp_path))
    try:
        warm_imports({IMPORTED: ["sglang.srt.models.kvtop_probe_model"]})
        assert "sglang.srt.models.kvtop_probe_model" not in sys.modules
    finally:
        sys.path.remove(str(tmp_path))


def _min_over_ranks(case: dict[str, Any], rank: int) -> dict[str, Any]:
    """What an engine's pipeline stages do: each holds its own count; all_reduce(MIN) over gloo."""
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"file://{case['store']}", rank=rank, world_size=case["ranks"])
    tokens = torch.tensor(case["tokens"][rank], dtype=torch.int64)
    dist.all_reduce(tokens, op=dist.ReduceOp.MIN)
    return {"status": "ok", "rank": rank, "tokens": int(tokens.item())}


def test_the_ranks_of_a_case_run_at_once_and_their_collectives_are_real(tmp_path: Any, needs_torch: None) -> None:
    """Four stages holding 700, 300, 900 and 500 tokens: torch.distributed's MIN gives each 300."""
    case = {"store": str(tmp_path / "store"), "ranks": 4, "tokens": [700, 300, 900, 500]}
    results = run_in_children(_min_over_ranks, case, 4, timeout_s=120)
    assert [(r["rank"], r["tokens"]) for r in results] == [(0, 300), (1, 300), (2, 300), (3, 300)]


class _Runner:
    """An engine class whose __init__ needs a GPU: the harness builds a shell of it instead."""

    def __init__(self, vllm_config: Any) -> None:
        self.vllm_config = vllm_config
        self.shared_layers: dict[str, str] = {}
        self.device = "cuda:0"

    def kv_spec(self) -> tuple[Any, dict[str, str]]:
        return self.vllm_config, self.shared_layers

    def speculative(self) -> Any:
        return self.speculator  # a field this class never assigns (the engine's other runner does)

    def profile_run(self) -> None:
        raise RuntimeError("needs a GPU")


def test_a_shell_holds_only_what_it_is_given_and_its_reads_are_checked_against_the_class() -> None:
    from benchmarks.engine_diff.standins import SHELL_READS, shell, shell_check

    SHELL_READS.clear()
    runner = shell(_Runner, "runner", vllm_config="cfg", shared_layers={}, methods={"profile_run": lambda: None})
    assert isinstance(runner, _Runner) and runner.kv_spec() == ("cfg", {})
    runner.profile_run()  # the stand-in method, not the class's
    try:
        runner.speculative()
    except AttributeError as err:  # never a default: the read fails, the case is a harness error
        assert "does not hold 'speculator'" in str(err)
    else:
        raise AssertionError("a field the shell does not hold was read without an error")
    assert shell_check({"runner": _Runner}) == {"runner": {"read": ["shared_layers", "vllm_config"], "not_in_class": []}}


def test_a_shell_field_the_real_class_never_assigns_fails_the_check() -> None:
    from benchmarks.engine_diff.standins import SHELL_READS, shell, shell_check

    SHELL_READS.clear()
    runner = shell(_Runner, "runner", vllm_config="cfg", speculator=None, methods={"no_such_method": lambda: None})
    assert runner.speculative() is None
    assert shell_check({"runner": _Runner})["runner"]["not_in_class"] == ["no_such_method", "speculator"]
