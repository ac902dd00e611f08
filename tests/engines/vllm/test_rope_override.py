"""A RoPE scaling on vLLM's launch line (`--rope-scaling`, `--hf-overrides`) scales the longest `--max-model-len` it
takes (kvtop/domain/engines/vllm/rope_override.py).

The start that showed it (tests/data/calibration/vllm.jsonl, daisuketakai-qwen3-32b-yarn4-4xh100-tp4-v0100): vLLM
0.10.0, `vllm serve Qwen/Qwen3-32B --rope-scaling '{"rope_type":"yarn","factor":4.0,
"original_max_position_embeddings":32768}' --max-model-len 131072 -tp 4`, whose log prints 'Using max model len
131072'; kvtop refused the flag. Expected lengths are `_get_and_verify_max_len`'s arithmetic (v0.10.0
config.py:3527-3550): yarn takes original_max_position_embeddings × factor, dynamic the config's positions × factor,
llama3 none."""

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
from tests.cli_in_process import Ran, run_kvtop
from tests.data_paths import CONFIGS

QWEN3_32B = CONFIGS / "Qwen--Qwen3-32B.json"  # max_position_embeddings 40,960, no rope_scaling
YARN = '{"rope_type":"yarn","factor":4.0,"original_max_position_embeddings":32768}'
DYNAMIC = '{"rope_type":"dynamic","factor":2.0}'


def _derived(version: str, *flags: str) -> int | None:
    model = model_from_config(json.loads(QWEN3_32B.read_text()))
    found = derived_max_len(model, parse_flags("vllm", list(flags)), ResolvedVersion(text=version))
    return found[0] if found else None


@pytest.mark.parametrize(("version", "flags", "derived"), [
    ("0.10.0", ("--rope-scaling", YARN), 131_072),  # 32,768 × 4: the log's 'Using max model len 131072'
    ("0.11.0", ("--hf-overrides", f'{{"rope_scaling": {YARN}}}'), 131_072),
    ("0.11.2", ("--hf-overrides", f'{{"rope_scaling": {YARN}}}'), 131_072),  # read from rope_scaling until v0.12.0
    ("0.13.0", ("--hf-overrides", f'{{"rope_parameters": {YARN}}}'), 131_072),
    ("0.13.0", ("--hf-overrides", f'{{"rope_scaling": {YARN}}}'), None),  # set after patch_rope_parameters: unread
    ("0.19.0", ("--hf-overrides", f'{{"rope_scaling": {YARN}}}'), None),  # the last wheel asking transformers < 5
    # transformers >= 5.5.1 admitted: PreTrainedConfig.rope_scaling's setter sets rope_parameters
    ("0.19.1", ("--hf-overrides", f'{{"rope_scaling": {YARN}}}'), 131_072),
    ("0.24.0", ("--hf-overrides", f'{{"rope_scaling": {YARN}}}'), 131_072),
    ("0.24.0", ("--hf-overrides", f'{{"rope_scaling": {YARN}, "rope_parameters": {DYNAMIC}}}'), 81_920),  # last wins
    ("0.24.0", ("--hf-overrides", f'{{"rope_parameters": {DYNAMIC}, "rope_scaling": {YARN}}}'), 131_072),  # in order
    ("0.13.0", ("--hf-overrides", f'{{"rope_parameters": {DYNAMIC}, "rope_scaling": {YARN}}}'), 81_920),  # unread
    ("0.10.0", ("--rope-scaling", '{"type":"dynamic","factor":2.0}'), 81_920),  # 40,960 × 2
    ("0.10.0", ("--rope-scaling", '{"rope_type":"llama3","factor":8.0}'), None),  # llama3 is not scaled
    ("0.10.0", (), None),
])  # fmt: skip
def test_the_derived_length_by_release_and_spelling(version: str, flags: tuple[str, ...], derived: int | None) -> None:
    assert _derived(version, *flags) == derived


@pytest.mark.parametrize(("version", "flags", "words"), [
    ("0.13.0", ("--rope-scaling", YARN), "has no such flag"),  # gone from v0.11.1's arg_utils.py
    ("0.10.0", ("--rope-scaling", "yarn"), "is not JSON"),
    ("0.10.0", ("--rope-scaling", '{"rope_type":"yarn","factor":4.0}'), "original_max_position_embeddings"),
])  # fmt: skip
def test_what_is_refused_names_the_flag(version: str, flags: tuple[str, ...], words: str) -> None:
    settings = parse_flags("vllm", [*flags, "--engine-version", version])
    with pytest.raises(InputError, match=words):
        FLAGS.check_parallel(settings)


def test_another_override_key_is_refused_where_typed_and_read_past_in_a_log() -> None:
    """A key that changes the config kvtop reads (here the layer count) is not modelled: refused where the operator
    types it or pastes the launch line; a log's printed overrides (what ran) are read for their rope alone."""
    overrides = '{"num_hidden_layers": 2}'
    with pytest.raises(InputError, match="'num_hidden_layers' is not modelled"):
        parse_flags("vllm", ["--hf-overrides", overrides], strict=True)
    with pytest.raises(InputError, match="'num_hidden_layers' is not modelled"):
        parse_launch_command(f"vllm serve Qwen/Qwen3-32B --hf-overrides '{overrides}'")
    logged = parse_flags("vllm", ["--hf-overrides", "{'num_hidden_layers': 2}", "--engine-version", "0.11.2"])
    FLAGS.check_parallel(logged)
    assert _derived("0.11.2", "--hf-overrides", "{'num_hidden_layers': 2}") is None


def test_the_launch_line_keeps_the_json() -> None:
    settings = parse_launch_command(f"vllm serve Qwen/Qwen3-32B --rope-scaling '{YARN}' --max-model-len 131072 -tp 4")
    assert settings is not None and settings.unknown_flags == ()
    assert settings.flags["rope-scaling"] == YARN
    assert "--rope-scaling" in settings.to_flags()  # written back, as vLLM takes it


def test_a_logs_printed_dict_is_read() -> None:
    """vLLM's `non-default args` print the value as a Python dict ({'rope_type': 'yarn', …}), which explain keeps."""
    printed = "{'rope_type': 'yarn', 'factor': 4.0, 'original_max_position_embeddings': 32768}"
    assert _derived("0.10.0", "--rope-scaling", printed) == 131_072


def test_the_yarn_rope_caches_the_derived_length() -> None:
    """YaRNScalingRotaryEmbedding caches original × factor positions (v0.10.0 rotary_embedding.py:604-607): 131,072 ×
    128 × 2 B = 32 MiB on every rank, where the config's 40,960 positions give 10 MiB. With it the plan's weights are
    15.413 GiB against the start's 'Model loading took 15.4115 GiB' (15.392 without)."""
    from kvtop.domain.calibration.estimate import calibration_inputs, planned_capacity
    from kvtop.domain.engines.vllm.weights_held import rope_cache
    from kvtop.domain.gpus import gpu_total_bytes

    model = model_from_config(json.loads(QWEN3_32B.read_text()))
    settings = parse_flags("vllm", ["--engine-version", "0.10.0", "--tp", "4", "--rope-scaling", YARN,
                                    "--max-model-len", "131072"])  # fmt: skip
    plan = planned_capacity(model, settings, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100")
    found = rope_cache(calibration_inputs(plan.ledger))
    assert found is not None and found[0] == 131_072 * 128 * 2
    weights = next(term for term in plan.estimate.terms if term.term.value == "weights")
    assert abs(weights.bytes / 2**30 - 15.4115) < 0.01


def test_an_override_the_release_does_not_read_is_said() -> None:
    """v0.13.0 sets a dict override after patch_rope_parameters, and derives the length from rope_parameters."""
    planned = _plan("--hf-overrides", f'{{"rope_scaling": {YARN}}}', version="0.13.0")
    assert planned.returncode != 0 and "rope_scaling does not reach the derived length" in planned.stderr


def _plan(*flags: str, version: str = "0.10.0") -> Ran:
    return run_kvtop("plan", "--engine", "vllm", "--engine-version", version, "--gpu", "H100",
                     "--model", str(QWEN3_32B), "--tp", "4", "--no-calibration-store", "--json", "--max-model-len", "131072",
                     *flags)  # fmt: skip


def test_the_yarn_start_is_planned_and_without_it_refused() -> None:
    planned = _plan("--rope-scaling", YARN, "--gpu-memory-utilization", "0.95")
    assert planned.returncode == 0, planned.stderr
    logged = 853_808  # the least rank's 'GPU KV cache size: 853,808 tokens'
    tokens = int(json.loads(planned.stdout)["token_capacity"])
    assert abs(tokens - logged) / logged < 0.05
    refused = _plan()
    assert refused.returncode != 0 and "40,960 positions" in refused.stderr


def test_a_config_without_positions_scales_vllms_default() -> None:
    """FalconMamba's config names no position field: `_get_and_verify_max_len` takes 2,048 and multiplies it by the
    launch's dynamic factor 2 (vLLM 0.10.1 config/__init__.py:2882-2898 then :2900-2924): 4,096, where no
    --max-model-len is given; a given one it returns as it is (:2883-2885), refused by nothing."""
    from kvtop.domain.engines.registry import engine_rules

    model = model_from_config(json.loads((CONFIGS / "tiiuae--falcon-mamba-7b.json").read_text()))
    assert model.positions_nominal
    version, rope = ResolvedVersion(text="0.10.0"), ("--rope-scaling", '{"type":"dynamic","factor":2.0}')
    found = derived_max_len(model, parse_flags("vllm", list(rope)), version)
    assert found is not None and found[0] == 2048 * 2 and "no position field" in found[1]
    assert engine_rules("vllm").context_length(model, parse_flags("vllm", list(rope)), version) == 4096
    stated = parse_flags("vllm", [*rope, "--max-model-len", "10000"])
    assert engine_rules("vllm").context_length(model, stated, version) == 10_000


def test_an_override_the_release_does_not_read_is_named_in_the_plan_without_a_stated_length() -> None:
    """No --max-model-len: vLLM v0.13.0 derives 40,960 from rope_parameters (the override's rope_scaling is set after
    patch_rope_parameters), so the plan keeps Qwen3-32B's 40,960 positions and says why, not silently."""
    planned = run_kvtop("plan", "--engine", "vllm", "--engine-version", "0.13.0", "--gpu", "H100", "--model",
                        str(QWEN3_32B), "--tp", "4", "--no-calibration-store", "--json",
                        "--hf-overrides", f'{{"rope_scaling": {YARN}}}')  # fmt: skip
    assert planned.returncode == 0, planned.stderr
    plan = json.loads(planned.stdout)
    assert plan["context_length"] == 40_960
    assert any(note.startswith("context: 40,960 positions, as read (max_position_embeddings: --hf-overrides' "
                               "rope_scaling does not reach the derived length") for note in plan["notes"])


def test_a_rope_scaling_override_on_transformers_5_reaches_the_length_at_0_24_0() -> None:
    """A real vLLM 0.24.0 start kvtop refused (tests/data/calibration/vllm.jsonl,
    anud18-qwen3-8b-fp8-yarn4-h100pcie-v0240-u090-len131072): Qwen3-8B-FP8 (40,960 positions) on an H100 PCIe with
    `--hf-overrides '{"rope_scaling": yarn × 4 over 32,768}' --max-model-len 131072`, which served ~77k-token requests
    and printed a 430,320-token KV cache. The 0.24.0 wheel asks for transformers >= 5.5.3, whose
    `PreTrainedConfig.rope_scaling` setter sets `rope_parameters` (configuration_utils.py:471-477), the dict
    `_get_and_verify_max_len` reads: 32,768 × 4 = 131,072 is derived, the launch is not refused."""
    overrides = '{"rope_scaling":{"rope_type":"yarn","factor":4.0,"original_max_position_embeddings":32768}}'
    config = CONFIGS.parent / "calibration" / "configs" / "Qwen--Qwen3-8B-FP8.RECONSTRUCTED.json"
    planned = run_kvtop("plan", "--engine", "vllm", "--engine-version", "0.24.0", "--gpu", "H100-PCIE", "--model",
                        str(config), "--no-calibration-store", "--json", "--cmd",
                        "vllm serve Qwen/Qwen3-8B-FP8 --served-model-name qwen3-8b-fp8 --port 8000 --max-num-seqs 32 "
                        "--enable-prefix-caching --reasoning-parser qwen3 --trust-remote-code --max-model-len 131072 "
                        f"--gpu-memory-utilization 0.9 --max-num-batched-tokens 32768 --hf-overrides '{overrides}'")  # fmt: skip
    assert planned.returncode == 0, planned.stderr
    plan = json.loads(planned.stdout)
    assert plan["context_length"] == 131_072
    logged = 430_320  # the source's configuration table: 'KV cache 430,320 tokens'
    assert abs(int(plan["token_capacity"]) - logged) / logged < 0.05
