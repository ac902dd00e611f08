"""`--cuda-graph-backend-prefill tc_piecewise`, typed: a prefill choice from 0.5.14 to 0.5.21 (model_executor/
cuda_graph_config.py ALLOWED_BACKENDS_PER_PHASE, 0.5.14:58, 0.5.21:61-66; gone from 0.5.22's Backend.ALL, :48), whose
switch-offs are its own (`_disable_tc_piecewise_cudagraph_if_incompatible`, 0.5.17 server_args.py:4377: no MLA rule,
off for `--enable-torch-compile`), not the breakable default's (0.5.17 `_disable_breakable_cudagraph_if_incompatible`
:4452-4512: off for an MLA model other than DSA).

Expected reserves by SGLang's arithmetic (`_handle_gpu_memory_settings`) for DeepSeek-V3 (MLA) at TP 8 on one H200
(143,771 MiB), context 8,192: 512 metadata + 1.5 × 8,192 activations + 1,024 for TP 8 + 2 × 512 decode graphs =
14,848 MiB with no prefill graphs; + 1,536 for MLA prefill graphs (0.5.17 server_args.py:4910) = 16,384 MiB.
"""

from __future__ import annotations

import pytest

from kvtop.domain.errors import InputError, UnsupportedModelError
from tests.engines.sglang.automatic_fraction import automatic_fraction

DSV3 = "deepseek-ai--DeepSeek-V3.json"
KIMI_K25 = "heldout/moonshotai--Kimi-K2.5.json"  # multimodal
TC = ["--cuda-graph-backend-prefill", "tc_piecewise"]
WITH_GRAPHS, WITHOUT = "143771 − 16384 MiB reserve", "143771 − 14848 MiB reserve"


def _source(version: str, flags: list[str], config: str = DSV3) -> str:
    return automatic_fraction(config, version, ["--tp", "8", *flags])[1]


def test_named_tc_piecewise_keeps_an_mla_models_graphs_where_breakable_drops_them() -> None:
    assert WITHOUT in _source("0.5.17", [])  # the breakable default: off for MLA (not DSA)
    assert WITH_GRAPHS in _source("0.5.17", TC)


def test_named_tc_piecewise_follows_its_own_switch_offs() -> None:
    source = _source("0.5.17", [*TC, "--enable-torch-compile"])
    assert WITHOUT in source and "no prefill graphs (off for --enable-torch-compile)" in source


@pytest.mark.parametrize(("version", "error"), [
    ("0.5.13", r"has no --cuda-graph-backend-prefill \(first in v0.5.14"),  # the flag's row (flag_releases.READ)
    ("0.5.22", "forces a prefill CUDA-graph backend whose reserve kvtop does not model"),
])  # fmt: skip
def test_named_tc_piecewise_outside_0_5_14_to_0_5_21_is_refused(version: str, error: str) -> None:
    with pytest.raises((InputError, UnsupportedModelError), match=error):
        _source(version, TC)


def test_a_multimodal_model_under_named_tc_piecewise_is_not_modelled() -> None:
    with pytest.raises(UnsupportedModelError, match="multimodal model under a named tc_piecewise"):
        _source("0.5.17", TC, KIMI_K25)
