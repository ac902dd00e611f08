"""LMDeploy's layout fix on the PyTorch engine (kvtop/domain/engines/lmdeploy/diagnosis.py `layout_alternatives`): its
`--dp` runs inside one world, so smaller attention TP over the same GPUs keeps `--tp` and raises `--dp`.

Expected layouts from LMDeploy's code, never from kvtop: from v0.11.0 (PR #4004) pytorch/config.py
`DistConfig.__post_init__` makes the world tp (ep 1) and attention TP world ÷ dp, asserting the world divisible by dp
(config.py 0.18.0:224-267), and launch_server.py spreads the dp servers over max(dp, tp, ep) GPUs; v0.9.0 – v0.10.2 make
the world dp GPUs at attention TP 1, and launch_server.py (0.9.0:98-104) asserts 'only support tp <= dp'. Before v0.9.0
`serve --dp N` runs one api_server per DP rank (cli/serve.py v0.8.0), which kvtop does not model. The model:
Qwen3-30B-A3B (4 KV heads), bf16, on H100s.
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.lmdeploy.diagnosis import layout_alternatives
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA

QWEN3_MOE = DATA / "configs" / "Qwen--Qwen3-30B-A3B.json"


def _ledger(release: str, tp: int) -> Ledger:
    model = model_from_config(json.loads(QWEN3_MOE.read_text()), source=QWEN3_MOE.name)
    settings = parse_flags("lmdeploy", ["--model", "m", "--backend", "pytorch", "--engine-version", release, "--tp", str(tp)])
    return predict(model, settings, gpu_total_bytes=80 << 30, gpu_name="H100", measured=MeasuredInputs())


@pytest.mark.parametrize(("release", "attn_tp", "dp"), [
    ("0.16.0", 1, 4),  # world tp = 4 GPUs, attention TP 4 ÷ 4 = 1
    ("0.16.0", 2, 2),  # world 4, attention TP 4 ÷ 2 = 2
    ("0.10.2", 1, 4),  # world dp = 4 GPUs at attention TP 1, tp 4 <= dp 4
])  # fmt: skip
def test_the_pytorch_engine_keeps_tp_and_raises_dp(release: str, attn_tp: int, dp: int) -> None:
    options = layout_alternatives(_ledger(release, 4), attn_tp)
    assert options.none_because is None
    assert [(s.tp, s.dp, s.ep) for s in options.layouts] == [(4, dp, 1)]


def test_before_v0_11_attention_tp_2_is_no_world_it_runs() -> None:
    """v0.10.2 at --tp 4 --dp 2: launch_server.py asserts tp <= dp; kvtop names the assert, offers nothing."""
    options = layout_alternatives(_ledger("0.10.2", 4), 2)
    assert options.layouts == ()
    assert options.none_because is not None and options.none_because.startswith("--tp 4 --dp 2: ")
    assert "only support tp <= dp, but give tp=4, dp=2" in options.none_because


def test_before_v0_9_its_dp_is_one_server_per_rank() -> None:
    """v0.8.0's `serve --dp` runs one api_server per DP rank (PYTORCH_DP_ERAS): not modelled, said so."""
    options = layout_alternatives(_ledger("0.8.0", 4), 1)
    assert options.layouts == ()
    assert options.none_because is not None and "not modelled" in options.none_because
