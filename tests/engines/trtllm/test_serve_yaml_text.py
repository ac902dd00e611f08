"""The YAML text a plan prints for `--extra_llm_api_options` reads back, through PyYAML (the engine's loader), as the
values kvtop meant: a string that looks like a bool, null or a number stays a string, a float with no dot stays a
float (PyYAML's YAML 1.1 reads `1e-05` as the string '1e-05'), an empty mapping is a mapping. The expected values are
the inputs; the reader is PyYAML, not kvtop."""

from __future__ import annotations

import pytest
import yaml

from kvtop.domain.engine_launch import yaml_flow, yaml_lines, yaml_scalar

VALUES = ["true", "null", "8192", "yes", "Off", "~", "", " lead", "-x", "{}", "a: b", "s3://b/m:v1@x#frag",
          "/models/llama 3", 1e-05, 1.23e-05, 1e16, 0.85, 0.9, 8192, -1, True, False, None, float("inf")]  # fmt: skip


@pytest.mark.parametrize("value", VALUES)
def test_a_scalar_reads_back_as_itself(value: object) -> None:
    read = yaml.safe_load(f"key: {yaml_scalar(value)}")["key"]
    assert read == value and type(read) is type(value)


def test_a_nested_body_reads_back_in_block_and_flow_form() -> None:
    body = {"kv_cache_config": {"dtype": "fp8", "free_gpu_memory_fraction": 1e-05}, "cuda_graph_config": {},
            "speculative_config": {"speculative_model_dir": "s3://***@b/m#1"}, "disable_overlap_scheduler": True}  # fmt: skip
    assert yaml.safe_load("\n".join(yaml_lines(body))) == body
    assert yaml.safe_load(yaml_flow(body)) == body
