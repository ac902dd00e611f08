"""The article before a figure as it is read aloud (session 54's trial: "leaves a 11.63 GiB runtime reserve")."""

from __future__ import annotations

import pytest

from kvtop.domain.wording import GIB, a_gib, a_or_an


@pytest.mark.parametrize(
    ("figure", "article"),
    [("8.00", "an"), ("80.50", "an"), ("800", "an"), ("11.63", "an"), ("18", "an"), ("11,500", "an"),
     ("18,000.00", "an"), ("1.00", "a"), ("110.00", "a"), ("1,800", "a"), ("0.77", "a"), ("6.00", "a"),
     ("180", "a"), ("1", "a")],
)  # fmt: skip
def test_the_article_follows_the_figure_read_aloud(figure: str, article: str) -> None:
    assert a_or_an(figure) == article


def test_a_byte_figure_takes_its_article() -> None:
    assert a_gib(round(11.63 * GIB)) == "an 11.63 GiB"
    assert a_gib(2.5 * GIB) == "a 2.50 GiB"
