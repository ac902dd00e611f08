"""What the operator changes in the TUI (theme, order, columns) is saved and where the next run starts."""

from __future__ import annotations

from kvtop.domain.preferences import Preferences
from kvtop.sources.preferences_file import PreferencesFile
from kvtop.ui.state import spark_glyph
from kvtop.ui.widgets.gpu_list import GpuList
from tests.ui.conftest import wait_for, wait_for_snapshot
from tests.ui.fakes import llama_snapshot


async def test_sort_reverse_columns_and_theme_are_saved_as_they_change(make_app, tmp_path):
    store = PreferencesFile(tmp_path / "config.toml")
    app = make_app(llama_snapshot(co_tenant_gpu=3), preferences_store=store)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for_snapshot(pilot)
        await pilot.press("s", "s", "S", "V", "H", "t")  # least free, reversed, no vitals, no history, next theme
        await wait_for(pilot, lambda: store.load().theme == app.theme and store.load().hidden_columns == ("history", "vitals"))
    saved = store.load()
    assert (saved.sort, saved.reverse_sort, saved.hidden_columns) == ("least free", True, ("history", "vitals"))
    assert saved.theme == app.theme != "dark"


async def test_the_next_run_starts_from_the_saved_order_and_columns(make_app, tmp_path):
    chosen = Preferences(sort="least free", reverse_sort=False, hidden_columns=("vitals",))
    app = make_app(llama_snapshot(co_tenant_gpu=3), preferences=chosen)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for_snapshot(pilot)
        gpus = app.screen.query_one(GpuList)
        await wait_for(pilot, lambda: gpus.shown_gpus and gpus.shown_gpus[0] == 3)  # the least free first
        assert "sorted: least free (s)" in app.screen.query_one("#legend").render().plain
        assert "GPU util" not in gpus.row_text(0) and "°C" not in gpus.row_text(0)


async def test_vitals_and_their_history_show_on_the_row_and_V_hides_them(make_app):
    """NVML's utilisation, temperature, power and SM clock beside the bars (the fake node's GPU 0)."""
    snapshot = llama_snapshot()
    gpu0 = snapshot.observation.gpu(0).model_copy(
        update={"utilization_percent": 64, "temperature_c": 56, "power_mw": 372_400, "sm_clock_mhz": 1980}
    )
    node = snapshot.model_copy(update={"observation": snapshot.observation.model_copy(
        update={"gpus": (gpu0, *snapshot.observation.gpus[1:])})})  # fmt: skip
    app = make_app(node)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for_snapshot(pilot)
        gpus = app.screen.query_one(GpuList)
        first, second = gpus.row_text(0).split("\n")
        assert " GPU  64% " in first and first.split(" GPU  64% ")[1].lstrip()[0] == spark_glyph(0.64)  # ▅
        assert "56°C  372W 1980MHz" in second
        other_first, other_second = gpus.row_text(1).split("\n")  # GPU 1 reports none of them
        assert " GPU   —% " in other_first and "   —     —       —" in other_second
        await pilot.press("V")
        await pilot.pause()
        assert "°C" not in gpus.row_text(0)
