"""Pilot tests of `P`: confirm (GPU, buffers, reserve, who shares the GPU), run, cancel, result, ledger.

The runners are fakes handed to the app as the composition point would hand the real one,
except the last test, which drives the real child-process runner on host memory (`cpu`).
Node: Llama-3-70B at SGLang TP8 on 8× H100, 40,960 B of KV per token per rank, SGLang's runtime
reserve 14.31 GiB; GPU 3 has a 6 GiB co-tenant (pid 9001). There nothing fits (0.41 GiB free), so
the runs use `roomy`: the same node whose workers have not claimed 18 GiB of their reserve yet
(16.41 GiB free on GPU 3, 2.10 GiB above the reserve).
"""

from __future__ import annotations

import threading

from kvtop.commands.node_source import DemoSource
from kvtop.domain.probe import ProbeOutcome, ProbeRequest, ProbeResult
from kvtop.domain.probe_plan import tokens_within, tui_probe_request
from kvtop.domain.wording import GIB
from kvtop.sources.probe import run_probe
from kvtop.ui.keys import KEYS
from kvtop.ui.screens.dashboard import DashboardScreen
from kvtop.ui.screens.help import HelpScreen
from kvtop.ui.screens.ledger import RankLedgerScreen
from kvtop.ui.screens.probe import ProbeScreen
from tests.ui.conftest import footer_keys, wait_for, wait_for_snapshot
from tests.ui.fakes import FakeSource, llama_snapshot
from tests.ui.helpers import (
    FILLED_TOKENS,
    KV_BYTES_PER_TOKEN,
    FakeRunner,
    filled,
    open_probe_of_gpu_3,
    wait_for_result,
)

MIB = 2**20


def no_cuda(request: ProbeRequest) -> ProbeResult:
    return ProbeResult.unmeasured(
        request,
        ProbeOutcome.NO_CUDA,
        "torch 2.13.0+cpu sees no CUDA device (a CPU-only build, or no driver); "
        "install a CUDA build of torch or use --device cpu",
    ).model_copy(update={"released": True, "release_check": "process exited"})


def not_released(request: ProbeRequest) -> ProbeResult:
    return filled(request).model_copy(
        update={"released": False, "release_check": "the probe's process group is still alive"}
    )


def text(app, selector: str) -> str:
    return app.screen.query_one(selector).render().plain



async def test_p_states_gpu_buffers_reserve_and_the_co_tenant_sharing_the_gpu(make_app, roomy):
    runner = FakeRunner()
    app = make_app(roomy, probe_runner=runner)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_probe_of_gpu_3(pilot)
        assert screen.phase == "confirm" and screen.gpu_index == 3
        plan = text(app, "#probe-plan")
        assert "Probe GPU 3 · NVIDIA H100 80GB HBM3 · rank of sglang pid 4242" in plan
        assert "cuda:3" in plan
        assert "full_k 80 × (1, 128) bfloat16 · full_v 80 × (1, 128) bfloat16" in plan
        assert "40,960 B predicted (ledger 40,960 B)" in plan
        assert "reserve   14.31 GiB kept free (the engine's runtime reserve" in plan
        assert "(free 16.41 GiB − reserve 14.31 GiB)" in plan
        assert "GPU 3 with 2 other processes" in plan
        assert "pid 9001 python3 (jupyter-kernel) 6.00 GiB · co-tenant" in plan
        assert "pid 4246 python3 (sglang::scheduler_TP3) 56.74 GiB · engine worker" in plan
        assert {"y", "n"} <= set(await footer_keys(pilot))
        assert runner.requests == []


async def test_where_nothing_fits_the_dialog_says_so_and_offers_no_run(make_app, co_tenant_snapshot):
    runner = FakeRunner()
    app = make_app(co_tenant_snapshot, probe_runner=runner)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_probe_of_gpu_3(pilot)
        assert screen.phase == "unavailable"
        reason = " ".join(text(app, "#probe-result").split())
        assert "nothing fits on GPU 3: free 0.41 GiB − reserve 14.31 GiB leaves no room" in reason
        assert not screen.query("#probe-run")
        assert "y" not in await footer_keys(pilot)
        await pilot.press("y")
        await pilot.pause()
        assert runner.requests == [] and screen.phase == "unavailable"


async def test_cancel_allocates_nothing_and_keeps_no_result(make_app, roomy):
    runner = FakeRunner()
    app = make_app(roomy, probe_runner=runner)
    async with app.run_test(size=(160, 48)) as pilot:
        await open_probe_of_gpu_3(pilot)
        await pilot.click("#probe-cancel")
        await wait_for(pilot, lambda: isinstance(app.screen, DashboardScreen))
        await pilot.press("P", "n")
        await wait_for(pilot, lambda: isinstance(app.screen, DashboardScreen))
        assert runner.requests == [] and app.probe_results == {}


async def test_run_shows_progress_then_the_result(make_app, roomy):
    runner = FakeRunner(gate=True)
    app = make_app(roomy, probe_runner=runner)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_probe_of_gpu_3(pilot)
        await pilot.press("y")
        await wait_for(pilot, runner.started.is_set)
        assert screen.phase == "running"
        assert screen.query_one("#probe-progress").display
        assert not screen.query_one("#probe-buttons").display
        assert text(app, "#probe-elapsed").startswith("probing cuda:3 · ")
        runner.gate.set()
        await wait_for_result(pilot, screen)
        result = text(app, "#probe-result")
        assert "OK: filled 26,213 tokens, keeping the reserve free" in result
        assert "26,213 allocated (+1 padding row) · 1,023.98 MiB in 1 chunk" in result
        assert "measured 40,962 B (1,073,725,440 B ÷ 26,213 tokens) · predicted 40,960 B (+0.00%" in result  # 26,214 × 40,960 B
        assert "0.50 s · 2.0 GiB/s" in result
        assert "released    yes" in result
        assert not screen.query_one("#probe-progress").display
        request = runner.requests[0]
        assert (request.device, request.fill, request.reserve_bytes) == (
            "cuda:3",
            True,
            app.probe_results[3].reserve_bytes,
        )
        assert app.probe_results[3].tokens_allocated == FILLED_TOKENS


async def test_the_rank_ledger_shows_the_probe_rows(make_app, roomy):
    app = make_app(roomy, probe_runner=FakeRunner())
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for_snapshot(pilot)
        await pilot.press("down", "down", "down", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, RankLedgerScreen))
        ledger = app.screen
        assert "probe:" not in text(app, "#ledger-table")
        await pilot.press("P", "y")
        await wait_for(pilot, lambda: isinstance(app.screen, ProbeScreen))
        await wait_for_result(pilot, app.screen)
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is ledger)
        table = text(app, "#ledger-table")
        assert "probe · cuda:3 · OK: filled 26,213 tokens" in table
        assert "probe: tokens proven" in table and "≤ 26,214" in table and "26,213" in table
        assert "probe: bytes/token measured" in table and "40,962 (+0.00%)" in table  # 26,214 × 40,960 B ÷ 26,213 = 40,961.56
        assert "probe: released" in table
        await pilot.press("escape", "enter")  # reopened, the ledger still shows GPU 3's last probe
        await wait_for(pilot, lambda: isinstance(app.screen, RankLedgerScreen) and app.screen is not ledger)
        assert "probe: tokens proven" in text(app, "#ledger-table")


async def test_escape_while_running_sets_the_cancel_event_and_shows_cancelled(make_app, roomy):
    runner = FakeRunner(gate=True)
    app = make_app(roomy, probe_runner=runner)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_probe_of_gpu_3(pilot)
        await pilot.press("y")
        await wait_for(pilot, runner.started.is_set)
        await pilot.press("escape")
        assert runner.cancels[0].is_set()
        await wait_for_result(pilot, screen)
        assert app.screen is screen  # the result stays up until closed
        assert "CANCELLED: the probe was cancelled and killed" in text(app, "#probe-result")
        assert app.probe_results[3].outcome is ProbeOutcome.CANCELLED


async def test_leaving_kvtop_while_a_probe_runs_cancels_it(make_app, roomy):
    runner = FakeRunner(gate=True)
    app = make_app(roomy, probe_runner=runner)
    async with app.run_test(size=(160, 48)) as pilot:
        await open_probe_of_gpu_3(pilot)
        await pilot.press("y")
        await wait_for(pilot, runner.started.is_set)
    assert runner.cancels[0].is_set()
    assert runner.returned.wait(5.0)


async def test_read_only_disables_p_even_with_a_runner(make_app, co_tenant_snapshot):
    runner = FakeRunner()
    app = make_app(co_tenant_snapshot, read_only=True, probe_runner=runner)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for_snapshot(pilot)
        await pilot.press("down", "down", "down", "P", "y")
        await pilot.pause()
        assert isinstance(app.screen, DashboardScreen)
        assert runner.requests == []
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))  # read the help, not a screen before it
        said = text(app, "#help-text")
        assert "--read-only" in said  # the help drawn in full, so the absence below is of the probe, not of the text
        assert "probe" not in said.split("--read-only")[0]


async def test_without_a_runner_p_explains_the_probe_is_unavailable(make_app, co_tenant_snapshot):
    app = make_app(co_tenant_snapshot)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_probe_of_gpu_3(pilot)
        assert screen.phase == "unavailable"
        assert "The probe is not available in this TUI" in text(app, "#probe-result")
        await pilot.press("y")
        assert screen.phase == "unavailable"
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, DashboardScreen))


async def test_a_lost_gpu_says_why_it_cannot_be_probed(make_app):
    runner = FakeRunner()
    app = make_app(llama_snapshot(lost_gpu=5), probe_runner=runner)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for_snapshot(pilot)
        await pilot.press("end", "up", "up", "P")
        await wait_for(pilot, lambda: isinstance(app.screen, ProbeScreen))
        assert app.screen.gpu_index == 5
        assert "GPU 5 is lost: GPU has fallen off the bus (Xid 79)" in text(app, "#probe-result")
        await pilot.press("y")
        assert runner.requests == []


async def test_no_cuda_is_shown_as_its_message_not_a_crash(make_app, roomy):
    app = make_app(roomy, probe_runner=FakeRunner(no_cuda))
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_probe_of_gpu_3(pilot)
        await pilot.press("y")
        await wait_for_result(pilot, screen)
        result = text(app, "#probe-result")
        assert "NO CUDA: torch 2.13.0+cpu sees no CUDA device" in result
        assert "released    yes" in result
        assert "allocated" not in result


async def test_memory_not_released_is_said_loudly(make_app, roomy):
    app = make_app(roomy, probe_runner=FakeRunner(not_released))
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_probe_of_gpu_3(pilot)
        await pilot.press("y")
        await wait_for_result(pilot, screen)
        assert "NO — MEMORY NOT RELEASED: check nvidia-smi" in text(app, "#probe-result")


async def test_a_runner_that_raises_ends_in_a_named_state(make_app, roomy):
    def broken(request: ProbeRequest) -> ProbeResult:
        raise OSError("no such file: python")

    app = make_app(roomy, probe_runner=FakeRunner(broken))
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_probe_of_gpu_3(pilot)
        await pilot.press("y")
        await wait_for_result(pilot, screen)
        result = text(app, "#probe-result")
        assert "WORKER CRASHED: the probe runner failed: OSError: no such file: python" in result
        assert "NO — MEMORY NOT RELEASED" in result  # unknown is never reported as released


def test_the_probe_dialog_keys_are_in_the_help_table():
    documented = {key for entry in KEYS for key in entry.keys.split(",")}
    bound = {key.strip() for binding in ProbeScreen.BINDINGS for key in binding.key.split(",")}  # type: ignore[union-attr]
    assert bound <= documented, bound - documented


async def test_the_real_runner_fills_host_memory_through_the_app(make_app, roomy, needs_torch):
    """The app's request for GPU 3, re-aimed at 512 MiB of host memory, through the real child process."""
    ledger = roomy.engine_of_gpu(3).ledger
    cpu_request = tui_probe_request(ledger, 3, 512 * MIB, device="cpu")
    asked: list[ProbeRequest] = []

    def on_cpu(request: ProbeRequest, cancel: threading.Event) -> ProbeResult:
        asked.append(request)
        return run_probe(cpu_request, cancel=cancel)

    app = make_app(roomy, probe_runner=on_cpu)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_probe_of_gpu_3(pilot)
        await pilot.press("y")
        await wait_for_result(pilot, screen, rounds=3000)
        result = app.probe_results[3]
        assert asked[0].device == "cuda:3" and asked[0].buffers == cpu_request.buffers
        assert result.outcome is ProbeOutcome.OK, result.message
        assert result.released
        assert 0 < result.tokens_allocated <= tokens_within(cpu_request, 512 * MIB) == 13_106
        assert result.measured is not None
        assert abs(result.measured.bytes_per_token / KV_BYTES_PER_TOKEN - 1) < 0.01
        assert "released    yes" in text(app, "#probe-result")


async def test_with_every_gpu_filtered_out_the_probe_says_no_gpu_is_selected(make_app, healthy_snapshot):
    runner = FakeRunner()
    app = make_app(healthy_snapshot, probe_runner=runner)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for_snapshot(pilot)
        await pilot.press("slash", "z", "z", "z", "enter", "P")
        await wait_for(pilot, lambda: isinstance(app.screen, ProbeScreen))
        assert app.screen.gpu_index is None
        assert "no GPU is selected" in text(app, "#probe-result")
        await pilot.press("y")
        assert runner.requests == []


async def test_on_a_demo_node_the_probe_runs_on_the_cpu_within_the_demo_gpus_free_memory(make_app):
    node = DemoSource.open("llama70b-tp8-foreign-gpu3").collect_at(0)
    free = node.observation.gpu(0).free_bytes
    runner = FakeRunner()
    app = make_app(
        FakeSource(node, label="demo:llama70b-tp8-foreign-gpu3"), probe_runner=runner, probe_simulated=True
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for_snapshot(pilot)
        await pilot.press("P")
        await wait_for(pilot, lambda: isinstance(app.screen, ProbeScreen))
        screen = app.screen
        assert screen.phase == "confirm"
        plan = " ".join(text(app, "#probe-plan").split())
        assert "in a child process on this machine's CPU, standing in for the simulated GPU 0" in plan
        assert f"the limit is GPU 0's free memory in the demo, {free / GIB:,.2f} GiB" in plan
        assert "cuda:" not in plan
        # session 54's trial: the demo's processes on GPU 0 are simulated; the probe on the CPU competes with none
        assert "other process" in plan and "(es)" not in plan and "competes" not in plan
        assert "they are the demo's: the probe runs in this machine's RAM, not beside them" in plan
        await pilot.press("y")
        await wait_for_result(pilot, screen)
        request = runner.requests[0]
        assert (request.device, request.memory_limit_bytes, request.reserve_bytes) == ("cpu", free, 0)


async def test_without_torch_the_probe_says_what_to_install_before_anything(make_app, roomy):
    reason = "the probe allocates with torch, which is not installed here: pip install 'kvtop-ledger[probe]'"
    app = make_app(roomy, probe_unavailable=reason)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for_snapshot(pilot)
        await pilot.press("P")
        await wait_for(pilot, lambda: isinstance(app.screen, ProbeScreen))
        assert app.screen.phase == "unavailable"
        assert " ".join(text(app, "#probe-result").split()) == reason
        assert "y" not in await footer_keys(pilot) and not app.screen.query("#probe-run")
