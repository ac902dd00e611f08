"""An `--hf-overrides` rope under `text_config` (a multimodal config's language model) reaches vLLM's derived length
from v0.11.1 (kvtop/domain/engines/vllm/rope_override.py `NESTED_OVERRIDE_ERAS`).

The starts that showed it (tests/data/calibration/vllm.jsonl, `file61222544093-…`, SOURCES.md 'Held-out vLLM starts of
session 72 (helper A4'): one GB10 at vLLM 0.27.1 serving Qwen3.8-27B (config: Qwen3.6-27B's, whose text_config states
262,144 positions and a default mrope rope block) with `--hf-overrides '{"text_config": {"rope_parameters": {…,
"rope_type": "yarn", "factor": F, "original_max_position_embeddings": 262144}}}'`; vLLM ran all four, kvtop refused
'text_config'. Expected lengths are `_get_and_verify_max_len`'s arithmetic on `hf_text_config` (v0.27.1
config/model.py:1874, :2246-2330): yarn takes original × factor. `_apply_dict_overrides` merges a nested dict key by
key (`_update_nested`, :457-500), so a partial rope keeps config.json's rope_type."""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm import FLAGS
from kvtop.domain.engines.vllm.rope_override import derived_max_len
from kvtop.domain.errors import InputError
from kvtop.domain.launch import parse_flags
from kvtop.domain.launch_line import parse_launch_command
from kvtop.domain.model_config import model_from_config
from tests.cli_in_process import run_kvtop
from tests.data_paths import CONFIGS

QWEN36_27B = CONFIGS / "heldout" / "wave5" / "Qwen--Qwen3.6-27B.json"  # text_config: 262,144 positions, rope default
ROPE = ('{{"mrope_interleaved": true, "mrope_section": [11, 11, 10], "rope_type": "yarn", "rope_theta": 10000000, '
        '"partial_rotary_factor": 0.25, "factor": {factor}, "original_max_position_embeddings": 262144}}')  # fmt: skip


def _a4(factor: float) -> str:
    """The override as the A4 source's `ps -ef` line prints it."""
    return '{"text_config": {"rope_parameters": ' + ROPE.format(factor=factor) + "}}"


def _derived(version: str, overrides: str) -> int | None:
    model = model_from_config(json.loads(QWEN36_27B.read_text()))
    found = derived_max_len(model, parse_flags("vllm", ["--hf-overrides", overrides]), ResolvedVersion(text=version))
    return found[0] if found else None


@pytest.mark.parametrize(("version", "overrides", "derived"), [
    ("0.27.1", _a4(3.0), 786_432),  # 262,144 × 3: the start's --max-model-len 786432
    ("0.27.1", _a4(3.5), 917_504),
    ("0.27.1", _a4(4.0), 1_048_576),
    ("0.11.1", '{"text_config": {"rope_scaling": ' + ROPE.format(factor=2.0) + "}}", 524_288),  # read from rope_scaling
    ("0.13.0", '{"text_config": {"rope_scaling": ' + ROPE.format(factor=2.0) + "}}", None),  # set after the patch
    # merged into config.json's {"rope_type": "default", …}: the default type keeps; its factor 2 scales the positions
    ("0.27.1", '{"text_config": {"rope_parameters": {"factor": 2.0}}}', 524_288),
    ("0.27.1", '{"text_config": {"rope_theta": 5000000}}', None),  # a base frequency: no length
])  # fmt: skip
def test_the_text_config_rope_reaches_the_derived_length(version: str, overrides: str, derived: int | None) -> None:
    assert _derived(version, overrides) == derived


def test_a_partial_top_level_rope_is_not_merged() -> None:
    """A top-level dict value replaces the attribute (`setattr`, :494-499): a rope without its type is refused."""
    with pytest.raises(InputError, match="needs a rope_type"):
        _derived("0.27.1", '{"rope_parameters": {"factor": 2.0}}')


def test_before_0_11_1_the_section_is_replaced_and_refused() -> None:
    """v0.11.0's get_config sets text_config to the plain dict (`config.update`, transformers_utils/config.py:631-633)."""
    settings = parse_flags("vllm", ["--hf-overrides", _a4(3.0), "--engine-version", "0.11.0"])
    with pytest.raises(InputError, match="text_config is not modelled by kvtop at vLLM 0.11.0"):
        FLAGS.check_parallel(settings)


def test_a_nested_key_kvtop_does_not_read_is_refused_by_name() -> None:
    overrides = '{"text_config": {"num_hidden_layers": 2, "rope_parameters": {"factor": 2.0}}}'
    with pytest.raises(InputError, match="'text_config.num_hidden_layers' is not modelled"):
        parse_flags("vllm", ["--hf-overrides", overrides], strict=True)
    with pytest.raises(InputError, match="'text_config.num_hidden_layers' is not modelled"):
        parse_launch_command(f"vllm serve Qwen/Qwen3.6-27B --hf-overrides '{overrides}'")
    with pytest.raises(InputError, match="'vision_config' is not modelled"):  # another section: still refused
        parse_flags("vllm", ["--hf-overrides", '{"vision_config": {"depth": 2}}'], strict=True)


def test_a_text_config_override_on_a_flat_config_is_refused() -> None:
    """Qwen3-32B's fields are flat: `_apply_dict_overrides` finds no nested config and sets text_config to the dict,
    which get_text_config then returns and get_hf_text_config refuses (v0.27.1 transformers_utils/config.py:1053-1065,
    transformers 5.5.3 configuration_utils.py get_text_config)."""
    model = model_from_config(json.loads((CONFIGS / "Qwen--Qwen3-32B.json").read_text()))
    assert model.text_section == ""
    settings = parse_flags("vllm", ["--hf-overrides", _a4(3.0)])
    with pytest.raises(InputError, match="this config has no text_config section"):
        derived_max_len(model, settings, ResolvedVersion(text="0.27.1"))


def _plan(length: int, factor: float | None, *extra: str) -> dict[str, object]:
    """The A4 launch as typed (SOURCES.md's blind command), with the override or without it."""
    override = f" --hf-overrides '{_a4(factor)}'" if factor else ""
    ran = run_kvtop("plan", "--model", str(QWEN36_27B), "--engine", "vllm", "--engine-version", "0.27.1", "--gpu",
                    "GB10", "--no-calibration-store", "--json", "--cmd",
                    "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 vllm serve /home/admin/models/qwen3.8-27b --port 8000 "
                    f"--trust-remote-code --no-enable-prefix-caching --max-model-len {length} "
                    f"--gpu-memory-utilization 0.92{override} {' '.join(extra)} --reasoning-parser qwen3")  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    plan: dict[str, object] = json.loads(ran.stdout)
    return plan


def test_the_a4_pinned_starts_plan_as_typed_with_the_logged_pools() -> None:
    """fp8 KV with `--kv-cache-memory-bytes`: the logs' pools (974,864 and 1,209,295 tokens) with the override as
    without it; the pool reads nothing the rope changes."""
    for length, factor, kv_bytes, logged in ((786_432, 3.0, 32_212_254_720, 974_864),
                                              (1_048_576, 4.0, 39_849_132_032, 1_209_295)):  # fmt: skip
        flags = ("--kv-cache-dtype", "fp8", "--kv-cache-memory-bytes", str(kv_bytes))
        assert _plan(length, factor, *flags)["token_capacity"] == logged
        assert _plan(length, None, *flags)["token_capacity"] == logged


def test_the_a4_bf16_start_grows_the_rope_cache_by_the_override() -> None:
    """The yarn mrope caches original × 4 × factor rows (v0.27.1 rotary_embedding/__init__.py:259-271: MRotaryEmbedding
    over 262,144 positions, mrope.py:274 × 4, yarn_scaling_rope.py:77-78 × factor 3) of the 64-wide rotary (head 256
    × 0.25) × 2 B: 3,145,728 × 128 B, against 1,048,576 × 128 B without the override, 268,435,456 B more weights and
    less KV budget. The start logged 'Model loading took 51.35 GiB'."""
    with_it, without = _plan(786_432, 3.0), _plan(786_432, None)
    grown = (262_144 * 4 * 3 - 262_144 * 4) * 64 * 2
    assert int(str(with_it["weights_bytes"])) - int(str(without["weights_bytes"])) == grown
    assert int(str(without["kv_budget_bytes"])) - int(str(with_it["kv_budget_bytes"])) == grown
    assert abs(int(str(with_it["weights_bytes"])) / 2**30 - 51.35) < 0.05  # 51.33 planned (51.08 without)
