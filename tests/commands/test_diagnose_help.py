"""`kvtop diagnose --help` states the exit status a script reads (it was only in the module's docstring), and the
command keeps it: 1 for a node with a warning (the orphan-vllm-worker demo: a worker whose server is gone holds
GPU 1, examples/scenarios), 0 where only advice is found (the TensorRT-LLM demo's FP8-KV advice)."""

from __future__ import annotations

import pytest

from kvtop.cli import main


def test_the_help_states_the_exit_status(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["diagnose", "--help"])
    said = " ".join(capsys.readouterr().out.split())
    assert "exit status: 0 nothing wrong (advice, such as FP8 KV, does not count); 1 a finding of severity warning" in said


@pytest.mark.parametrize(("scenario", "status"), [("orphan-vllm-worker", 1), ("llama70b-tp8-trtllm", 0)])
def test_the_status_is_the_one_the_help_states(capsys: pytest.CaptureFixture[str], scenario: str, status: int) -> None:
    assert main(["diagnose", "--demo", scenario]) == status
    out = capsys.readouterr().out
    assert ("WARNING  Orphaned engine workers hold GPU memory" in out) == (status == 1)
