"""`secret_shapes`' first look (`_TRIGGERS`) and its cut-token prefixes (`_CUT`) are derived from the one table of
shapes (`_PREFIXED`), as `_GLUED`'s are: written by hand beside it, they had drifted. `_CUT` knew GitLab's `glpat-`
alone (a runner token `glrt-`, GitLab's documented token prefixes, cut short by a 40-character quote stayed readable),
and the first look was case-sensitive where `_WEBHOOK` is not (a Slack webhook URL in capitals kept its secret)."""

from __future__ import annotations

import pytest

from kvtop.domain.secret_shapes import _CUT, _PREFIXED, _TRIGGERS, Shape, mask_secret_shapes


def test_every_shape_gives_the_first_look_something_to_find() -> None:
    # a shape of no prefix says its trigger (Notion's `secret_`/`ntn_`, Terraform's `atlasv1`, Telegram's `:AA`): an
    # empty alternative would make every text pass the first look
    assert all(shape.looked_for for shape in _PREFIXED)
    assert _TRIGGERS.search("a text of no shape") is None


def test_a_cut_gitlab_runner_token_is_masked_after_its_prefix() -> None:
    assert mask_secret_shapes("runner glrt-aB3dE5fG7hI9…") == "runner glrt-***…"
    assert _CUT.search("glpat-aB3dE5fG7hI9…") is not None


def test_a_webhook_url_in_capitals_is_masked() -> None:
    url = "HTTPS://HOOKS.SLACK.COM/services/T0A1B2C3D/B0A1B2C3D/aB3dE5fG7hI9jK1lM3nO5pQ7"
    assert mask_secret_shapes(url) == "HTTPS://HOOKS.SLACK.COM/services/***"


def test_words_that_end_like_a_prefix_stay_readable() -> None:
    assert mask_secret_shapes("the task-name and disk-cache stay") == "the task-name and disk-cache stay"


@pytest.mark.parametrize("flag", ["glued", "cut"])
def test_a_glued_or_cut_shape_of_no_prefix_is_refused(flag: str) -> None:
    # `_GLUED` and `_CUT` join these prefixes: an empty one would mask the tail of any flag's word or quoted text
    with pytest.raises(ValueError, match="needs a prefix"):
        Shape("Notion", "", r"ntn_[A-Za-z0-9]{40,64}", **{flag: True})
    assert all(shape.prefix for shape in _PREFIXED if shape.glued or shape.cut)
