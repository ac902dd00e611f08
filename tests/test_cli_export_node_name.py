"""`kvtop export --node-name ""`: an operator trial found the blank name taken, and the exporter then named the
node after this host (kvtop/sources/exporter.py `node_name`), the name the operator had just tried to replace. In
Prometheus an empty label value is the same as no label (prometheus.io, "Data model": "A label with an empty label
value is considered equivalent to a label that does not exist"), so a blank name is refused at the door."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize("name", ["", "   "])
def test_a_blank_node_name_is_refused_naming_the_flag(name: str) -> None:
    argv = ["export", "--demo", "--listen", "127.0.0.1:0", "--node-name", name]
    result = subprocess.run([sys.executable, "-m", "kvtop", *argv], capture_output=True, text=True, timeout=60,
                            stdin=subprocess.DEVNULL)  # fmt: skip
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        f"kvtop: error: --node-name: must not be blank (got {name!r}); "
        "leave the option out for the default (see kvtop export --help)\n"
    )


def test_a_node_name_is_taken_as_written() -> None:
    from kvtop.cli_args import label_name

    assert label_name("gpu-node-17") == "gpu-node-17"


def test_a_secret_in_the_node_name_never_reaches_the_metrics() -> None:
    """Operator trial (session 72): `--node-name 'https://bob:pa55word@node17'` (a URL pasted from a runbook) was
    served verbatim as the `node` label of every kvtop_* series; a secret never leaves kvtop, so the label is the name
    redacted as any other text kvtop shows: the URL's user-info masked, the host kept."""
    from kvtop.sources.exporter import node_name

    assert node_name("demo:x", "https://bob:pa55word@node17") == "https://***@node17"
    assert node_name("demo:x", "node-hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789") == "node-***"
    assert node_name("demo:x", "gpu-node-17") == "gpu-node-17"
