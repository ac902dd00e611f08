"""What each vLLM model runner refuses of a launch, by release, and the runner a log says ran
(kvtop/domain/engines/vllm/runner_refusals.py, docs/engines/vllm.md §3).

Expected outcomes are vLLM's code, read in the wheels: `_get_v1_model_runner_unsupported_features` (first in v0.29.0,
config/vllm.py:2614-2645) appends "dspark speculative decoding" (:2622-2624) and "adaptive draft verification"
(:2625-2626), which `_validate_v1_model_runner` (:2735-2740) raises wherever V1 runs (:1653-1656); v0.25.0-v0.28.x
force V2 for dspark only when VLLM_USE_V2_MODEL_RUNNER is unset (:524-532 at v0.25.0), and a `=0` launch builds V1's
EagleProposer for it (v1/worker/gpu_model_runner.py:623-624); `_get_v2_model_runner_unsupported_features` appends
"stock torch.compile" at v0.22.0-v0.31.x (v0.29.0 :2545-2546; none at v0.32.0 :2914-2954) and "reasoning budget
enforcement" at v0.22.0 only (:2014-2017, `reasoning_config`, set by --reasoning-parser: engine/arg_utils.py:2435-2440),
which `use_v2_model_runner` falls back from ('…; using the V1 model runner instead.', v0.29.0 :668-676). The log is
a public start's (the T4 Qwen2.5-1.5B start at v0.30.0, eslam-ahmed43/llm-lab logs/vllm_server.log at 0f01b470:
'[gpu_worker.py:441] Using V2 Model Runner', test_compile_cache.py), and v0.23.0's fallback warning in its words
(config/vllm.py:535-539 at v0.23.0).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.cli import main
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.batching_async import refuse_explicit_async
from kvtop.domain.engines.vllm.runner_eras import RUNNER_ENV, runner_env_note, runs_v2
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.launch import LaunchSettings, engine_flags, parse_flags
from kvtop.sources.engine_logs import parse_engine_log
from kvtop.sources.hub import load_model
from tests.data_paths import CONFIGS, DATA
from tests.engines.vllm.test_compile_cache import CONFIG, T4_START

QWEN3_8B = load_model(str(CONFIGS / "Qwen--Qwen3-8B.json"))  # Qwen3ForCausalLM: a listed V2 class from v0.22.0
DSPARK = ("--speculative-config", '{"method": "dspark", "model": "z-lab/Qwen3-8B-DSpark", "num_speculative_tokens": 4}')
ADAPTIVE = ("--speculative-config", '{"method": "eagle3", "model": "x/eagle3", "num_speculative_tokens": 3, '
                                    '"enable_adaptive_verification": true}')  # fmt: skip
STOCK = ("--compilation-config", '{"mode": 1}')  # CompilationMode.STOCK_TORCH_COMPILE
V1_FALLBACK = ("Model Runner V2 does not yet support stock torch.compile; using the V1 model runner instead.")


def _settings(release: str, *flags: str, env: str | None = None) -> LaunchSettings:
    settings = parse_flags("vllm", [*flags, "--engine-version", release])
    return settings if env is None else settings.model_copy(update={"flags": {**settings.flags, RUNNER_ENV: env}})


def _v2(release: str, *flags: str, env: str | None = None) -> bool:
    return runs_v2(ResolvedVersion(text=release), QWEN3_8B, _settings(release, *flags, env=env))


@pytest.mark.parametrize("release", ["0.29.0", "0.30.0", "0.33.0"])
def test_v1_forced_on_a_dspark_draft_is_refused_in_vllms_words(release: str) -> None:
    with pytest.raises(InputError, match="'Model Runner V1 does not support: …' — dspark speculative decoding") as err:
        _v2(release, *DSPARK, env="0")
    assert err.value.field == RUNNER_ENV
    assert _v2(release, *DSPARK) is True  # unset: V2 runs it


@pytest.mark.parametrize("release", ["0.25.0", "0.28.0"])
def test_v1_forced_on_a_dspark_draft_before_v0_29_0_is_named_not_modelled(release: str) -> None:
    with pytest.raises(UnsupportedModelError, match="EagleProposer"):
        _v2(release, *DSPARK, env="0")


def test_v1_forced_with_adaptive_verification_is_refused_from_v0_30_0() -> None:
    """v0.30.0 config/vllm.py _get_v1_model_runner_unsupported_features: 'adaptive draft verification' (an eagle3
    draft takes it from v0.30.0: config/speculative.py:1564-1573)."""
    with pytest.raises(InputError, match="adaptive draft verification"):
        _v2("0.30.0", *ADAPTIVE, env="0")
    assert _v2("0.30.0", *ADAPTIVE) is True  # unset: V2 runs it


@pytest.mark.parametrize("release", ["0.28.0", "0.29.0"])
def test_adaptive_verification_without_dspark_is_refused_at_v0_28_and_v0_29(release: str) -> None:
    """config/speculative.py:1141-1142 at v0.28.0, :1507-1508 at v0.29.0: `self.method != "dspark" and
    self.enable_adaptive_verification` raises 'Adaptive verification only supported with DSpark', whatever the
    runner; v0.27.0 has no such field (its @config dataclass forbids extra fields)."""
    with pytest.raises(InputError, match="'Adaptive verification only supported with DSpark'"):
        _v2(release, *ADAPTIVE)
    with pytest.raises(InputError, match="no field enable_adaptive_verification"):
        _v2("0.27.0", *ADAPTIVE)
    dspark = ("--speculative-config", DSPARK[1][:-1] + ', "enable_adaptive_verification": true}')
    assert _v2(release, *dspark) is True  # dspark takes it, on V2


def test_stock_torch_compile_falls_back_to_v1_where_v2_lacks_it_and_is_refused_when_forced() -> None:
    assert _v2("0.29.0") is True
    assert _v2("0.29.0", *STOCK) is False  # the fallback
    assert _v2("0.32.0", *STOCK) is True  # V2 runs it from v0.32.0
    with pytest.raises(InputError, match="stock torch.compile"):
        _v2("0.29.0", *STOCK, env="1")


def test_a_fallback_to_v1_that_v1_refuses_is_refused() -> None:
    """v0.29.0: stock torch.compile sends a dspark launch to V1, whose validation refuses dspark; v0.26.0 forces V2
    for dspark before any test, whose validation refuses stock torch.compile."""
    with pytest.raises(InputError, match="V1 model runner.*dspark speculative decoding"):
        _v2("0.29.0", *STOCK, *DSPARK)
    with pytest.raises(InputError, match="dspark draft on its V2 model runner only.*stock torch.compile"):
        _v2("0.26.0", *STOCK, *DSPARK)


def test_a_reasoning_parser_keeps_v0_22_0s_listed_class_on_v1() -> None:
    assert _v2("0.22.0") is True
    assert _v2("0.22.0", "--reasoning-parser", "qwen3") is False
    assert _v2("0.23.0", "--reasoning-parser", "qwen3") is True  # a warning only from v0.23.0
    assert "--reasoning-parser" not in engine_flags("vllm").memory_neutral  # it moves the runner at v0.22.x


def test_explicit_async_scheduling_at_pp_2_on_v1_is_refused_from_v0_31_0() -> None:
    """config/vllm.py:3117-3124 at v0.31.0: 'pipeline parallelism with async scheduling' under V1; v0.30.0 has no
    such check (:2883-2912)."""
    flags = ("--async-scheduling", "--pipeline-parallel-size", "2")
    with pytest.raises(InputError, match="pipeline parallel size 2"):
        refuse_explicit_async(_settings("0.31.0", *flags, env="0"), ResolvedVersion(text="0.31.0"), QWEN3_8B)
    refuse_explicit_async(_settings("0.30.0", *flags, env="0"), ResolvedVersion(text="0.30.0"), QWEN3_8B)
    refuse_explicit_async(_settings("0.31.0", *flags), ResolvedVersion(text="0.31.0"), QWEN3_8B)  # V2: kept


def test_the_logs_runner_line_is_kept() -> None:
    assert parse_engine_log(T4_START).decisions == ("logged_runner=v2",)
    fallback = T4_START.replace("Using V2 Model Runner", V1_FALLBACK)
    assert parse_engine_log(fallback).decisions == ("logged_runner=v1",)


def _explain_notes(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    log = tmp_path / "start.log"
    log.write_text(text)
    args = ["explain", str(log), "--model", str(CONFIG), "--no-calibration-store", "--json", "--engine-version", "0.30.0"]
    assert main(args) == 0
    return [str(note) for note in json.loads(capsys.readouterr().out)["notes"]]


def test_explain_charges_the_runner_the_log_says(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """v0.30.0 runs a dense Qwen2.5 on V2 (config/vllm.py:675 use_v2_model_runner); the log's fallback warning says
    V1 ran, and explain's compile note then charges the V1 runner's compile, not V2's. The V1 log is synthetic: the T4
    start's own lines with its V2 line swapped for a fallback warning (no real V1 start of this launch is held)."""
    said_v2 = _explain_notes(T4_START, tmp_path, capsys)
    assert any(n.startswith("the V2 model runner, measured: the log says 'Using V2 Model Runner'") for n in said_v2)
    said_v1 = _explain_notes(T4_START.replace("Using V2 Model Runner", V1_FALLBACK), tmp_path, capsys)
    assert any(n.startswith("the V1 model runner, measured") and "own pick for this launch (V2)" in n for n in said_v1)
    compile_v2 = [n for n in said_v2 if n.startswith("torch.compile's cache")]
    compile_v1 = [n for n in said_v1 if n.startswith("torch.compile's cache")]
    assert len(compile_v2) == 1 and "where vLLM's V2 runner runs the profile loads the compiled graphs" in compile_v2[0]
    assert len(compile_v1) == 1 and "on vLLM's V1 runner the plan charges nothing for the compile" in compile_v1[0]


def test_a_logged_v2_runner_before_v0_22_0_is_not_modelled() -> None:
    settings = _settings("0.21.0").model_copy(update={"logged_runner": "v2"})
    with pytest.raises(UnsupportedModelError, match="experimental V2 model runner"):
        runs_v2(ResolvedVersion(text="0.21.0"), QWEN3_8B, settings)


def test_forced_v2_refusal_quotes_each_releases_words() -> None:
    """v0.22.0 config/vllm.py:2064-2067 'VLLM_USE_V2_MODEL_RUNNER does not yet support: …'; from v0.23.0
    :2068-2071 'Model Runner V2 does not yet support: …'."""
    with pytest.raises(InputError, match="'VLLM_USE_V2_MODEL_RUNNER does not yet support: …'"):
        _v2("0.22.0", *STOCK, env="1")
    with pytest.raises(InputError, match="'Model Runner V2 does not yet support: …'"):
        _v2("0.29.0", *STOCK, env="1")


def test_the_plan_notes_the_fallback_to_v1() -> None:
    def note(release: str, *flags: str) -> str | None:
        return runner_env_note(ResolvedVersion(text=release), QWEN3_8B, _settings(release, *flags))

    said = note("0.29.0", *STOCK)
    assert said is not None and "'Model Runner V2 does not yet support %s; using the V1 model runner instead.' " \
        "(config/vllm.py:535-539 at v0.23.0) with %s: stock torch.compile (config/vllm.py:" in said
    old = note("0.22.0", "--reasoning-parser", "qwen3")  # v0.22.x's own words (config/vllm.py:507-512)
    assert old is not None and "'Model runner v2 does not yet support %s; using the v1 model runner instead.'" in old
    assert note("0.29.0") is None
    assert note("0.32.0", *STOCK) is None  # V2 runs it


LLAMA_70B = load_model(str(DATA / "calibration" / "configs" / "RedHatAI--Meta-Llama-3.1-70B-Instruct-FP8.RECONSTRUCTED.json"))


def test_sequence_parallelism_keeps_v1_only_where_vllm_keeps_it_on() -> None:
    """config/vllm.py:2548-2552 at v0.29.0: `pass_config.enable_sp and tensor_parallel_size > 1` (v0.31.0
    :3059-3063; no such test at v0.32.0 :2914-2954) — after __post_init__ (:1491-1512 at v0.29.0) turns SP off where
    sp_min_token_num is unstated and get_sequence_parallelism_threshold gives None: any hidden size below 8,192
    (compilation/passes/fusion/sequence_parallelism.py:40-43, :96-97 at v0.22.0). Qwen3-8B's hidden size is 4,096."""
    sp = ("--compilation-config", '{"pass_config": {"enable_sp": true}}')
    stated = ("--compilation-config", '{"pass_config": {"enable_sp": true, "sp_min_token_num": 512}}')
    tp2 = ("--tensor-parallel-size", "2")
    assert QWEN3_8B.hidden_size == 4096 and LLAMA_70B.hidden_size == 8192
    assert _v2("0.29.0", *sp, *tp2) is True  # SP off: V2 runs
    assert _v2("0.29.0", *stated, *tp2) is False  # SP kept: V1
    assert _v2("0.31.0", *stated, *tp2) is False  # the era's last release
    assert _v2("0.32.0", *stated, *tp2) is True
    assert _v2("0.29.0", *stated) is True  # TP 1: vLLM turns SP off (:1487-1489), V2 runs
    at = ResolvedVersion(text="0.29.0")
    with pytest.raises(UnsupportedModelError, match="sm90 / sm10x"):  # hidden 8,192: the GPU decides
        runs_v2(at, LLAMA_70B, _settings("0.29.0", *sp, "--tensor-parallel-size", "4"))
    assert runs_v2(at, LLAMA_70B, _settings("0.29.0", *stated, "--tensor-parallel-size", "4")) is False


def test_enforce_eager_makes_a_stated_stock_compile_none() -> None:
    """config/vllm.py:1370-1376 at v0.29.0 (:1694-1696 at v0.31.0): enforce_eager sets the mode to NONE before the
    runner is validated, so V2 runs; the stock mode's era ends at v0.31.x (:3056-3057)."""
    assert _v2("0.29.0", *STOCK, "--enforce-eager") is True
    assert _v2("0.31.0", *STOCK) is False


QWEN3_30B_A3B = load_model(str(CONFIGS / "Qwen--Qwen3-30B-A3B.json"))  # Qwen3MoeForCausalLM: not a listed V2 class
DFLASH = ("--speculative-config", '{"method": "dflash", "model": "x/draft", "num_speculative_tokens": 8}')


def _drafted(release: str, arch: str, env: str | None = None) -> LaunchSettings:
    return _settings(release, *DFLASH, env=env).model_copy(update={"draft_architectures": (arch,)})


def test_a_candidate_head_dflash_draft_on_v1_is_refused_by_release() -> None:
    """v0.29.0 config/vllm.py:2635-2636 'dflash2 drafts' (DFlash2DraftModel); v0.31.0 :3140-3141 'DFlash
    candidate-head drafts' (DFlash2DraftModel or LiLiCorrDraftModel, :763-776)."""
    at = ResolvedVersion
    with pytest.raises(InputError, match="does not support: …' — dflash2 drafts"):
        runs_v2(at(text="0.29.0"), QWEN3_8B, _drafted("0.29.0", "DFlash2DraftModel", env="0"))
    assert runs_v2(at(text="0.29.0"), QWEN3_8B, _drafted("0.29.0", "LiLiCorrDraftModel", env="0")) is False
    with pytest.raises(InputError, match="does not support: …' — DFlash candidate-head drafts"):
        runs_v2(at(text="0.31.0"), QWEN3_8B, _drafted("0.31.0", "LiLiCorrDraftModel", env="0"))
    # v0.30.0 still tests dflash2 alone (:2904-2905): a LiLiCorr draft runs on V1
    assert runs_v2(at(text="0.30.0"), QWEN3_8B, _drafted("0.30.0", "LiLiCorrDraftModel", env="0")) is False
    with pytest.raises(InputError, match="dflash2 drafts"):
        runs_v2(at(text="0.30.0"), QWEN3_8B, _drafted("0.30.0", "DFlash2DraftModel", env="0"))


def test_a_heterogeneous_vocabulary_draft_keeps_v1_at_v0_32_and_v0_33() -> None:
    """config/vllm.py:2947-2948 at v0.32.0, :3081-3082 at v0.33.0: 'heterogeneous-vocabulary draft models' in V2's
    unsupported list; v0.31.0 runs draft_model on V2 (:3075-3084) and has no such test."""
    hetero = ("--speculative-config", '{"method": "draft_model", "model": "x/draft", "num_speculative_tokens": 4, '
                                      '"use_heterogeneous_vocab": true, "draft_sample_method": "greedy"}')  # fmt: skip
    same = ("--speculative-config", '{"method": "draft_model", "model": "x/draft", "num_speculative_tokens": 4}')
    assert _v2("0.33.0", *hetero) is False and _v2("0.32.0", *hetero) is False
    assert _v2("0.33.0", *same) is True
    assert _v2("0.31.0", *hetero) is True


def test_a_parse_mtp_draft_on_v1_is_refused_at_v0_33_0_only() -> None:
    """config/vllm.py:3121-3127 at v0.33.0: a ParseAuxMTPModel draft; v0.32.0 (:2955-2999) has no such test."""
    at = ResolvedVersion
    with pytest.raises(InputError, match="Parse 3.5 MTP"):
        runs_v2(at(text="0.33.0"), QWEN3_8B, _drafted("0.33.0", "ParseAuxMTPModel", env="0"))
    assert runs_v2(at(text="0.32.0"), QWEN3_8B, _drafted("0.32.0", "ParseAuxMTPModel", env="0")) is False


def test_a_dflash2_draft_forces_v2_at_v0_28_0_only() -> None:
    """config/vllm.py:639-643 at v0.28.0 returns V2 for a DFlash2 draft before the model test, which keeps an MoE of
    an unlisted class on V1 (:691-712); v0.27.0 has no such test."""
    at = ResolvedVersion
    assert runs_v2(at(text="0.28.0"), QWEN3_30B_A3B, _drafted("0.28.0", "DFlash2DraftModel")) is True
    assert runs_v2(at(text="0.28.0"), QWEN3_30B_A3B, _drafted("0.28.0", "DFlashDraftModel")) is False
    assert runs_v2(at(text="0.27.0"), QWEN3_30B_A3B, _drafted("0.27.0", "DFlash2DraftModel")) is False


YUANJUJU_NGRAM = ("--enforce-eager", "--speculative-config",
                  '{"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_min": 1, "prompt_lookup_max": 4}')
# the yuanjuju 0.29.0 n-gram start's own warning (tests/data/calibration/vllm.jsonl, its note; SOURCES.md)
YUANJUJU_LINE = ("Model Runner V2 does not yet support ngram/ngram_gpu speculative decoding; using the V1 model runner "
                 "instead.")


def test_a_speculative_fallback_is_noted_as_vllm_logs_it() -> None:
    """The yuanjuju 0.29.0 start (Qwen3-8B, ngram k 4) logged the fallback: the plan runs V1 and says so, from the
    one answer the pick reads (runner_refusals.fallback_reason); its line parses as V1 ran."""
    at = ResolvedVersion(text="0.29.0")
    settings = _settings("0.29.0", *YUANJUJU_NGRAM)
    assert runs_v2(at, QWEN3_8B, settings) is False
    said = runner_env_note(at, QWEN3_8B, settings)
    assert said is not None and said.startswith("the V1 model runner: vLLM 0.29.0 would run V2") and "ngram" in said
    lines = T4_START.splitlines()
    logged = "\n".join([lines[0], f"(APIServer pid=1) WARNING 10-09 10:00:00 [vllm.py:717] {YUANJUJU_LINE}", *lines[2:]])
    assert "Using V2 Model Runner" not in logged
    assert parse_engine_log(logged).decisions == ("logged_runner=v1",)


def test_a_typed_model_runner_flag_is_no_measured_runner() -> None:
    """`--model-runner` is no vLLM flag: typed, it sets nothing (the runner a log says is explain's alone)."""
    settings = _settings("0.29.0", "--model-runner", "v1")
    assert settings.logged_runner is None
    assert runs_v2(ResolvedVersion(text="0.29.0"), QWEN3_8B, settings) is True


def test_the_workers_v2_line_wins_over_an_earlier_fallback_warning() -> None:
    """The API server may log the fallback warning while the config settles; the worker logs 'Using V2 Model
    Runner' only where it builds V2 (v1/worker/gpu_worker.py:441 at v0.30.0)."""
    lines = T4_START.splitlines()
    warned = "\n".join([lines[0], f"(APIServer pid=670) WARNING 10-01 22:40:56 [vllm.py:717] {V1_FALLBACK}", *lines[1:]])
    assert parse_engine_log(warned).decisions == ("logged_runner=v2",)


def test_a_logged_v1_runner_at_v0_34_0_is_refused() -> None:
    settings = _settings("0.34.0").model_copy(update={"logged_runner": "v1"})
    with pytest.raises(InputError, match="no longer has"):
        runs_v2(ResolvedVersion(text="0.34.0"), QWEN3_8B, settings)


def test_pipeline_parallelism_under_external_launcher_keeps_v1_from_v0_24_0() -> None:
    """config/vllm.py:2020-2025 at v0.24.0 (:3059-3064 at v0.33.0): 'pipeline parallelism with external_launcher';
    v0.23.0 has no such test (:1982-2061)."""
    launcher = ("--distributed-executor-backend", "external_launcher")
    assert _v2("0.24.0", *launcher, "--pipeline-parallel-size", "2") is False
    assert _v2("0.33.0", *launcher, "--pipeline-parallel-size", "2") is False
    assert _v2("0.33.0", *launcher) is True  # PP 1
    assert _v2("0.23.0", *launcher, "--pipeline-parallel-size", "2") is True
