"""SGLang's SSM-state dtype (`--mamba-ssm-dtype`, `SGLANG_MAMBA_SSM_DTYPE`) by release (engines/sglang/ssm_dtype.py).

Expected figures from SGLang's own log and its code's arithmetic, never kvtop's: the DGX Spark's Qwen3.8-27B-FP8 start
at `--mamba-ssm-dtype bfloat16` (coralleicn-…-m080-mamba256-mtp3-bs64, SGLang 0.5.18-era) logged 'conv_state size:
0.71GB, ssm_state size: 18.07GB' (GiB) for its 256 slots and the padding slot. Its GDN layers (Qwen3.6-27B's shapes,
the record's config): 48 of them, conv (48 × 128 + 2 × 16 × 128) × 3 × 2 B = 61,440 B, SSM 48 × 128 × 128 × 2 B =
1,572,864 B in bfloat16 (× 2 in float32), a layer and slot (configs/mamba_utils.py `mamba_cache_per_req`).
"""

from __future__ import annotations

import pytest

from benchmarks.calibration.corpus import load
from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.sglang import RULES
from kvtop.domain.engines.sglang.ssm_dtype import launch_ssm_dtype_bytes
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.errors import InputError
from kvtop.domain.gpus import gpu_key
from kvtop.domain.kv_state import state_bytes_per_request
from kvtop.domain.launch import parse_flags
from kvtop.domain.launch_line import with_environment
from kvtop.domain.layout import ParallelLayout

BF16_STATE = 48 * (61_440 + 1_572_864)  # 78,446,592 B a slot
FP32_STATE = 48 * (61_440 + 2 * 1_572_864)  # 153,944,064 B a slot
FP8_MTP = "coralleicn-dgxspark-qwen3.8-27b-fp8-gb10-sglang0518dev-m080-mamba256-mtp3-bs64"


def _record(record_id: str):  # type: ignore[no-untyped-def]
    return next(r for r in load("sglang") if r.id == record_id)


def _state(settings_flags: list[str], release: str, env: dict[str, str] | None = None) -> int:
    record = _record(FP8_MTP)
    settings = with_environment(parse_flags("sglang", settings_flags), env or {})
    storage = RULES.kv_storage_for(record.model, settings, ResolvedVersion(text=release))
    layers = sum(1 for i in range(record.model.num_layers) if record.model.has_state(i))
    assert layers == 48
    return layers * state_bytes_per_request(record.model, ParallelLayout(), storage.unstated_ssm_dtype_bytes,
                                            storage.conv_extra_rows, storage.conv_state_dtype_bytes,
                                            storage.launch_ssm_dtype_bytes)  # fmt: skip


def test_bfloat16_state_is_the_logged_pool() -> None:
    """257 slots × 78,446,592 B = 18.78 GiB: the log's 0.71 + 18.07 GB (GiB)."""
    per_slot = _state(["--mamba-ssm-dtype", "bfloat16"], "0.5.18")
    assert per_slot == BF16_STATE
    assert round(257 * per_slot / 2**30, 2) == pytest.approx(0.71 + 18.07, abs=0.01)


@pytest.mark.parametrize(
    ("flags", "env", "release", "expected"),
    [
        ([], {}, "0.5.18", FP32_STATE),  # the config's float32 (mamba_utils.py:47-107)
        ([], {"SGLANG_MAMBA_SSM_DTYPE": "bfloat16"}, "0.5.18", BF16_STATE),  # the variable over the config
        (
            [],
            {"SGLANG_MAMBA_SSM_DTYPE": "bf16"},
            "0.5.18",
            FP32_STATE,
        ),  # unknown: warned, the config's stands
        (
            ["--mamba-ssm-dtype", "float16"],
            {},
            "0.5.9",
            BF16_STATE,
        ),  # float16 from 0.5.9 (server_args.py:214)
        # 0.5.8: the flag's float32 default overwrites the variable (server_args.py:2391)
        ([], {"SGLANG_MAMBA_SSM_DTYPE": "bfloat16"}, "0.5.8", FP32_STATE),
        (["--mamba-ssm-dtype", "bfloat16"], {}, "0.5.2", BF16_STATE),  # server_args.py:1732-1737 at 0.5.2
    ],
)
def test_the_state_dtype_by_release(
    flags: list[str], env: dict[str, str], release: str, expected: int
) -> None:
    assert _state(flags, release, env) == expected


def test_float16_before_059_is_refused() -> None:
    """0.5.8's choices are float32 and bfloat16 (server_args.py:202 MAMBA_SSM_DTYPE_CHOICES)."""
    with pytest.raises(InputError, match="mamba-ssm-dtype"):
        launch_ssm_dtype_bytes(
            parse_flags("sglang", ["--mamba-ssm-dtype", "float16"]), ResolvedVersion(text="0.5.8")
        )


def test_the_flag_before_052_is_refused() -> None:
    """0.5.1.post3's server_args.py has no --mamba-ssm-dtype."""
    with pytest.raises(InputError, match="mamba-ssm-dtype"):
        launch_ssm_dtype_bytes(
            parse_flags("sglang", ["--mamba-ssm-dtype", "bfloat16"]), ResolvedVersion(text="0.5.1")
        )


def test_a_config_stating_bfloat16_is_float32_before_059() -> None:
    """0.5.2 – 0.5.8 never read the config's mamba_ssm_dtype: the flag's float32 default is the state's."""
    assert launch_ssm_dtype_bytes(parse_flags("sglang", []), ResolvedVersion(text="0.5.8")) == 4
    assert launch_ssm_dtype_bytes(parse_flags("sglang", []), ResolvedVersion(text="0.5.9")) is None


def test_the_bf16_mtp_start_fits() -> None:
    """The 0.80 start with 256 slots and MTP held 294,176 tokens; with float32 state (66.67 GiB with the intermediates)
    kvtop planned it 'DOES NOT FIT' (session 71). Its free memory before the load is not logged: planned blind, it
    fits, and its state pool is SGLang's bfloat16 one (fewer bytes than the 257 float32 slots alone)."""
    record = _record(FP8_MTP)
    plan = planned_capacity(record.model, record.settings, gpu_total_bytes=record.gpu_total_bytes,
                            gpu_name=gpu_key(record.gpu), measured=MeasuredInputs())  # fmt: skip
    rank = plan.ledger.ranks[0]
    assert rank.token_capacity > 0
    assert 257 * BF16_STATE <= rank.state_pool_bytes < 257 * FP32_STATE
