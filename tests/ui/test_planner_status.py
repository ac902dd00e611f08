"""The planner's status line, decided apart from its widgets (kvtop/ui/screens/planner_status.py): the first
problem of the edit marks its fields, a model typed and not loaded is said before any verdict."""

from __future__ import annotations

from kvtop.commands import render_launch
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.wording import DEFAULTS_SAID, flags_said
from kvtop.ui.plan_fields import FieldError
from kvtop.ui.planning import PlanOutcome
from kvtop.ui.screens.planner_status import LAYOUT_FIELDS, EditProblems, flags_line, plan_status

NO_PLAN = PlanOutcome(before=None, after=None, settings=None)


def test_field_errors_mark_their_fields_and_count_past_three() -> None:
    errors = tuple(FieldError(key, f"{key.upper()}: bad") for key in ("tp", "pp", "dp", "context_length"))
    status = plan_status(PlanOutcome(before=None, after=None, settings=None, errors=errors), EditProblems(), "m")
    assert status.text.splitlines() == ["✗ TP: bad", "✗ PP: bad", "✗ DP: bad", "  and 1 more (the fields marked red)"]
    assert status.marked == ("tp", "pp", "dp", "context_length") and status.style == "bold $error"


def test_a_layout_past_the_node_marks_the_layout_fields() -> None:
    status = plan_status(NO_PLAN, EditProblems(too_large="needs 16 GPUs, the node has 8"), "m")
    assert (status.text, status.marked) == ("✗ needs 16 GPUs, the node has 8: not copyable", LAYOUT_FIELDS)


def test_a_typed_model_not_loaded_is_said_and_its_load_error_names_the_model_planned() -> None:
    assert plan_status(NO_PLAN, EditProblems(pending_model="llama-3-8b"), "m").text == (
        "model: press Enter to load 'llama-3-8b'"
    )
    failed = EditProblems(pending_model="x", model_error="model: cannot read 'x'")
    assert plan_status(NO_PLAN, failed, "m").text == "✗ model: cannot read 'x' (still planning with 'm')"


def test_no_settings_no_flags() -> None:
    live = LaunchSettings(engine="vllm")
    assert flags_line(NO_PLAN, EditProblems(), live).plain == "engine flags: — (fix the edit above first)"


def test_a_launch_with_no_flag_is_said_in_plans_words() -> None:
    """No engine flag: `kvtop plan --layouts` prints 'flags: none: the engine's defaults' (render_layouts); the planner
    said "(engine defaults)", a third wording (session 67's second reader)."""
    live = LaunchSettings(engine="vllm")
    outcome = PlanOutcome(before=None, after=None, settings=live)
    assert flags_line(outcome, EditProblems(), live).plain == "engine flags: none: the engine's defaults"
    assert flags_said("") == "none: the engine's defaults" and flags_said("--tensor-parallel-size 2") == "--tensor-parallel-size 2"
    assert render_launch.DEFAULTS_SAID is DEFAULTS_SAID  # plan's fitting line (render_launch.launch_said) reads the same words
