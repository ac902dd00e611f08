"""An unknown --gpu names the cards near it, and none where nothing is near: 'FOO' was answered 'did you mean THOR,
ORIN, JETSON-THOR?' (difflib at cutoff 0, any three names), which misleads more than it helps."""

from __future__ import annotations

import pytest

from kvtop.domain.errors import InputError
from kvtop.domain.gpus import gpu_total_bytes, nearest_gpus


def test_nothing_near_names_no_card() -> None:
    assert nearest_gpus("FOO") == ()
    with pytest.raises(InputError) as raised:
        gpu_total_bytes("FOO")
    message = str(raised.value)
    assert "did you mean" not in message and "THOR" not in message
    assert "`kvtop plan --list-gpus` lists the" in message and "give --gpu-memory SIZE" in message


@pytest.mark.parametrize(("typed", "meant"), [("V1OO", "V100"), ("RTX4O90", "RTX4090"), ("ORION", "ORIN"), ("T4X", "T4")])
def test_a_typo_still_names_the_card(typed: str, meant: str) -> None:
    assert meant in nearest_gpus(typed)
    with pytest.raises(InputError, match=f"did you mean [^?]*{meant}"):
        gpu_total_bytes(typed)
