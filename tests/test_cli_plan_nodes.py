"""`kvtop plan` across nodes: `--nodes`, a launch's own `--nnodes`, and `--layouts` side by side."""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from tests.conftest import CONFIGS, SAMPLES

DEEPSEEK = str(CONFIGS / "deepseek-ai--DeepSeek-V3.json")
SERVER_INFO = SAMPLES / "sglang_server_info" / "sglang-0.5.9-deepseek-r1-tp16-2node-pd-prefill-trimmed.json"


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["plan", "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_two_node_prefill_server_of_deepseek_r1_as_sglang_0_5_9_reported_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The launch rebuilt from a real `/get_server_info` of a TP16 prefill server over two 8×H100 nodes
    (its own tp_size, nnodes, node_rank, mem_fraction_static, page_size, chunked prefill, disaggregation
    mode; the rendezvous address is not in the trimmed answer, so one is made up): its ranks split 8 and 8,
    and the KV bytes per token per rank are what its pool and token count say (21.35 GiB, printed to two
    decimals, over 326,223 tokens)."""
    info = json.loads(SERVER_INFO.read_text())
    command = (
        f"python3 -m sglang.launch_server --model-path {info['model_path']} --tp-size {info['tp_size']} "
        f"--nnodes {info['nnodes']} --node-rank {info['node_rank']} --dist-init-addr {info['host']}:5000 "
        f"--mem-fraction-static {info['mem_fraction_static']} --page-size {info['page_size']} "
        f"--chunked-prefill-size {info['chunked_prefill_size']} --max-prefill-tokens {info['max_prefill_tokens']} "
        f"--disaggregation-mode {info['disaggregation_mode']}"
    )
    out = run_json(capsys, "--cmd", command, "--model", DEEPSEEK, "--gpu", "H100")
    placement = out["placement"]
    assert (placement["nodes"], placement["ranks_per_node"]) == (2, 8)
    assert [n["label"] for n in placement["by_node"]] == ["TP0–TP7", "TP8–TP15"]
    usage = info["internal_states"][0]["memory_usage"]
    tokens = info["max_total_num_tokens"]
    low, high = (usage["kvcache"] - 0.005) * 2**30 / tokens, (usage["kvcache"] + 0.005) * 2**30 / tokens
    assert low <= out["kv_bytes_per_token"] <= high


def test_nodes_in_the_text_and_how_ranks_on_different_nodes_size(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--model", DEEPSEEK, "--tp", "16", "--gpu", "H20", "--nodes", "2"]) == 0
    text = capsys.readouterr().out
    assert "Nodes: 2 nodes × 8 GPUs — node 0: ranks 0–7 (TP0–TP7) · node 1: ranks 8–15 (TP8–TP15)" in text
    assert "every rank is sized from the least free GPU of its 2 nodes" in text


def test_two_by_eight_h20_at_tp16_against_four_by_eight_at_tp8_dp4(capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's question. Each layout's per-rank figures are the plain plan's of that layout; a pool per
    DP replica; DeepSeek-V3's 61 layers × (512 + 64) × 2 B = 70,272 B of MLA latent per token on every rank."""
    out = run_json(capsys, "--model", DEEPSEEK, "--gpu", "H20", "--layouts", "2x8 tp16", "4x8 tp8 dp4")
    tp16 = run_json(capsys, "--model", DEEPSEEK, "--gpu", "H20", "--tp", "16")
    tp8 = run_json(capsys, "--model", DEEPSEEK, "--gpu", "H20", "--tp", "8")
    first, second = out["layouts"]
    assert (first["layout"], first["pools"], first["gpus"], first["gpus_idle"]) == ("2x8 tp16", 1, 16, 0)
    assert (second["pools"], second["gpus"]) == (4, 32)
    assert first["kv_bytes_per_token"] == second["kv_bytes_per_token"] == 61 * (512 + 64) * 2
    assert first["token_capacity"] == tp16["token_capacity"] and first["fits"] is tp16["fits"] is True
    assert second["token_capacity"] == tp8["token_capacity"] and second["fits"] is tp8["fits"]
    assert first["deployment_tokens"] == first["token_capacity"]
    assert second["deployment_tokens"] == 4 * second["token_capacity"]
    assert first["full_context_requests"] == pytest.approx(first["token_capacity"] / out["context_length"])
    assert [n["label"] for n in second["placement"]["by_node"]] == [f"DP{d} TP0–TP7" for d in range(4)]


def test_a_size_a_layout_leaves_out_is_the_launchs(capsys: pytest.CaptureFixture[str]) -> None:
    """`--layouts 1x8 --tp 2` was solved at TP1, the --tp neither read nor said (session 65's operator walk): a size
    the layout does not state is the launch's, as `plan --tp 2` solves it; one it states is its own."""
    out = run_json(capsys, "--model", DEEPSEEK, "--gpu", "H20", "--layouts", "2x8", "1x8 tp8", "--tp", "16")
    tp16 = run_json(capsys, "--model", DEEPSEEK, "--gpu", "H20", "--tp", "16")
    tp8 = run_json(capsys, "--model", DEEPSEEK, "--gpu", "H20", "--tp", "8")
    inherited, stated = out["layouts"]
    assert (inherited["gpus"], inherited["token_capacity"]) == (16, tp16["token_capacity"])
    assert (stated["gpus"], stated["token_capacity"]) == (8, tp8["token_capacity"])


def test_a_layout_that_cannot_run_is_a_row_that_says_why(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_json(capsys, "--model", DEEPSEEK, "--gpu", "H20", "--layouts", "2x8 tp16", "3x8 tp16")
    assert out["layouts"][0]["error"] is None
    assert "do not split evenly over 3 nodes" in out["layouts"][1]["error"]


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["--layouts", "tp16"], "--layouts"),
        (["--layouts", "2x8 tp16 xx4"], "--layouts"),
        (["--layouts", "2x8 tp16", "--nodes", "2"], "--nodes"),
        (["--tp", "16", "--nodes", "3"], "--nodes"),
        (["--tp", "16", "--nodes", "2", "--gpus-per-node", "4"], "--gpus-per-node"),
        (["--tp", "16", "--nodes", "2", "--gpus-per-node", "0"], "--gpus-per-node"),
        (["--tp", "16", "--nodes", "0"], "--nodes"),
        (["--tp", "16", "--nodes", "2", "--engine", "lmdeploy"], "--nodes"),
    ],
)
def test_bad_node_input_is_one_line_naming_the_flag(
    args: list[str], field: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plan", "--model", DEEPSEEK, "--gpu", "H20", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and field in err and "Traceback" not in err


LLAMA_70B_HEADS = 64  # config.json's num_attention_heads of Llama-3-70B (examples/models/llama-3-70b.json)


@pytest.mark.parametrize(("args", "said"), [
    # more ranks per node than the node has GPUs is named by the GPU count, before the heads are checked
    (["--tp", "128", "--nodes", "1", "--gpus-per-node", "8"],
     "--gpus-per-node: SGLang would run 128 ranks on each of 1 nodes, which have 8 GPUs"),
    # a product of capped sizes beyond the most kvtop plans: the GPUs it would take
    # (TP 64 over 64 heads and PP 80 over 80 layers each fit the model: only their product does not)
    (["--tp", "64", "--pp", "80", "--dp", "2"], "--tp: TP64 PP80 DP2 is 10,240 GPUs: kvtop plans at most 4,096"),
])  # fmt: skip
def test_a_huge_layout_is_named_by_its_gpus(args: list[str], said: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--model", "llama-3-70b", "--gpu", "H100", *args]) == 2
    assert capsys.readouterr().err.strip() == f"kvtop: error: {said}"


def test_a_tp_above_the_heads_says_it_has_more_ranks_than_heads(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--model", "llama-3-70b", "--gpu", "H100", "--tp", "4096"]) == 2
    err = capsys.readouterr().err
    assert (f"--tp: {LLAMA_70B_HEADS} attention heads do not divide over attention TP 4096: more ranks than heads "
            "(a layout of 4,096 GPUs)") in err
    assert main(["plan", "--model", "llama-3-70b", "--gpu", "H100", "--layouts", "1x8 tp128"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("  1x8 tp128"))
    assert row.endswith("--gpus-per-node: SGLang would run 128 ranks on each of 1 nodes, which have 8 GPUs")


def test_a_layout_with_every_default_says_it_takes_no_flags(capsys: pytest.CaptureFixture[str]) -> None:
    """Session 67's walk: the '1x8' layout (TP1, every default) ended its lines with a bare 'flags: '."""
    assert main(["plan", "--model", str(CONFIGS / "meta-llama--Llama-3.1-8B.json"), "--gpu", "H100",
                 "--layouts", "1x8", "1x8 tp2 dp4"]) == 0  # fmt: skip
    flags = [line.strip() for line in capsys.readouterr().out.splitlines() if line.strip().startswith("flags:")]
    assert flags == ["flags: none: the engine's defaults", "flags: --tp-size 2 --dp-size 4"]
