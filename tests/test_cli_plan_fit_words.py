"""A plan names its terms in words; the fit's key is traceability in the JSON (`terms[].fit_key`), never the only name
on a line (session 51's trial: "wider: no record of vllm.non_torch.v18 on the H200", now `outside the corpus:`).

vLLM 0.6.4.post1 at TP 8 on H200s plans its non-torch memory with the `v0` era's growth standing in (v0.6.4's own
era has no fit since session 51: calibration_eras.NON_TORCH_STAND_IN) plus one process's CUDA context. Until
session 52 its custom all-reduce feature was one source's (issue 10702's Llama-3.1-70B start); since then V0's fit
holds it from two sources (feature_sources (22, 2)), and the interval widens because no V0 record ran an H200 (its
GPUs: A10 … V100-32GB), said with the term's label and the plan's release.
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from tests.data_paths import CONFIGS


def test_a_widened_term_is_named_by_its_label_and_release_and_its_key_stays_in_the_json(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["plan", "--no-calibration-store", "--model", str(CONFIGS / "meta-llama--Llama-3.1-70B-Instruct.json"),
            "--engine", "vllm", "--engine-version", "0.6.4.post1", "--tensor-parallel-size", "8", "--gpu", "H200"]  # fmt: skip
    assert main([*args, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    non_torch = next(term for term in out["terms"] if term["term"] == "non_torch")
    assert non_torch["fit_key"] == "vllm.non_torch.v0"
    assert non_torch["beyond"] == "no record of vLLM's non-torch memory at 0.6.4.post1 on the H200"
    assert non_torch["beyond"] in out["beyond_support"]
    assert not any(term["fit_key"] in why for term in out["terms"] if term["fit_key"] for why in out["beyond_support"])
    assert main(args) == 0
    text = capsys.readouterr().out
    interval = next(line for line in text.splitlines() if line.startswith("Interval"))
    assert "outside the corpus: " in interval and "no record of vLLM's non-torch memory at 0.6.4.post1 on the H200" in interval
    assert "vllm.non_torch" not in interval
