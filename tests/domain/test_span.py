"""Which engine a launch on one node belongs to (`kvtop.domain.span`), read from real launch commands.

The commands are the engines' own documented ones: SGLang's two-node TP16 launch (the deploy script of
shenpeijun0212/S-GRPO `deploy_dpsk/serving.sh`, as in SGLang's multi-node docs), vLLM's multiprocessing
multi-node example (vllm-project/vllm docs/serving/parallelism_scaling.md, "Running vLLM with
MultiProcessing"), and NVIDIA Dynamo's disaggregated examples (ai-dynamo/dynamo
examples/backends/sglang/launch/disagg.sh and examples/backends/vllm/launch/disagg.sh).
"""

from __future__ import annotations

from kvtop.domain.launch_line import parse_launch_command
from kvtop.domain.placement import span_of
from kvtop.domain.span import ServingRole


def span(command: str):  # type: ignore[no-untyped-def]
    settings = parse_launch_command(command)
    assert settings is not None, command
    return span_of(settings.engine, settings)


SGLANG_TP16 = (
    "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-R1 --tp 16 "
    "--dist-init-addr 10.0.0.1:5000 --nnodes 2 --trust-remote-code --node-rank {rank}"
)
VLLM_PP2 = (
    "vllm serve /path/to/the/model/in/the/container --tensor-parallel-size 8 --pipeline-parallel-size 2 "
    "--nnodes 2 --node-rank {rank} --master-addr 10.0.0.1{headless}"
)
DYNAMO_SGLANG = (
    "python3 -m dynamo.sglang --model-path Qwen/Qwen3-0.6B --served-model-name Qwen/Qwen3-0.6B --page-size 16 "
    "--tp 1 --trust-remote-code --disaggregation-mode {mode} --disaggregation-bootstrap-port 12345 "
    "--host 0.0.0.0 --disaggregation-transfer-backend nixl --enable-metrics"
)
DYNAMO_VLLM = (
    "python3 -m dynamo.vllm --model Qwen/Qwen3-0.6B --enforce-eager --disaggregation-mode {mode} "
    """--kv-transfer-config '{{"kv_connector":"NixlConnector","kv_role":"kv_both"}}'"""
)


def test_the_two_nodes_of_an_sglang_tp16_engine_are_one_engine() -> None:
    head, other = span(SGLANG_TP16.format(rank=0)), span(SGLANG_TP16.format(rank=1))
    assert head.join_key("node-a/sglang:1") == other.join_key("node-b/sglang:7")
    assert (head.nnodes, head.node_rank, other.node_rank) == (2, 0, 1)
    assert head.rendezvous == "10.0.0.1:5000" and head.served_model == "deepseek-ai/DeepSeek-R1"
    # only node rank 0 runs SGLang's tokenizer and HTTP API (engine.py `_launch_subprocesses`)
    assert head.serves_api and not other.serves_api


def test_another_rendezvous_is_another_engine() -> None:
    first = span(SGLANG_TP16.format(rank=0))
    second = span(SGLANG_TP16.format(rank=0).replace("10.0.0.1:5000", "10.0.0.3:5000"))
    assert first.join_key("a/x") != second.join_key("a/x")


def test_a_one_node_engine_is_joined_with_nothing() -> None:
    alone = span("python3 -m sglang.launch_server --model-path meta-llama/Meta-Llama-3-70B-Instruct --tp 8")
    assert not alone.spans_nodes
    assert alone.join_key("node-a/sglang:41000") != alone.join_key("node-b/sglang:41000")


def test_vllm_multiprocessing_over_two_nodes_headless_worker() -> None:
    head = span(VLLM_PP2.format(rank=0, headless=""))
    worker = span(VLLM_PP2.format(rank=1, headless=" --headless"))
    assert head.join_key("a/vllm:1") == worker.join_key("b/vllm:2")
    assert head.serves_api and not worker.serves_api
    assert worker.rendezvous == "10.0.0.1"


def test_vllm_data_parallel_over_nodes() -> None:
    """vLLM's multi-node DP example: DP 4 with 2 local engine cores per node, the second node headless."""
    command = ("vllm serve deepseek-ai/DeepSeek-V3 --data-parallel-size 4 --data-parallel-size-local 2 "
               "--data-parallel-start-rank {start} --data-parallel-address 10.99.48.128 --data-parallel-rpc-port 13345{h}")
    head, other = span(command.format(start=0, h="")), span(command.format(start=2, h=" --headless"))
    assert (head.nnodes, head.node_rank, other.node_rank) == (2, 0, 1)
    assert head.join_key("a/v:1") == other.join_key("b/v:2")
    assert not other.serves_api


def test_dynamo_sglang_prefill_and_decode_pair_over_nixl() -> None:
    prefill, decode = span(DYNAMO_SGLANG.format(mode="prefill")), span(DYNAMO_SGLANG.format(mode="decode"))
    assert (prefill.role, decode.role) == (ServingRole.PREFILL, ServingRole.DECODE)
    assert prefill.transfer == decode.transfer == "NIXL"
    assert prefill.pair_key == decode.pair_key == ("disaggregated", "Qwen/Qwen3-0.6B")


def test_dynamo_vllm_roles_and_connector() -> None:
    prefill, decode = span(DYNAMO_VLLM.format(mode="prefill")), span(DYNAMO_VLLM.format(mode="decode"))
    assert (prefill.kind, prefill.role, decode.role) == ("vllm", ServingRole.PREFILL, ServingRole.DECODE)
    assert prefill.transfer == "NIXL"
    assert prefill.pair_key == decode.pair_key


def test_sglang_pd_without_a_backend_uses_mooncake() -> None:
    """ServerArgs.disaggregation_transfer_backend defaults to "mooncake"."""
    prefill = span("python -m sglang.launch_server --model-path m --disaggregation-mode prefill")
    assert prefill.transfer == "Mooncake"
    assert span("python -m sglang.launch_server --model-path m").transfer is None


def test_unreadable_node_flags_are_said_not_guessed() -> None:
    bad = span(SGLANG_TP16.format(rank="one"))
    assert bad.not_modelled is not None and "--node-rank" in bad.not_modelled
    assert not bad.spans_nodes
    no_address = span("python -m sglang.launch_server --model-path m --tp 16 --nnodes 2 --node-rank 1")
    assert no_address.not_modelled is not None and "--dist-init-addr" in no_address.not_modelled
    ray = span("vllm serve m --tensor-parallel-size 16 --distributed-executor-backend ray")
    assert ray.not_modelled is not None and "Ray" in ray.not_modelled
    lmdeploy = span("lmdeploy serve api_server m --backend pytorch --tp 16 --nnodes 2 --node-rank 0")
    assert lmdeploy.not_modelled is not None and not lmdeploy.spans_nodes
