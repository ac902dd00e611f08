"""TensorRT-LLM's overlap-scheduler key as kvtop reads it back (#27, session 71); the copied launch itself (serve's
options, the YAML beside them, planned again through `--cmd`) is tests/engines/trtllm/test_serve_launch.py.
"""

from __future__ import annotations

import pytest

from kvtop.cli import main
from tests.data_paths import CONFIGS
from tests.engines.measured_flags import plan_json

MID = "pytorch_backend_config.disable_overlap_scheduler"


def _temporary_pool(plan: dict[str, object]) -> object:
    steps = plan["steps"]
    assert isinstance(steps, list)
    return next(step for step in steps if "temporary pool" in step["label"])


def test_overlap_off_typed_false_is_not_set(capsys: pytest.CaptureFixture[str]) -> None:
    """At 0.20.0 the profiling run gives each dummy request of max_seq_len − 1 = 159 tokens two generated tokens with
    the overlap scheduler on, one without (§3 step 1): 148 requests (23,552 ÷ 159, the last 20 tokens) take
    ⌈(159 + 2) ÷ 32⌉ = 6 blocks each (⌈22 ÷ 32⌉ = 1 for the last), 889 × 32 = 28,448 tokens; with it off
    ⌈160 ÷ 32⌉ = 5 each, 741 × 32 = 23,712; each token 131,072 B (32 layers × 8 KV heads × 128 × 2 × 2 B). A typed
    'false' is the scheduler on, not a set switch. At 0.20.0 (between PR #4174 and PR #4603) the key sits under
    pytorch_backend_config."""
    base = ("--model", str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"), "--engine", "trtllm",
            "--engine-version", "0.20.0", "--gpu", "H100", "--backend", "pytorch", "--max_batch_size", "4096",
            "--max_num_tokens", "23552", "--max_seq_len", "160")  # fmt: skip
    on = _temporary_pool(plan_json(capsys, base))
    off = _temporary_pool(plan_json(capsys, base, f"--{MID}"))
    typed_false = _temporary_pool(plan_json(capsys, base, f"--{MID}", "false"))
    pools = [(step["note"], step["bytes"]) for step in (on, off, typed_false)]  # type: ignore[index]
    assert pools == [("28,448 tokens", 28_448 * 131_072), ("23,712 tokens", 23_712 * 131_072),
                     ("28,448 tokens", 28_448 * 131_072)]  # fmt: skip


def test_overlap_off_not_a_boolean_is_refused_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    args = ("plan", "--no-calibration-store", "--model", str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"),
            "--engine", "trtllm", "--gpu", "H100", "--backend", "pytorch", "--disable_overlap_scheduler", "maybe")  # fmt: skip
    assert main(list(args)) != 0
    assert "--disable_overlap_scheduler: expected true or false, got 'maybe'" in capsys.readouterr().err


_LLAMA_019 = ("--model", str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"), "--engine", "trtllm",
              "--engine-version", "0.19.0", "--gpu", "H100", "--backend", "pytorch", "--max_batch_size", "4096",
              "--max_num_tokens", "23552", "--max_seq_len", "160")  # fmt: skip


def test_before_pr_4174_the_overlap_scheduler_is_off_unless_the_old_key_turns_it_on(capsys) -> None:
    """Before PR #4174 (merged 2025-05-13; 0.20.0rc3 the first upload after) PyTorchConfig.enable_overlap_scheduler
    defaulted to False (_torch/pyexecutor/config.py of spring 2025; PR #4174's diff turns `enable_overlap_scheduler=
    False` into `disable_overlap_scheduler=True`). At 0.19.0 the same launch as above takes ⌈160 ÷ 32⌉ = 5 blocks a
    dummy request (one generated token): 741 × 32 = 23,712 tokens; `pytorch_backend_config: {enable_overlap_scheduler:
    true}` gives two, 889 × 32 = 28,448."""
    default = _temporary_pool(plan_json(capsys, _LLAMA_019))
    old_on = _temporary_pool(plan_json(capsys, _LLAMA_019, "--pytorch_backend_config.enable_overlap_scheduler", "true"))
    assert [step["note"] for step in (default, old_on)] == ["23,712 tokens", "28,448 tokens"]  # type: ignore[index]


def test_the_tensorrt_backend_refuses_the_overlap_key(capsys) -> None:
    """NVIDIA/TensorRT-LLM#7752 (1.0.0rc4): `_TrtLLM got invalid argument: disable_overlap_scheduler`."""
    args = ("plan", "--no-calibration-store", "--model", str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"),
            "--engine", "trtllm", "--gpu", "H100", "--backend", "tensorrt", "--disable_overlap_scheduler")  # fmt: skip
    assert main(list(args)) != 0
    assert "--disable_overlap_scheduler: the TensorRT backend takes no overlap-scheduler key" in capsys.readouterr().err


@pytest.mark.parametrize(("version", "fraction"), [("1.2.0rc2", 0.9), ("1.1.0", 0.9), ("1.2.0rc3", 0.9), ("1.2.0rc4", 0.9),
                                                   ("1.2.0rc5", 0.5), ("1.2.1", 0.5)])  # fmt: skip
def test_a_yaml_kv_cache_config_without_the_fraction_before_pr_9262(capsys, tmp_path, version, fraction) -> None:
    """Before PR #9262 update_llm_args_with_extra_dict's `llm_args | llm_args_dict` put the YAML's kv_cache_config in
    place of the line's KvCacheConfig, whose fraction came back at the 0.9 default (KvCacheConfig, llm_args.py);
    1.2.0rc2 (2025-11-07) predates it, and so do 1.2.0rc3 / rc4 (2025-11-21, 11-25: the PR's reviewer asked for tests
    on 2025-11-27); 1.1.0 sorts before them and is read so (whether its branch took the fix was not read); 1.2.0rc5
    (2025-12-10) and 1.2.1 are read as carrying it (not pinned)."""
    options = tmp_path / "kv.yaml"
    options.write_text("kv_cache_config:\n  dtype: fp8\n")
    base = ("--model", str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"), "--engine", "trtllm",
            "--engine-version", version, "--gpu", "H100")  # fmt: skip
    cmd = f"trtllm-serve MODEL --backend pytorch --kv_cache_free_gpu_memory_fraction 0.5 --extra_llm_api_options {options}"
    out = plan_json(capsys, base, "--cmd", cmd)
    assert out["memory_fraction"]["value"] == pytest.approx(fraction, abs=1e-6)
    # the typed 0.5 not read is said, never dropped in silence (FR2 #4); where it is read, nothing to say
    said = [note for note in out["notes"] if note.startswith("--kv_cache_free_gpu_memory_fraction 0.5 not read")]
    assert len(said) == (fraction == 0.9)
    if said:
        assert "before PR #9262 (first in 1.2.0rc5" in said[0] and f"TensorRT-LLM {version} runs at its default 0.9" in said[0]


@pytest.mark.parametrize(("version", "key"), [
    ("0.19.0", "disable_overlap_scheduler"), ("0.20.0", "disable_overlap_scheduler"),
    ("0.20.0", "pytorch_backend_config.enable_overlap_scheduler"), ("0.21.0", MID), ("1.2.1", MID),
])  # fmt: skip
def test_another_release_s_overlap_key_is_refused_naming_it(capsys, version: str, key: str) -> None:
    """Three spellings by release (PR #4174 at 0.20.0rc3, PR #4603 at 0.21.0rc0): a key the release does not read
    would plan the scheduler's default without a word, so it is refused, naming it and the release's own."""
    args = ["plan", "--no-calibration-store", *_LLAMA_019, f"--{key}", "true"]
    args[args.index("0.19.0")] = version
    assert main(args) != 0
    err = capsys.readouterr().err
    assert f"--{key}: TensorRT-LLM {version} reads the overlap scheduler as " in err


def test_the_0_20_yaml_writes_the_key_under_pytorch_backend_config(capsys) -> None:
    """At 0.20.0 the copied YAML holds `pytorch_backend_config: {disable_overlap_scheduler: true}`, the spelling that
    release reads, not the later top-level key."""
    args = list(_LLAMA_019)
    args[args.index("0.19.0")] = "0.20.0"
    out = plan_json(capsys, tuple(args), f"--{MID}")
    assert out["engine_config"]["yaml"] == {"pytorch_backend_config": {"disable_overlap_scheduler": True}}


@pytest.mark.parametrize(("release", "refused"), [("0.19.0", False), ("0.20.0rc0", True), ("1.0.0", True)])
def test_the_tensorrt_refusal_reads_the_release_the_budget_resolved(release: str, refused: bool) -> None:
    """Final reader 2, MEDIUM 5: the refusal reads the release the budget resolved (a log's date, say), not only a
    typed --engine-version: PR #3823's split (0.20.0rc0, TENSORRT_REFUSES_ERAS) refuses the key, before it it is
    left unread. The launch here states no release."""
    from kvtop.domain.engines.trtllm.overlap_scheduler import refuse_on_tensorrt
    from kvtop.domain.engines.versions import ResolvedVersion
    from kvtop.domain.errors import InputError
    from kvtop.domain.launch import parse_flags

    settings = parse_flags("trtllm", ["--backend", "tensorrt", "--disable_overlap_scheduler"])
    assert settings.engine_version is None
    if refused:
        with pytest.raises(InputError, match="the TensorRT backend takes no overlap-scheduler key"):
            refuse_on_tensorrt(settings, ResolvedVersion(text=release))
    else:
        refuse_on_tensorrt(settings, ResolvedVersion(text=release))


@pytest.mark.parametrize(("release", "on"), [("0.20.0rc2", False), ("0.20.0rc3", True), ("0.21.0", True), (None, True)])
def test_the_overlap_default_is_the_keys_false(release: str | None, on: bool) -> None:
    """PR #4174 (0.20.0rc3): `enable_overlap_scheduler` False (off) before, `disable_overlap_scheduler` False (on)
    after — the default read off KEY_ERAS alone (final reader 2, MEDIUM 6: no second table of the same boundary)."""
    from kvtop.domain.engines.trtllm.overlap_scheduler import overlap_on
    from kvtop.domain.engines.versions import ResolvedVersion
    from kvtop.domain.launch import parse_flags

    assert overlap_on(parse_flags("trtllm", ["--backend", "pytorch"]), ResolvedVersion(text=release)) is on
