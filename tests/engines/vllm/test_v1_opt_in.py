"""VLLM_USE_V1=1 before v0.8.0 starts the opt-in V1 engine, which kvtop does not model there: refused by name.

Expected values from the PyPI wheels' envs.py: v0.6.4 :475-476, v0.7.0 :476-477 and v0.7.3 :503-504 read
`bool(int(os.getenv("VLLM_USE_V1", "0")))` (V0 by default, V1 under any int but 0); v0.6.3.post1's envs.py has no
VLLM_USE_V1 and its wheel no vllm/v1/ (the variable changes nothing: V0 planned); from v0.8.0 V1 is the default
(planned as V1, v0_charge.py).
"""

from __future__ import annotations

import pytest

from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.v0_charge import check_v1_opt_in
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_launch_command
from kvtop.domain.ledger import predict
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS

H100 = gpu_total_bytes("H100")
LLAMA_8B = str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")


@pytest.mark.parametrize(("version", "value", "refused"), [
    ("0.6.4", "1", True), ("0.7.0", "1", True), ("0.7.3", "1", True), ("0.7.3", "2", True),  # bool(int(v))
    ("0.7.3", "0", False), ("0.6.3.post1", "1", False), ("0.8.0", "1", False), ("0.10.2", "1", False),
])  # fmt: skip
def test_v1_opt_in_by_release(version: str, value: str, refused: bool) -> None:
    flags = {"VLLM_USE_V1": value}
    if refused:
        with pytest.raises(UnsupportedModelError, match=f"VLLM_USE_V1={int(value)} runs its V1 engine"):
            check_v1_opt_in(ResolvedVersion(text=version), flags)
    else:
        check_v1_opt_in(ResolvedVersion(text=version), flags)


def test_a_launch_opting_into_v1_at_0_7_3_is_not_planned_as_v0() -> None:
    def plan(line: str) -> int:
        settings = parse_launch_command(f"{line} vllm serve {LLAMA_8B} --engine-version 0.7.3")
        assert settings is not None
        return predict(load_model(LLAMA_8B), settings, gpu_total_bytes=H100, gpu_name="H100").engine.token_capacity

    with pytest.raises(UnsupportedModelError, match="VLLM_USE_V1"):
        plan("VLLM_USE_V1=1")
    assert plan("VLLM_USE_V1=0") == plan("")  # V0, the release's default
