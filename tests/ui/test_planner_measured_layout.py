"""The planner's title says at which layout the free memory it plans on was measured (operator pass, session 72).

Both columns plan on the node's measured free memory before load (`planning.plan`, `measured=`): its CUDA context and
NCCL are the live launch's. An edit to another layout (TP8 → TP8 PP2) keeps that figure, so the note says so; an
unchanged layout says only where it was measured."""

from __future__ import annotations

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.ui.planning import plan
from kvtop.ui.screens.planner_lines import measured_note
from tests.ui.fakes import H100_TOTAL_BYTES, llama_settings

FREE = 78_004_617_216  # the docstring's example figure: 78,004,617,216 B = 72.65 GiB


def test_the_note_names_the_live_layout_and_an_edit_that_leaves_it(llama) -> None:
    measured = MeasuredInputs(free_before_load_bytes=FREE)
    same = plan(llama, llama_settings(), {}, gpu_total_bytes=H100_TOTAL_BYTES, gpu_name="H100", measured=measured)
    assert measured_note(measured, same) == (
        " · free before load 78,004,617,216 B (72.65 GiB), least over its GPUs, measured at the live TP8"
    )
    edited = plan(llama, llama_settings(), {"pp": "2"}, gpu_total_bytes=H100_TOTAL_BYTES, gpu_name="H100",
                  measured=measured)  # fmt: skip
    assert edited.after is not None
    assert measured_note(measured, edited).endswith(
        ", measured at the live TP8 (the edit's TP8 PP2 keeps its CUDA context and NCCL: not re-solved for it)"
    )
    assert measured_note(MeasuredInputs(), edited) == ""  # nothing measured: nothing to say
