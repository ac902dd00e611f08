"""The PyTorch engine's one DP world planned (kvtop.domain.engines.lmdeploy.pytorch_world, `ParallelLayout.world`).

Expected figures from the wheels' arithmetic, never from kvtop: pytorch/config.py `DistConfig.__post_init__` (0.11.0,
0.18.0: world = ep at ep > 1 else tp, attn_tp = world ÷ dp, mlp_tp = tp, moe_tp = 1 at ep > 1 else tp; 0.9.0 –
0.10.2: world = dp at dp > 1, attention TP 1), serve/openai/launch_server.py (max(dp, tp, ep) GPUs from 0.11.0, one a
DP rank before). Bytes by hand from the Qwen3-30B-A3B config: 48 layers, 4 KV heads of 128, bf16 (KV a token
48 × 2 × heads-a-rank × 128 × 2 B), 128 experts of 3 × 768 × 2,048.
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.errors import InputError
from kvtop.domain.launch import check_parallel, parse_flags
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA

QWEN3_MOE = DATA / "configs" / "Qwen--Qwen3-30B-A3B.json"
H100_BYTES = 80 << 30
EXPERT_BYTES = 48 * 3 * 768 * 2_048 * 2  # one expert over the 48 layers, bf16


def _plan(flags: list[str]) -> Ledger:
    model = model_from_config(json.loads(QWEN3_MOE.read_text()), source=QWEN3_MOE.name)
    settings = parse_flags("lmdeploy", ["--model", "m", "--backend", "pytorch", *flags])
    check_parallel(settings)
    return predict(model, settings, gpu_total_bytes=H100_BYTES, gpu_name="H100", measured=MeasuredInputs())


def _routed(ledger: Ledger) -> int:
    return next(row.bytes for row in ledger.ranks[0].weights.rows if row.component == "routed_experts")


@pytest.mark.parametrize(
    ("release", "flags", "gpus", "kv_heads", "routed"),
    [  # 0.16.0 --tp 1 --ep 4: world 4, attn_tp 4 (one KV head a rank), 32 experts a rank
     ("0.16.0", ["--ep", "4"], 4, 1, 32 * EXPERT_BYTES),
     # --tp 4 --dp 2 --ep 4: world ep = 4, attn_tp 4 ÷ 2 = 2, moe_tp 1: 32 experts a rank
     ("0.16.0", ["--tp", "4", "--dp", "2", "--ep", "4"], 4, 2, 32 * EXPERT_BYTES),
     # --tp 1 --dp 2 --ep 4: world 4, attn_tp 2, the MLP whole (mlp_tp 1)
     ("0.18.0", ["--dp", "2", "--ep", "4"], 4, 2, 32 * EXPERT_BYTES),
     # --tp 2 --dp 2 (no ep): world tp = 2 GPUs (not 4), attn_tp 1, moe_tp = mlp_tp 2: every expert over 2
     ("0.16.0", ["--tp", "2", "--dp", "2"], 2, 4, 64 * EXPERT_BYTES),
     # v0.10.2 --tp 2 --dp 4: world dp = 4 GPUs, one a DP rank, attention TP 1, the MLP over TP groups of 2
     ("0.10.2", ["--tp", "2", "--dp", "4"], 4, 4, 64 * EXPERT_BYTES)],
)  # fmt: skip
def test_the_dp_world_is_planned_on_its_own_gpus(
    release: str, flags: list[str], gpus: int, kv_heads: int, routed: int
) -> None:
    ledger = _plan(["--engine-version", release, *flags])
    assert ledger.layout.gpus == len(ledger.ranks) == gpus
    assert ledger.ranks[0].kv.full_bytes_per_token == 48 * 2 * kv_heads * 128 * 2
    assert _routed(ledger) == routed


@pytest.mark.parametrize(
    ("release", "flags", "words"),
    [("0.16.0", ["--tp", "2", "--dp", "4"], r"^--dp: .* asserts: 'world_size 2, dp 4'"),
     ("0.10.2", ["--tp", "4", "--dp", "2"], r"^--dp: .* asserts: 'only support tp <= dp, but give tp=4, dp=2'"),
     ("0.16.0", ["--tp", "4", "--ep", "2"], r"^--ep: .* asserts at --tp 4 --dp 1 --ep 2")],
)  # fmt: skip
def test_the_worlds_it_asserts_on_are_refused_in_its_words(release: str, flags: list[str], words: str) -> None:
    with pytest.raises(InputError, match=words):
        _plan(["--engine-version", release, *flags])


def test_a_world_is_left_out_of_a_layout_that_states_none() -> None:
    """SGLang's DP attention (world None): GPUs tp, attention TP tp ÷ dp, and no `world` in its dump (plan --json
    keeps its bytes); a stated world of 4 at tp 1, dp 2 is 4 GPUs at attention TP 2."""
    sglang = ParallelLayout(tp=4, dp=2, dp_attention=True)
    assert (sglang.gpus, sglang.attn_tp) == (4, 2) and "world" not in sglang.model_dump()
    stated = ParallelLayout(tp=1, dp=2, ep=4, dp_attention=True, world=4)
    assert (stated.gpus, stated.attn_tp, stated.expert_ranks) == (4, 2, 4)
    assert stated.describe() == "TP1 DP2 (DP attention) EP4 world 4 (attention TP 2)"


@pytest.mark.parametrize(("release", "fix"), [("0.16.0", "--tp 4 --dp 2"), ("0.10.2", None)])
def test_the_layout_advice_raises_dp_inside_the_pytorch_world(release: str, fix: str | None) -> None:
    """Qwen2.5-1.5B (2 KV heads) at tp 4 holds each head on 2 ranks: on 0.16.0 `--tp 4 --dp 2` is the same 4 GPUs at
    attention TP 4 ÷ 2 = 2 (DistConfig); v0.10.2's world at --dp 2 is 2 GPUs at attention TP 1 and asserts tp <= dp."""
    from kvtop.domain.diagnose import diagnose_ledger

    config = DATA / "calibration" / "configs" / "Qwen--Qwen2.5-1.5B-Instruct.RECONSTRUCTED.json"
    model = model_from_config(json.loads(config.read_text()), source=config.name)
    settings = parse_flags("lmdeploy", ["--model", "m", "--backend", "pytorch", "--engine-version", release, "--tp", "4"])
    ledger = predict(model, settings, gpu_total_bytes=H100_BYTES, gpu_name="H100", measured=MeasuredInputs())
    finding = next(f for f in diagnose_ledger(ledger) if f.rule == "tp_above_kv_heads")
    assert finding.fix.endswith(fix) if fix else "--dp" not in finding.fix


@pytest.mark.parametrize(("backend", "gpus"), [(["--backend", "pytorch"], 4), ([], 8)])
def test_the_placement_checks_count_the_world_the_typed_backend_runs(backend: list[str], gpus: int) -> None:
    """Before the model is read (`layout_from_settings`: --nodes, --gpus-per-node, --host-cache), --tp 4 --dp 2 on a
    typed PyTorch backend is its world of tp = 4 GPUs (DistConfig, 0.16.0); untyped, the backend is the model's and the
    launch counts TurboMind's tp × dp = 8 (`TurbomindEngineConfig(dp=…)`, one api_server from v0.11.0)."""
    from kvtop.domain.ledger import layout_from_settings

    settings = parse_flags("lmdeploy", ["--model", "m", "--engine-version", "0.16.0", "--tp", "4", "--dp", "2", *backend])
    assert layout_from_settings(settings).gpus == gpus


def test_the_node_check_counts_the_world_of_the_backend_the_model_picks(capsys: pytest.CaptureFixture[str]) -> None:
    """No --backend: DeepSeek-V3 is the PyTorch engine's (TurboMind's supported_models.py lacks it), whose
    `--tp 8 --dp 8 --ep 8` on 0.16.0 is one world of ep = 8 GPUs (config.py DistConfig), not tp × dp = 64: the
    node check asks the backend the ledger asks and passes where the plan runs on 8 GPUs."""
    from kvtop.cli import main

    config = str(DATA / "configs" / "deepseek-ai--DeepSeek-V3.json")
    args = ["plan", "--json", "--model", config, "--engine", "lmdeploy", "--engine-version", "0.16.0", "--gpu", "H200",
            "--tp", "8", "--dp", "8", "--ep", "8", "--nodes", "1", "--gpus-per-node", "8"]  # fmt: skip
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["layout"]["gpus"] == 8
    assert main([*args[:-1], "4"]) == 2  # 8 ranks on a node of 4 GPUs: refused by the same count
    assert "8 ranks on each of 1 nodes, which have 4 GPUs" in capsys.readouterr().err
