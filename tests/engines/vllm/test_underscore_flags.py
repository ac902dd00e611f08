"""vLLM reads `--a_b` as `--a-b`: FlexibleArgumentParser.parse_args rewrites every `--` option's name up to its
first "." with "_" as "-" before argparse matches it (vllm/utils/argparse_utils.py, read at v0.13.0 and v0.33.0).

The held-out start that showed it (tests/data/calibration/vllm.jsonl, file34681159919-qwen3-8b-fp8-4090-v0102): a
v0.10.2 `vllm serve … --gpu_memory_utilization 0.8` whose log says `Requested memory: 0.80 (util), 18.82 GiB`
and `Available KV cache memory: 8.60 GiB`, `GPU KV cache size: 62,608 tokens`. kvtop ignored the flag and planned
vLLM's default 0.9 (78,784 tokens, +25.8 %)."""

from __future__ import annotations

from kvtop.domain.launch import parse_flags
from kvtop.domain.launch_line import parse_launch_command

LAUNCH = (
    "vllm serve /home/lz/models/Qwen3-8B-FP8 --trust_remote_code --dtype float16 --tensor-parallel-size 1 "
    "--max-model-len 1024 --gpu_memory_utilization 0.8"
)


def test_an_underscored_flag_sets_the_dashed_field() -> None:
    settings = parse_launch_command(LAUNCH)
    assert settings is not None
    assert settings.gpu_memory_utilization == 0.8  # the log: "Requested memory: 0.80 (util)"
    assert settings.context_length == 1024
    assert "--gpu_memory_utilization" not in settings.unknown_flags


def test_underscores_after_the_first_dot_are_kept() -> None:
    """Only the name before the first "." is rewritten (the pattern `(?<=--)[^\\.]*`): a nested key keeps its
    spelling, as vLLM passes it on to the config's own field."""
    settings = parse_flags("vllm", ["--max_num_seqs", "8", "--compilation_config.cudagraph_mode", "NONE"])
    assert settings.max_running_requests == 8
    assert settings.flags.get("compilation-config.cudagraph_mode") == "NONE"


def test_other_engines_take_names_as_typed() -> None:
    """SGLang's parser is plain argparse (sglang/srt/server_args.py prepare_server_args, v0.5.23): an underscored
    spelling is not its flag, so kvtop names it as ignored rather than reading it."""
    settings = parse_flags("sglang", ["--mem_fraction_static", "0.8"])
    assert settings.mem_fraction_static is None
    assert settings.unknown_flags == ("--mem_fraction_static",)
