"""DeepSeek-V3/R1 under `--attention-backend trtllm_mla` (or as the decode backend): the KV dtypes SGLang takes by
release, read in the wheels (the raise "TensorRT-LLM MLA backend only supports kv-cache-dtype of …"):
fp8_e4m3 or auto to v0.5.4 (0.5.0rc2 server_args.py:458, 0.5.4 :1111); + fp4_e2m1 from v0.5.5 (:1233); + bf16 from
v0.5.7 (:1621; 0.5.20 arg_groups/overrides.py:1261); fp4_e2m1 gone from v0.5.21 (overrides.py:1147, 0.5.23 :1216).
Its page (32 or 64, else 64) and the plain MLA row are test_attention_backend.py's; the prefill-graph switch-off
0.5.15 … 0.5.23 apply for it (cuda_graph_hook.py:279-312 at 0.5.23) runs after the reserve is sized
(arg_groups/pipeline.py:218 then :245), so the reserve keeps them.
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.sglang.attention_backends import check_attention_backend
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.errors import InputError
from kvtop.domain.launch import LaunchSettings, parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA


def _check(flag: str, dtype: str, version: str, approximate: bool = False) -> None:
    settings = LaunchSettings(engine="sglang", flags={flag: "trtllm_mla"}, kv_cache_dtype=dtype)
    check_attention_backend(settings, "B200", ResolvedVersion(text=version, approximate=approximate))


RELEASES = ("0.5.0rc2", "0.5.4", "0.5.5", "0.5.6.post2", "0.5.7", "0.5.20", "0.5.21", "0.5.23")
TAKEN = {  # the releases of RELEASES whose raise lets the dtype through
    "fp8_e4m3": RELEASES,
    "auto": RELEASES,
    "fp4_e2m1": ("0.5.5", "0.5.6.post2", "0.5.7", "0.5.20"),
    "bf16": ("0.5.7", "0.5.20", "0.5.21", "0.5.23"),
}


@pytest.mark.parametrize("version", RELEASES)
@pytest.mark.parametrize("dtype", sorted(TAKEN))
def test_the_kv_dtypes_trtllm_mla_takes_by_release(dtype: str, version: str) -> None:
    if version in TAKEN[dtype]:
        _check("attention-backend", dtype, version)
    else:
        with pytest.raises(InputError, match="runs trtllm_mla with --kv-cache-dtype"):
            _check("attention-backend", dtype, version)


def test_fp8_e5m2_is_never_taken_and_the_decode_backend_is_read_too() -> None:
    with pytest.raises(InputError) as err:
        _check("decode-attention-backend", "fp8_e5m2", "0.5.23")
    assert err.value.field == "--kv-cache-dtype"
    assert "fp8_e4m3 / bf16 / auto only (got 'fp8_e5m2'" in str(err.value)
    _check("prefill-attention-backend", "fp8_e5m2", "0.5.23")  # the rule reads no prefill backend


def test_an_estimated_release_is_not_checked() -> None:
    _check("attention-backend", "fp8_e5m2", "0.5.23", approximate=True)


def _plan(gpu: str, dtype: str, version: str = "0.5.23", config: str = "deepseek-ai--DeepSeek-V3.json",
          architecture: str | None = None) -> None:
    path = DATA / "configs" / config
    read = json.loads(path.read_text())
    model = model_from_config(read | ({"architectures": [architecture]} if architecture else {}), source=path.name)
    settings = parse_flags("sglang", ["--tp", "8", "--kv-cache-dtype", dtype, "--engine-version", version], strict=True)
    predict(model, settings, gpu_total_bytes=(183 if gpu == "B200" else 141) << 30, gpu_name=gpu)


def test_the_default_trtllm_mla_of_deepseek_v3_on_blackwell_is_checked_too() -> None:
    """SGLang picks trtllm_mla for DeepseekV3ForCausalLM on SM100 with no backend named (0.5.6.post2
    server_args.py:1075 in `_handle_model_specific_adjustments` :647, before the dtype check's
    `_handle_attention_backend_compatibility` :654; 0.5.23 model_overrides/deepseek_v2.py:185)."""
    with pytest.raises(InputError, match="runs trtllm_mla with --kv-cache-dtype"):
        _plan("B200", "fp8_e5m2")
    _plan("B200", "fp8_e4m3")
    _plan("H200", "fp8_e5m2")  # Hopper: fa3, no such check


@pytest.mark.parametrize("architecture", ["DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM"])
def test_a_dsa_checkpoint_keeps_dsas_own_backend_on_blackwell(architecture: str) -> None:
    """A DSA checkpoint (`index_topk`) is not given trtllm_mla, though its class be DeepseekV3ForCausalLM:
    is_deepseek_nsa takes that class too (0.5.6.post2 configs/model_config.py:53-63) and its branch picks DSA's own
    backend (server_args.py:993) before the else that picks trtllm_mla (:1068-1077). bf16 KV, which trtllm_mla
    refuses to 0.5.6.post2 (:1233), is planned; DeepSeek-V3 itself is refused."""
    with pytest.raises(InputError, match="runs trtllm_mla with --kv-cache-dtype"):
        _plan("B200", "bf16", "0.5.6.post2")
    _plan("B200", "bf16", "0.5.6.post2", "deepseek-ai--DeepSeek-V3.2.json", architecture)
