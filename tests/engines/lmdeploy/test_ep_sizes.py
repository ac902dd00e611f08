"""Which --ep sizes LMDeploy takes, by backend and release (kvtop.domain.engines.lmdeploy.ep_sizes), and TurboMind
before 0.15.0 planned as it runs: EP not read (session 59, #27).

Expected outcomes from the wheels, never from kvtop: turbomind/parallel_config.py (0.15.0 – 0.18.0) takes an ep that
divides tp at dp 1 (mlp_tp = tp ÷ ep) and refuses "tp=1, ep=N"; the PyTorch engine's DistConfig (pytorch/config.py)
spreads experts over the ep-rank world (its GPUs and splits: test_pytorch_world.py; before v0.11.0
check_env/dist.py exits unless dp % ep == 0); neither --ep nor --dp before v0.8.0 (cli/utils.py); TurboMind 0.14.0's cli/serve.py:231 passes ep to
PytorchEngineConfig only. Per-rank bytes by hand from the Qwen3-30B-A3B config (48 layers × 128 experts of
3 × 768 × 2,048, bf16): over TP 2, 64 experts a rank.
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.errors import InputError, LayoutError
from kvtop.domain.launch import check_parallel, parse_flags
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA

QWEN3_MOE = DATA / "configs" / "Qwen--Qwen3-30B-A3B.json"
QWEN3_NEXT = DATA / "configs" / "Qwen--Qwen3-Next-80B-A3B-Thinking.json"
H100_BYTES = 80 << 30
ROUTED_OVER_TP2 = 48 * 128 // 2 * 3 * 768 * 2_048 * 2  # 28,991,029,248 B: 64 of 128 experts whole


def _plan(flags: list[str]) -> Ledger:
    model = model_from_config(json.loads(QWEN3_MOE.read_text()), source=QWEN3_MOE.name)
    settings = parse_flags("lmdeploy", ["--model", "m", *flags])
    check_parallel(settings)
    return predict(model, settings, gpu_total_bytes=H100_BYTES, gpu_name="H100", measured=MeasuredInputs())


def _routed(ledger: Ledger) -> int:
    return next(row.bytes for row in ledger.ranks[0].weights.rows if row.component == "routed_experts")


@pytest.mark.parametrize("release", ["0.15.0", "0.18.0"])
def test_turbomind_takes_an_ep_that_divides_tp(release: str) -> None:
    """tp 4, ep 2: parallel_config.py's mlp_tp = 2; each rank 64 experts each over 2 ranks = TP 4's share."""
    typed = _plan(["--backend", "turbomind", "--engine-version", release, "--tp", "4", "--ep", "2"])
    assert _routed(typed) == ROUTED_OVER_TP2 // 2 == 14_495_514_624
    assert typed.layout.ep == 2


def test_the_pytorch_engine_still_refuses_an_ep_inside_tp() -> None:
    """tp 4, ep 2 (0.15.0): DistConfig's world is 2 ranks, which the MLP's TP 4 does not divide: an assert."""
    with pytest.raises(InputError, match=r"^--ep: LMDeploy 0\.15\.0's PyTorch engine asserts at --tp 4 --dp 1 --ep 2"):
        _plan(["--backend", "pytorch", "--engine-version", "0.15.0", "--tp", "4", "--ep", "2"])


@pytest.mark.parametrize("flag", ["--ep", "--dp"])
def test_neither_ep_nor_dp_before_0_8(flag: str) -> None:
    """v0.7.3's cli/utils.py has no ArgumentHelper.ep or .dp (both first in v0.8.0: PRs #3313, #3207)."""
    with pytest.raises(InputError, match=rf"^{flag}: LMDeploy 0\.7\.3 has no {flag} \(from v0\.8\.0"):
        _plan(["--backend", "pytorch", "--engine-version", "0.7.3", "--tp", "2", flag, "2"])


@pytest.mark.parametrize("release", ["0.8.0", "0.10.2"])
def test_the_pytorch_engine_before_0_11_exits_at_dp_1(release: str) -> None:
    """v0.8.0 – v0.10.2 check_env/dist.py: 'ep>1 requires dp % ep == 0': at dp 1 every ep > 1 exits, ep == tp too."""
    with pytest.raises(InputError, match=r"exits: 'ep>1 requires dp % ep == 0\. Get dp=1 and ep=2\.'"):
        _plan(["--backend", "pytorch", "--engine-version", release, "--tp", "2", "--ep", "2"])


def test_the_pytorch_engine_before_0_11_takes_ep_equal_to_dp() -> None:
    """v0.10.2 at dp 2, ep 2, tp 1: DistChecker passes (2 % 2), a world of dp = 2 ranks, 64 of 128 experts each."""
    typed = _plan(["--backend", "pytorch", "--engine-version", "0.10.2", "--dp", "2", "--ep", "2"])
    assert _routed(typed) == ROUTED_OVER_TP2 == 28_991_029_248
    assert typed.layout.ep == 2


def test_turbomind_refuses_the_legacy_tp1_spelling() -> None:
    with pytest.raises(InputError, match=r"^--ep: TurboMind 0\.15\.0 finds no parallel layout .*'tp=N, ep=N'"):
        _plan(["--backend", "turbomind", "--engine-version", "0.15.0", "--tp", "1", "--ep", "8"])


def test_without_backend_an_ep_only_turbomind_takes_is_refused_where_the_model_runs_on_pytorch() -> None:
    """No --backend: check_parallel lets tp 4, ep 2 through (TurboMind takes it); the model's backend decides."""
    settings = parse_flags("lmdeploy", ["--model", "m", "--engine-version", "0.15.0", "--tp", "4", "--ep", "2"])
    check_parallel(settings)
    model = model_from_config(json.loads(QWEN3_NEXT.read_text()), source=QWEN3_NEXT.name)  # not TurboMind's class
    with pytest.raises(LayoutError, match=r"^--ep: LMDeploy 0\.15\.0's PyTorch engine asserts"):
        predict(model, settings, gpu_total_bytes=H100_BYTES, gpu_name="H100", measured=MeasuredInputs())


def test_turbomind_at_dp_with_ep_inside_the_ranks_is_not_modelled() -> None:
    """dp 2, tp 2, ep 2: parallel_config.py's one engine of 4 with mlp_tp 2: experts over ep × mlp_tp = 4 ranks,
    where kvtop's book splits them over max(tp, ep) = 2."""
    with pytest.raises(LayoutError, match=r"^--ep: not modelled: TurboMind splits the routed experts over ep 2"):
        _plan(["--backend", "turbomind", "--engine-version", "0.15.0", "--tp", "2", "--dp", "2", "--ep", "2"])


def test_turbomind_before_0_15_plans_ep_as_not_read_on_a_moe_model() -> None:
    """0.14.0's TurboMind takes no ep: dp 2 × tp 2 at ep 4 is two TP-2 replicas, 64 of 128 experts a rank (not the
    32 an EP of 4 would leave), and a size no expert count divides starts alike; the plan says so once."""
    for flags in (["--tp", "2", "--dp", "2", "--ep", "4"], ["--tp", "2", "--ep", "7"]):
        typed = _plan(["--backend", "turbomind", "--engine-version", "0.14.0", *flags])
        assert _routed(typed) == ROUTED_OVER_TP2 == 28_991_029_248
        assert typed.layout.ep == 1
        said = [note for note in typed.engine.notes if "not read" in note and "--ep" in note]
        assert len(said) == 1 and "TurboMind 0.14.0 takes no ep" in said[0]


@pytest.mark.parametrize(
    ("release", "fix"), [("0.7.3", None), ("0.8.0", None), ("0.10.2", None), ("0.11.0", "--tp 2 --dp 2")]
)
def test_the_layout_advice_writes_dp_only_where_turbomind_runs_it(release: str, fix: str | None) -> None:
    """Qwen2.5-1.5B (2 KV heads, TurboMind's class) at tp 4 holds each head on 2 ranks; tp 2 × dp 2 is the advice
    from v0.11.0, whose cli/serve.py first passes dp to TurbomindEngineConfig. v0.7.3's argparse has no --dp, v0.8.0
    ignores it for TurboMind, v0.9.0 – v0.10.2's launch_server.py asserts: nothing is advised there."""
    from kvtop.domain.diagnose import diagnose_ledger

    config = DATA / "calibration" / "configs" / "Qwen--Qwen2.5-1.5B-Instruct.RECONSTRUCTED.json"
    model = model_from_config(json.loads(config.read_text()), source=config.name)
    settings = parse_flags("lmdeploy", ["--model", "m", "--engine-version", release, "--tp", "4"])
    ledger = predict(model, settings, gpu_total_bytes=H100_BYTES, gpu_name="H100", measured=MeasuredInputs())
    finding = next(f for f in diagnose_ledger(ledger) if f.rule == "tp_above_kv_heads")
    assert finding.fix == fix if fix else "--dp" not in finding.fix


@pytest.mark.parametrize(
    ("release", "why"),
    [("0.7.3", "--tp 2 --dp 2: LMDeploy 0.7.3 has no --dp"),
     ("0.8.0", "--tp 2 --dp 2: not modelled: TurboMind 0.8.0 never reads --dp 2"),
     ("0.10.2", "--tp 2 --dp 2: TurboMind 0.10.2 exits at --dp 2")],
)  # fmt: skip
def test_the_layout_finding_gives_the_releases_reason_not_the_weights(release: str, why: str) -> None:
    """Qwen2.5-1.5B (3.1 GB of bf16 weights) fits one 80 GiB H100 many times over: TP4 is not needed for the weights.
    What keeps the 2 KV heads copied at tp 4 is the release: v0.7.3's cli/utils.py has no --dp, v0.8.0's cli/serve.py
    passes dp to the PyTorch engine only, v0.9.0 – v0.10.2's launch_server.py asserts for TurboMind."""
    from kvtop.domain.diagnose import diagnose_ledger

    config = DATA / "calibration" / "configs" / "Qwen--Qwen2.5-1.5B-Instruct.RECONSTRUCTED.json"
    model = model_from_config(json.loads(config.read_text()), source=config.name)
    settings = parse_flags("lmdeploy", ["--model", "m", "--engine-version", release, "--tp", "4"])
    ledger = predict(model, settings, gpu_total_bytes=H100_BYTES, gpu_name="H100", measured=MeasuredInputs())
    finding = next(f for f in diagnose_ledger(ledger) if f.rule == "tp_above_kv_heads")
    assert finding.fix == f"none on LMDeploy {release}: it runs no attention TP 2 over these GPUs"
    assert "weights" not in finding.fix and finding.summary.endswith("no better layout runs")
    assert any(line.startswith(why) for line in finding.evidence)


@pytest.mark.parametrize(
    ("release", "words"),
    [("0.8.0", "^--dp: not modelled: TurboMind 0\\.8\\.0 never reads --dp 2"),
     ("0.10.2", "^--dp: TurboMind 0\\.10\\.2 exits at --dp 2 .*'only support dp > 1, but give dp=1'")],
)  # fmt: skip
def test_turbomind_dp_before_0_11(release: str, words: str) -> None:
    """cli/serve.py v0.8.0 passes dp to PytorchEngineConfig only (one TurboMind engine); v0.9.0 – v0.10.2 run
    launch_server.py at dp > 1, whose `assert dp > 1` reads TurbomindEngineConfig.dp, never set (1)."""
    with pytest.raises(InputError, match=words):
        _plan(["--backend", "turbomind", "--engine-version", release, "--dp", "2"])
    typed = _plan(["--backend", "turbomind", "--engine-version", "0.11.0", "--dp", "2"])
    assert typed.layout.dp == 2


@pytest.mark.parametrize(
    ("flags", "words"),
    [(["--dp", "2"], "exits at --tp 1 --dp 2 without --ep: 'only support tp > 1 or ep > 1'")],
)  # fmt: skip
def test_the_pytorch_engine_runs_dp_as_one_world(flags: list[str], words: str) -> None:
    """0.16.0 cli/serve.py sends --dp 2 to serve/openai/launch_server.py, which asserts tp > 1 or ep > 1 (the worlds
    it does start: test_pytorch_world.py)."""
    with pytest.raises(InputError, match=words):
        _plan(["--backend", "pytorch", "--engine-version", "0.16.0", *flags])
