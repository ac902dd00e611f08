"""`plan --flashinfer`'s help names the engines that read the statement and where, as each engine's deployment rules
say (`DeploymentRules.flashinfer_read`): shared code names no engine (tests/test_import_graph.py)."""

from __future__ import annotations

import pytest

from kvtop.cli import main


def test_the_help_quotes_the_engines_span(capsys: pytest.CaptureFixture[str]) -> None:
    # vLLM takes an importable FlashInfer >= 0.2.3 from v0.9.0 (v1/sample/ops/topk_topp_sampler.py v0.9.0:33-38) and
    # makes it opt-in from v0.11.1 (vllm#26859); no other engine's rules read it
    with pytest.raises(SystemExit):
        main(["plan", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert ("whether the install holds FlashInfer beside the engine (pip flashinfer-python): vLLM v0.9.0 to before "
            "v0.11.1 samples with it wherever it imports") in help_text  # fmt: skip
