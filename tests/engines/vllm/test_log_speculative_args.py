"""A vLLM log's `non-default args` print the speculative config as a Python dict (log_facts._printed_json): explain
reads it as the JSON object `--speculative-config` takes, over the engine config's SpeculativeConfig repr."""

from __future__ import annotations

import json

from kvtop.sources.engine_logs import parse_engine_log

# a real start's lines (search-index file id 60894101463: a Qwen3.8-27B MTP serve log quoted in a ROCm write-up,
# vLLM 0.1.dev1+g4d2a68d64; the engine config line cut after tensor_parallel_size)
ARGS = ("(APIServer pid=3407168) INFO 08-17 03:01:22 [api_utils.py:272] non-default args: {'model_tag': "
        "'/home/amd/Desktop/Qwen3.8-27B-ROCm/models/Qwen3.8-27B', 'model': "
        "'/home/amd/Desktop/Qwen3.8-27B-ROCm/models/Qwen3.8-27B', 'dtype': 'bfloat16', 'max_model_len': 262144, "
        "'served_model_name': ['qwen3.8-27b'], 'attention_backend': 'TRITON_ATTN', 'skip_mm_profiling': True, "
        "'speculative_config': {'method': 'mtp', 'num_speculative_tokens': 1}}")
CONFIG = ("(EngineCore pid=3407488) INFO 08-17 03:01:38 [core.py:122] Initializing a V1 LLM engine "
          "(v0.1.dev1+g4d2a68d64.d20260816) with config: model='/home/amd/Desktop/Qwen3.8-27B-ROCm/models/Qwen3.8-27B', "
          "speculative_config=SpeculativeConfig(method='mtp', model='/home/amd/Desktop/Qwen3.8-27B-ROCm/models/"
          "Qwen3.8-27B', num_spec_tokens=1), tokenizer='/home/amd/Desktop/Qwen3.8-27B-ROCm/models/Qwen3.8-27B', "
          "tensor_parallel_size=1")  # fmt: skip


def test_the_printed_speculative_dict_reads_as_json() -> None:
    log = parse_engine_log(f"{ARGS}\n{CONFIG}\n")
    assert json.loads(str(log.server_args["speculative_config"])) == {"method": "mtp", "num_speculative_tokens": 1}
    assert "speculative_config" not in log.engine_config  # the repr says less than the printed argument
    assert log.engine_config["tensor_parallel_size"] == 1


def test_the_engine_configs_repr_stays_where_no_argument_was_printed() -> None:
    log = parse_engine_log(f"{CONFIG}\n")
    assert str(log.engine_config["speculative_config"]).startswith("SpeculativeConfig(method='mtp'")
