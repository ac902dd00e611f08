"""The planner's title names how the live engine's release was found, as the basis ledger found it: an operator
trial saw 'rules of SGLang 0.5.9 (--engine-version 0.5.9)' for an engine whose release its startup log printed,
a flag nobody typed; `_predict` re-derived the release from the settings instead of reading the ledger's.

The fake node (tests/ui/fakes.py) solved here with the release its log states (`versions.resolve`: the log line
that prints it), as the log reader resolves it; editing the release reads the new one from the edit, a flag."""

from __future__ import annotations

from kvtop.domain.engines.sglang import RULES
from kvtop.domain.engines.versions import VersionSource, resolve
from kvtop.domain.ledger import predict
from kvtop.domain.node import build_snapshot
from tests.ui.fakes import ENGINE_ID, H100_TOTAL_BYTES, llama_model, llama_settings, llama_snapshot
from tests.ui.helpers import open_planner, retype, shown

LOGGED = resolve(engine_name="SGLang", stated="0.5.9", stated_line=3, hint=None, first_date=None,
                 calendar=RULES.calendar)  # fmt: skip


def _logged_release_node():
    ledger = predict(llama_model(), llama_settings(), gpu_total_bytes=H100_TOTAL_BYTES, gpu_name="H100",
                     version=LOGGED)  # fmt: skip
    return build_snapshot(llama_snapshot().observation, {ENGINE_ID: ledger}, source="fake:llama-3-70b-tp8")


async def test_the_title_names_the_release_as_the_log_stated_it(make_app) -> None:
    assert (LOGGED.source, LOGGED.detail) == (VersionSource.LOG, "from log line 3: SGLang 0.5.9")
    app = make_app(_logged_release_node())
    async with app.run_test(size=(200, 60)) as pilot:
        screen = await open_planner(pilot)
        title = " ".join(shown(screen, "#planner-title").split())
        assert "rules of SGLang 0.5.9 (from log line 3: SGLang 0.5.9)" in title
        assert "--engine-version" not in title
        assert screen.basis.version == LOGGED  # read from the basis ledger, not derived again
        await retype(pilot, "#plan-engine_version", "0.5.23")  # the edit's release is the edit's: a flag
        outcome = screen.outcome
        assert outcome is not None and outcome.before is not None and outcome.after is not None
        assert outcome.before.version == LOGGED
        assert (outcome.after.version.text, outcome.after.version.source) == ("0.5.23", VersionSource.FLAG)
