"""`kvtop plan` with the deployment beside the model (issue 30): the terms in text and JSON, --host-cache in
the engine's own flags, the headroom finding, and bad input naming its flag (exit 2, one line)."""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from kvtop.domain.diagnose import diagnose_ledger
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_model


def _plan(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["plan", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_plan_json_carries_every_term_and_the_host_tier(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _plan(capsys, "--model", "llama-3-70b", "--tp", "8", "--engine", "vllm", "--gpu", "H100",
                         "--host-cache", "200GiB", "--enable-lora", "--max-loras", "4", "--max-lora-rank", "64", "--json")  # fmt: skip
    assert code == 0
    data = json.loads(out)
    deployment = data["deployment"]
    assert deployment["features"] == ["lora", "host_kv"]
    (lora,) = deployment["terms"]
    # Llama-3-70B at TP8: per layer and slot, qkv A 3·64·8192 + B (1024 + 2·128)·64, o A 64·1024 + B 8192·64,
    # gate_up A 2·64·8192 + B 2·3584·64, down A 64·3584 + B 8192·64; 4 slots, 80 layers, bf16
    per_layer = (3 * 64 * 8192 + (1024 + 2 * 128) * 64) + (64 * 1024 + 8192 * 64) + (2 * 64 * 8192 + 2 * 3584 * 64) \
        + (64 * 3584 + 8192 * 64)  # fmt: skip
    assert lora["bytes"] == 4 * 2 * 80 * per_layer
    assert (lora["feature"], lora["charge"], lora["state"], lora["basis"]) == ("lora", "resident", "modelled", "computed")
    assert data["ranks"][0]["resident_terms_bytes"] == lora["bytes"]
    host = deployment["host_tier"]
    assert host["bytes_per_rank"] == 25 * GIB and host["total_bytes"] == 200 * GIB
    # each flag once, the switch bare (was every deployment flag twice, and '--enable-lora True': vLLM's argparse
    # takes a switch alone)
    assert data["engine_flags"] == ["--tensor-parallel-size", "8", "--enable-lora", "--kv-offloading-size", "200",
                                    "--max-lora-rank", "64", "--max-loras", "4"]  # fmt: skip
    assert deployment["headroom"]["short_bytes"] == 0


def test_plan_text_names_each_term_and_how_it_is_charged(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _plan(capsys, "--model", "qwen3-235b-a22b", "--tp", "8", "--ep-size", "8", "--gpu", "H200",
                         "--speculative-algorithm", "EAGLE3", "--draft-model", "qwen3-235b-a22b-eagle3",
                         "--ep-num-redundant-experts", "16")  # fmt: skip
    assert code == 0
    assert "Beside the model (tightest rank)" in out
    beside = out[out.index("Beside the model"):].split("\n\n")[0]
    assert "  expert parallel redundant experts" in beside and "expert_parallel" not in beside  # words; keys: --json
    assert "draft weights (qwen3-235b-a22b-eagle3, 1 layer)" in out and "before the pool  computed" in out
    assert "redundant experts: 16 over 8 ranks" in out
    assert "− redundant experts: 16 over 8 ranks" in out  # a line of the budget too
    assert "--speculative-draft-model-path qwen3-235b-a22b-eagle3" in out  # the draft written in SGLang's flags


def test_eagle3_with_no_draft_named_keeps_the_target_cell_and_names_the_draft_kv(capsys: pytest.CaptureFixture[str]) -> None:
    """SGLang takes the draft's path from the model only for its MTP architectures (server_args.py, read at
    0.5.6.post2): for Llama the draft's layers are unknown, so its KV is named not modelled, never a silent 0."""
    code, out, _ = _plan(capsys, "--model", "llama-3-70b", "--tp", "8", "--speculative-algorithm", "EAGLE3", "--json")
    assert code == 0
    data = json.loads(out)
    # 80 layers × (8 KV heads ÷ 8) × 128 × 2 (K, V) × 2 B: the target's cell alone
    assert data["kv_bytes_per_token"] == 80 * 1 * 128 * 2 * 2 == 40_960
    states = {(t["label"], t["charge"]): t["state"] for t in data["deployment"]["terms"]}
    assert states[("draft KV", "kv_cell")] == "not_modelled"
    assert states[("draft weights", "resident")] == "not_modelled"


def test_headroom_short_is_found_before_the_oom() -> None:
    # SGLang v0.5.14's automatic share keeps nothing for DeepEP's buffers; v0.5.15 added 2 GiB for them
    model = load_model("qwen3-235b-a22b")
    flags = ["--tp-size", "8", "--ep-size", "8", "--moe-a2a-backend", "deepep", "--engine-version", "0.5.14"]
    ledger = predict(model, parse_flags("sglang", flags, strict=True), gpu_total_bytes=81559 << 20, gpu_name="H100")
    (finding,) = [f for f in diagnose_ledger(ledger) if f.rule == "headroom_short"]
    assert finding.bytes == 2048 << 20
    assert finding.fix.startswith("--mem-fraction-static 0.") and finding.gain_tokens < 0
    fixed = finding.fix_settings
    assert fixed is not None
    again = predict(model, fixed, gpu_total_bytes=81559 << 20, gpu_name="H100")
    assert not [f for f in diagnose_ledger(again) if f.rule == "headroom_short"]
    # the reserve the fixed share leaves holds the engine's own need and the buffers
    assert again.engine.reserve_bytes >= ledger.engine.reserve_bytes + (2048 << 20)


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["--speculative-algorithm", "WARP"], "--speculative-algorithm"),
        (["--host-cache", "lots"], "--host-cache"),
        (["--draft-model", "llama-3.1-8b"], "--draft-model"),
        (["--engine", "lmdeploy", "--host-cache", "1TiB"], "--host-cache"),
    ],
)
def test_bad_deployment_input_exits_2_naming_the_flag(
    capsys: pytest.CaptureFixture[str], argv: list[str], flag: str
) -> None:
    code, out, err = _plan(capsys, "--model", "llama-3.1-8b", *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and f"{flag}:" in err and "Traceback" not in err


def test_a_not_modelled_term_is_explained_once(capsys: pytest.CaptureFixture[str]) -> None:
    """vLLM DP replicas of a MoE model on H100 PCIe (the gathered batch is priced on one NVLink node only): not
    priced (vllm/dp_dispatch.py); its row says 'not modelled' and the 'note: not modelled' line says why, once (the
    table printed the same sentence above it too)."""
    config = "tests/data/calibration/configs/Qwen--Qwen3-Coder-30B-A3B-Instruct.json"
    code, out, _ = _plan(capsys, "--model", config, "--engine", "vllm", "--dp", "2", "--gpu", "H100-PCIE")
    assert code == 0
    beside = out[out.index("Beside the model"):].split("\n\n")[0]
    row = next(line for line in beside.splitlines() if "MoE batch gathered over 2 DP ranks" in line)
    assert "not modelled" in row and row == row.rstrip()
    assert out.count("gathers every DP rank's batch into each MoE layer") == 1
    assert "note: not modelled: MoE batch gathered over 2 DP ranks in the profile run (--data-parallel-size 2)" in out
