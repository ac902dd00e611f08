"""TensorRT-LLM's spellings: every option `trtllm-serve serve --help` lists is accepted as typed, another
engine's flag is refused naming TensorRT-LLM's own, a pasted launch (`--cmd`) is read, and the
`--extra_llm_api_options` YAML's keys reach the settings (the YAML wins, as in trtllm-serve)."""

from __future__ import annotations

import pytest

from kvtop.domain.engines.trtllm.flags import settings_with_options
from kvtop.domain.errors import InputError
from kvtop.domain.launch import check_parallel, parse_flags
from kvtop.domain.launch_line import parse_launch_command

# tensorrt_llm/commands/serve.py, `serve`'s click options (each with a value where it takes one)
SERVE_OPTIONS = [
    ("--tokenizer", "/models/tok"),
    ("--custom_tokenizer", "deepseek_v32"),
    ("--host", "0.0.0.0"),
    ("--port", "8001"),
    ("--backend", "pytorch"),
    ("--custom_module_dirs", "/mods"),
    ("--log_level", "info"),
    ("--max_beam_width", "1"),
    ("--max_batch_size", "64"),
    ("--max_num_tokens", "8192"),
    ("--max_seq_len", "32768"),
    ("--tensor_parallel_size", "2"),
    ("--tp_size", "2"),
    ("--pipeline_parallel_size", "1"),
    ("--pp_size", "1"),
    ("--context_parallel_size", "1"),
    ("--cp_size", "1"),
    ("--moe_expert_parallel_size", "1"),
    ("--ep_size", "1"),
    ("--moe_cluster_parallel_size", "1"),
    ("--cluster_size", "1"),
    ("--gpus_per_node", "8"),
    ("--free_gpu_memory_fraction", "0.85"),
    ("--kv_cache_free_gpu_memory_fraction", "0.85"),
    ("--num_postprocess_workers", "0"),
    ("--trust_remote_code", None),
    ("--revision", "main"),
    ("--config", "/nonexistent/extra.yaml"),
    ("--extra_llm_api_options", "/nonexistent/extra.yaml"),
    ("--reasoning_parser", "deepseek-r1"),
    ("--tool_parser", "qwen3"),
    ("--metadata_server_config_file", "/etc/meta.yaml"),
    ("--server_role", "context"),
    ("--fail_fast_on_attention_window_too_large", None),
    ("--otlp_traces_endpoint", "http://otel:4317"),
    ("--disagg_cluster_uri", "etcd://h:2379"),
    ("--enable_chunked_prefill", None),
    ("--media_io_kwargs", "{}"),
    ("--chat_template", "/t.jinja"),
]


@pytest.mark.parametrize(("flag", "value"), SERVE_OPTIONS, ids=[flag for flag, _ in SERVE_OPTIONS])
def test_every_trtllm_serve_option_is_accepted_as_typed(flag: str, value: str | None) -> None:
    settings = parse_flags("trtllm", [flag] if value is None else [flag, value], strict=True)
    assert settings.engine == "trtllm"


def test_the_fields_kvtop_models_are_read_from_their_trtllm_serve_spelling() -> None:
    flags = [
        "--tp_size",
        "4",
        "--pp_size",
        "2",
        "--ep_size",
        "2",
        "--kv_cache_free_gpu_memory_fraction",
        "0.85",
        "--max_batch_size",
        "64",
        "--max_num_tokens",
        "4096",
        "--max_seq_len",
        "32768",
        "--backend",
        "trt",
        "--max_beam_width",
        "2",
    ]
    s = parse_flags("trtllm", flags, strict=True)
    assert (s.tp, s.pp, s.ep, s.free_gpu_memory_fraction) == (4, 2, 2, 0.85)
    assert (s.max_running_requests, s.max_num_batched_tokens, s.context_length) == (64, 4096, 32768)
    assert (s.backend, s.max_beam_width) == ("trt", 2)
    assert s.to_flags()[:2] == ["--tp_size", "4"] and "--kv_cache_free_gpu_memory_fraction" in s.to_flags()


@pytest.mark.parametrize(
    ("flag", "reason"),
    [
        ("--max-model-len", "is vLLM's flag: TensorRT-LLM spells it --max_seq_len"),
        ("--block-size", "is vLLM's flag: TensorRT-LLM spells it --kv_cache_config.tokens_per_block"),
        ("--max-num-seqs", "is vLLM's flag: TensorRT-LLM spells it --max_batch_size"),
        ("--kv-cache-dtype", "is SGLang's flag: TensorRT-LLM spells it --kv_cache_config.dtype"),
        ("--context-length", "is SGLang's flag: TensorRT-LLM spells it --max_seq_len"),
        ("--mem-fraction-static", "is SGLang's flag: TensorRT-LLM has no such setting"),
        ("--gpu-memory-utilization", "is vLLM's flag: TensorRT-LLM has no such setting"),
    ],
)
def test_another_engines_flag_is_refused_naming_tensorrt_llms_spelling(flag: str, reason: str) -> None:
    with pytest.raises(InputError, match=f"^{flag}: {reason}$"):
        parse_flags("trtllm", [flag, "1"], strict=True)


def test_tensorrt_llms_flag_given_to_another_engine_names_that_engines_spelling() -> None:
    with pytest.raises(
        InputError, match="^--tp_size: is TensorRT-LLM's flag: vLLM spells it --tensor-parallel-size$"
    ):
        parse_flags("vllm", ["--tp_size", "2"], strict=True)


@pytest.mark.parametrize(
    ("command", "model", "tp"),
    [
        ("trtllm-serve openai/gpt-oss-120b --tp_size 4 --max_batch_size 64", "openai/gpt-oss-120b", 4),
        ("trtllm-serve serve Qwen/Qwen3-8B --tp_size 2", "Qwen/Qwen3-8B", 2),
        ("/usr/local/bin/trtllm-serve /engines/llama --backend tensorrt", "/engines/llama", 1),
        (
            "python3 -m tensorrt_llm.commands.serve meta-llama/Llama-3.1-8B --pp_size 2",
            "meta-llama/Llama-3.1-8B",
            1,
        ),
        (
            "python3 -m dynamo.trtllm --model-path deepseek-ai/DeepSeek-R1 --tensor-parallel-size 8",
            "deepseek-ai/DeepSeek-R1",
            8,
        ),
    ],
)
def test_a_pasted_launch_is_read_as_tensorrt_llm(command: str, model: str, tp: int) -> None:
    settings = parse_launch_command(command)
    assert settings is not None and (settings.engine, settings.model, settings.tp) == ("trtllm", model, tp)


def test_the_yaml_kv_cache_config_reaches_the_settings_and_wins_over_the_command_line() -> None:
    """docs/engines/trtllm.md §3, §6; serve.py: `update_llm_args_with_extra_dict(llm_args, yaml)`."""
    launched = parse_launch_command("trtllm-serve M --tp_size 8 --kv_cache_free_gpu_memory_fraction 0.9")
    assert launched is not None
    options = {
        "kv_cache_config": {
            "free_gpu_memory_fraction": 0.8,
            "max_tokens": 200000,
            "max_gpu_total_bytes": 0,
            "dtype": "fp8",
            "tokens_per_block": 64,
            "enable_block_reuse": False,
        },
        "enable_attention_dp": True,
        "max_batch_size": 256,
        "disable_overlap_scheduler": True,
    }
    s = settings_with_options(launched, options, "extra.yaml")
    assert (s.free_gpu_memory_fraction, s.kv_cache_max_tokens, s.max_gpu_total_bytes) == (0.8, 200_000, None)
    assert (s.kv_cache_dtype, s.page_size, s.max_running_requests) == ("fp8", 64, 256)
    assert (s.enable_dp_attention, s.dp, s.tp) == (True, 8, 8)  # attention DP: every TP rank its own pool
    assert (
        s.flags["kv_cache_config.enable_block_reuse"] is False
        and s.flags["disable_overlap_scheduler"] is True
    )
    check_parallel(s)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"kv_cache_config": {"free_gpu_memory_fraction": "lots"}},
            "kv_cache_config.free_gpu_memory_fraction: expected float",
        ),
        (
            {"kv_cache_config": {"dtype": "int4"}},
            "kv_cache_config.dtype: TensorRT-LLM has no KV cache dtype 'int4'",
        ),
        ({"kv_cache_config": {"free_gpu_memory_fraction": 1.5}}, "must be in \\(0, 1\\]"),
        ({"max_batch_size": True}, "max_batch_size: expected int"),
    ],
)
def test_a_bad_yaml_value_names_its_key_and_the_file(options: dict[str, object], message: str) -> None:
    with pytest.raises(InputError, match=message) as raised:
        settings_with_options(parse_flags("trtllm", []), options, "/etc/trtllm/extra.yaml")
    assert "/etc/trtllm/extra.yaml" in str(raised.value)


def test_attention_dp_typed_without_its_dp_says_what_to_add() -> None:
    settings = parse_flags("trtllm", ["--tp_size", "8", "--enable_attention_dp"], strict=True)
    with pytest.raises(InputError, match="add --dp 8"):
        check_parallel(settings)


def test_an_options_file_too_large_is_refused_in_words_the_redactor_leaves_whole(tmp_path, capsys) -> None:
    """5,000 settings > the 4,096 kvtop reads: the CLI's error must show the count and the file's kind.
    Worded "5,000 keys: not an …" the redactor took `keys:` for a secret's name and printed "*** an …"."""
    from kvtop.cli import main
    from kvtop.domain.secret_text import redact_text

    path = tmp_path / "big.yaml"
    path.write_text("".join(f"k{i}: {i}\n" for i in range(5000)))
    cmd = f"trtllm-serve meta-llama/Meta-Llama-3-70B-Instruct --tp_size 8 --extra_llm_api_options {path}"
    assert main(["plan", "--cmd", cmd, "--gpu", "H100"]) == 2
    err = capsys.readouterr().err
    assert "***" not in err
    assert "YAML: 5,000 settings, more than any --extra_llm_api_options file holds (kvtop reads at most 4,096)" in err
    assert redact_text("API_KEYS=abc123def") == "API_KEYS=***"  # the redactor was not taught to let keys through
