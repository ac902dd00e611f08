"""--engine-version naming a release line the engine never shipped is said, not planned silently.

TensorRT-LLM's PyPI releases go 0.5 … 0.21, then 1.0 (kvtop/domain/engines/trtllm/eras.py CALENDAR, the first upload of
each on pypi.org/project/tensorrt-llm): a '0.99.0' sits inside that range yet names no line it shipped, so the plan
says so; a release of a line it shipped (0.11, 1.2.3) and one outside the range keep their own wording.
"""

from __future__ import annotations

import pytest

from kvtop.domain.engines.trtllm.eras import CALENDAR
from kvtop.domain.engines.versions import from_flag


def test_a_release_line_the_calendar_lacks_is_named() -> None:
    assert from_flag("0.99.0", CALENDAR).detail == (
        "--engine-version 0.99.0 (no 0.99 release on the engine's calendar: the rules of the releases around it apply)"
    )


@pytest.mark.parametrize(("text", "detail"), [
    ("0.11", "--engine-version 0.11"),  # 0.11.0 was released (2024-07-17)
    ("1.2.3", "--engine-version 1.2.3"),  # a patch of the 1.2 line: the line is known
    ("0.4.0", "--engine-version 0.4.0 (older than 0.5.0, the oldest release kvtop models: the oldest rules apply)"),
])  # fmt: skip
def test_a_release_of_a_shipped_line_or_outside_the_range_keeps_its_wording(text: str, detail: str) -> None:
    assert from_flag(text, CALENDAR).detail == detail
