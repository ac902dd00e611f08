"""An unknown `--gpu` names the three nearest known names and the command that lists them all (`--list-gpus`),
not the whole table on one line. The nearest are difflib's: 'H1000' is one edit from H100 and from H800/V100
(ratio 0.89 and 0.67 each: independent of kvtop's table order)."""

from __future__ import annotations

import difflib

import pytest

from kvtop.cli import main
from kvtop.domain.errors import InputError
from kvtop.domain.gpus import GPU_TOTAL_MIB, gpu_total_bytes, known_gpus


def message(name: str) -> str:
    with pytest.raises(InputError) as caught:
        gpu_total_bytes(name)
    return str(caught.value)


def test_a_typo_names_three_nearest_and_the_listing() -> None:
    said = message("H1000")
    assert "did you mean H100, " in said and said.count(",") < 6
    assert "kvtop plan --list-gpus" in said and "--gpu-memory" in said
    assert "GB300-DGX-STATION" not in said  # the table is no longer printed whole


def test_the_nearest_are_difflibs_three() -> None:
    expected = difflib.get_close_matches("A100X", list(known_gpus()), n=3, cutoff=0.0)
    assert expected[0] == "A100" and f"did you mean {', '.join(expected)}?" in message("a100x")


def test_list_gpus_prints_every_name_with_nvidia_smis_total(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["plan", "--list-gpus"])
    out = capsys.readouterr().out
    assert exited.value.code == 0
    assert "  H100                        81,559 MiB  (79.65 GiB)" in out  # 81,559 MiB: nvidia-smi's H100 total
    assert all(f"  {name} " in out for name in GPU_TOTAL_MIB)
