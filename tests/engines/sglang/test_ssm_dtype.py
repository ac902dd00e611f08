"""SGLang's SSM-state dtype (`--mamba-ssm-dtype`, `SGLANG_MAMBA_SSM_DTYPE`) by release (engines/sglang/ssm_dtype.py).

Expected figures from SGLang's own log and its code's arithmetic, never kvtop's: the DGX Spark's Qwen3.8-27B-FP8 start
at `--mamba-ssm-dtype bfloat16` (coralleicn-…-m080-mamba256-mtp3-bs64, SGLang 0.5.18-era) logged 'conv_state size:
0.71GB, ssm_state size: 18.07GB' (GiB) for its 256 slots and the padding slot. Its GDN layers (Qwen3.6-27B's shapes,
the record's config): 48 of them, conv (48 × 128 + 2 × 16 × 128) × 3 × 2 B = 61,440 B, SSM 48 × 128 × 128 × 2 B =
1,572,864 B in bfloat16 (× 2 in float32), a layer and slot (configs/mamba_utils.py `mamba_cache_per_req`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.calibration.corpus import load
from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.sglang import RULES
from kvtop.domain.engines.sglang.ssm_dtype import (
    cache_key_not_modelled,
    ignored_env_note,
    launch_ssm_dtype_bytes,
)
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.errors import InputError
from kvtop.domain.gpus import gpu_key
from kvtop.domain.kv_state import state_bytes_per_request
from kvtop.domain.launch import parse_flags
from kvtop.domain.launch_line import with_environment
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config

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


def test_a_long_value_is_cut_and_the_flag_said_once() -> None:
    """A 300-character value is quoted cut to 40 characters (redact.quoted), and the flag is named once, as the
    field (final reader 2, LOW 8: '--mamba-ssm-dtype: --mamba-ssm-dtype '…'' with the value whole)."""
    with pytest.raises(InputError) as refused:
        launch_ssm_dtype_bytes(parse_flags("sglang", ["--mamba-ssm-dtype", "f" * 300]), ResolvedVersion(text="0.5.8"))
    said = str(refused.value)
    assert said.startswith("--mamba-ssm-dtype: 'fff") and said.count("--mamba-ssm-dtype") == 1
    assert "f" * 41 not in said and "is not one SGLang 0.5.8 takes" in said


def test_the_flag_before_052_is_refused() -> None:
    """0.5.1.post3's server_args.py has no --mamba-ssm-dtype."""
    with pytest.raises(InputError, match="mamba-ssm-dtype"):
        launch_ssm_dtype_bytes(
            parse_flags("sglang", ["--mamba-ssm-dtype", "bfloat16"]), ResolvedVersion(text="0.5.1")
        )


# Nemotron-3-Nano-30B-A3B (tests/data/configs): 23 Mamba2 layers ('M' in hybrid_override_pattern), 64 heads × 64,
# 8 groups, state 128, kernel 4: conv (64 × 64 + 2 × 8 × 128) × 3 × 2 B = 36,864 B and temporal 64 × 64 × 128 =
# 524,288 elements a layer (configs/mamba_utils.py Mamba2StateShape: conv (conv_dim, kernel − 1), temporal
# (heads, head_dim, state))
NANO = Path(__file__).resolve().parents[2] / "data" / "configs" / "nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.json"
NANO_CONV, NANO_TEMPORAL = (64 * 64 + 2 * 8 * 128) * 3 * 2, 64 * 64 * 128


def _nano(key: str, dtype: str) -> ModelSpec:
    config = {k: v for k, v in json.loads(NANO.read_text()).items() if k != "mamba_ssm_cache_dtype"}
    return model_from_config({**config, key: dtype}, source="nemotron-3-nano")


def _nano_state(model: ModelSpec, release: str) -> int:
    settings = parse_flags("sglang", [])
    storage = RULES.kv_storage_for(model, settings, ResolvedVersion(text=release))
    layers = sum(1 for i in range(model.num_layers) if model.has_state(i))
    assert layers == 23
    return layers * state_bytes_per_request(model, ParallelLayout(), storage.unstated_ssm_dtype_bytes,
                                            storage.conv_extra_rows, storage.conv_state_dtype_bytes,
                                            storage.launch_ssm_dtype_bytes)  # fmt: skip


@pytest.mark.parametrize(("release", "ssm_bytes"), [("0.5.2", 4), ("0.5.8", 4), ("0.5.9", 2), ("0.5.23", 2)])
def test_a_config_stating_bfloat16_is_read_from_059(release: str, ssm_bytes: int) -> None:
    """mamba_ssm_dtype bfloat16: 0.5.2 – 0.5.8 write the flag's float32 default over it (server_args.py:2391 at
    0.5.8), 0.5.9 on mamba2_state_dtype(config) reads it (configs/nemotron_h.py:313 at 0.5.9)."""
    assert _nano_state(_nano("mamba_ssm_dtype", "bfloat16"), release) == 23 * (NANO_CONV + NANO_TEMPORAL * ssm_bytes)


def test_vllms_key_is_named_not_modelled() -> None:
    """NemotronH's mamba_ssm_cache_dtype is vLLM's key; SGLang 0.5.9 on reads only mamba_ssm_dtype, and kvtop reads
    the two as one: a bfloat16 state under that key is named, not planned silently."""
    settings = parse_flags("sglang", ["--engine-version", "0.5.18"])
    model = _nano("mamba_ssm_cache_dtype", "bfloat16")
    assert cache_key_not_modelled(model, settings, ResolvedVersion(text="0.5.18")) is not None
    assert cache_key_not_modelled(model, settings, ResolvedVersion(text="0.5.8")) is None  # float32: the flag's
    assert cache_key_not_modelled(_nano("mamba_ssm_cache_dtype", "float32"), settings,
                                  ResolvedVersion(text="0.5.18")) is None  # fmt: skip


def test_the_flag_alone_needs_a_value() -> None:
    with pytest.raises(InputError, match="needs a value"):
        launch_ssm_dtype_bytes(parse_flags("sglang", ["--mamba-ssm-dtype"]), ResolvedVersion(text="0.5.9"))


@pytest.mark.parametrize(
    ("flags", "env", "release", "said"),
    [
        ([], "bf16", "0.5.18", "Invalid mamba_ssm_dtype"),  # unknown to mamba2_state_dtype: warned, skipped
        ([], "bfloat16", "0.5.8", "float32"),  # overwritten by the flag's default
        (["--mamba-ssm-dtype", "float32"], "bfloat16", "0.5.18", "float32"),  # the typed flag sets it
        ([], "bfloat16", "0.5.18", None),  # used
    ],
)
def test_an_unused_variable_is_said(flags: list[str], env: str, release: str, said: str | None) -> None:
    settings = with_environment(parse_flags("sglang", flags), {"SGLANG_MAMBA_SSM_DTYPE": env})
    note = ignored_env_note(settings, ResolvedVersion(text=release))
    assert note is None if said is None else (note is not None and said in note and "not used" in note)


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
