"""Where vLLM turns its default async scheduling off (batching_async.py). Expected values are vLLM's own branches in
`VllmConfig.__post_init__`, read in each wheel's config/vllm.py: PP > 1 at v0.14.0 (:590-596), gone at v0.15.0
(:589-622); a speculative method not EAGLE-type (:597-607 at v0.14.0), ngram_gpu kept from v0.18.0 (:720-724),
draft_model from v0.28.0; disable_padded_drafter_batch (:608-617 at v0.14.0); an executor other than mp / uni /
external_launcher (:556-560, :618-626 at v0.14.0); a pooling model from v0.20.0 (:800-809); an explicit
--async-scheduling at PP > 1 raises at v0.14.0 (:563-567) and not at v0.15.0."""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.batching_async import async_scheduling
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.launch import check_parallel, parse_flags
from kvtop.domain.launch_line import with_environment
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from tests.data_paths import CONFIGS, DATA


def load(name: str) -> ModelSpec:
    return model_from_config(json.loads((CONFIGS / name).read_text()), source=name)


QWEN3_30B = load("Qwen--Qwen3-30B-A3B.json")
LLAMA8B = load("meta-llama--Llama-3.1-8B-Instruct.json")


def spec(method: str, **more: object) -> list[str]:
    return ["--speculative-config", json.dumps({"method": method, "num_speculative_tokens": 2, **more})]


def runs(flags: list[str], version: str, model: ModelSpec = QWEN3_30B) -> bool:
    return async_scheduling(parse_flags("vllm", flags, strict=True), ResolvedVersion(text=version), model)[0]


@pytest.mark.parametrize(("flags", "version", "model", "on"), [
    (["--pp", "2"], "0.13.0", QWEN3_30B, False),  # off by default before v0.14.0
    (["--pp", "2"], "0.14.0", QWEN3_30B, False),  # :590-596 'not yet supported with pipeline_parallel_size > 1'
    (["--pp", "2"], "0.14.1", QWEN3_30B, False),
    (["--pp", "2"], "0.15.0", QWEN3_30B, True),  # the PP check gone
    (["--pp", "2"], "0.24.0", LLAMA8B, True),
    (spec("ngram"), "0.14.0", LLAMA8B, False),  # not EagleModelTypes
    (spec("eagle3"), "0.14.0", LLAMA8B, True),
    (spec("deepseek_mtp"), "0.14.0", LLAMA8B, True),  # MTPModelTypes are EAGLE-type
    (spec("ngram_gpu"), "0.17.1", LLAMA8B, False),
    (spec("ngram_gpu"), "0.18.0", LLAMA8B, True),  # NgramGPUTypes kept
    (spec("draft_model", model="meta-llama/Llama-3.2-1B"), "0.27.1", LLAMA8B, False),
    (spec("draft_model", model="meta-llama/Llama-3.2-1B"), "0.28.0", LLAMA8B, True),
    (spec("eagle3", disable_padded_drafter_batch=True), "0.14.0", LLAMA8B, False),
    (["--distributed-executor-backend", "ray"], "0.14.0", LLAMA8B, False),  # not mp / uni / external_launcher
    (["--distributed-executor-backend", "mp"], "0.18.0", LLAMA8B, True),
    (["--runner", "pooling"], "0.19.1", LLAMA8B, True),
    (["--runner", "pooling"], "0.20.0", LLAMA8B, False),  # runner_type == "pooling"
])  # fmt: skip
def test_the_default_by_release(flags: list[str], version: str, model: ModelSpec, on: bool) -> None:
    assert runs(flags, version, model) is on


def test_from_v0330_the_v2_model_runner_keeps_it_with_any_speculative_method() -> None:
    """v0.33.0's v1_async_sched_incompat is the V1 model runner's alone (config/vllm.py:1651-1665), and every model
    runs the V2 runner there (runner_eras.runs_v2): ngram keeps async scheduling on, where v0.32.0 turned it off (:1597-1610)."""
    assert runs(spec("ngram"), "0.33.0", LLAMA8B) is True
    assert runs(spec("ngram"), "0.32.0", LLAMA8B) is False


def test_the_flags_win_and_vllm_refuses_explicit_async_at_pp2_where_it_raises() -> None:
    assert runs(["--no-async-scheduling"], "0.20.0") is False
    with pytest.raises(InputError, match="refuses --async-scheduling at pipeline parallel size 2"):
        runs(["--async-scheduling", "--pp", "2"], "0.14.0")
    assert runs(["--async-scheduling", "--pp", "2"], "0.15.0") is True


@pytest.mark.parametrize("version", ["0.10.0", "0.10.2", "0.11.0"])
def test_before_v0111_engine_args_refuse_explicit_async_at_pp2(version: str) -> None:
    """Before VllmConfig checked it (v0.11.1), EngineArgs.create_engine_config raised: 'Async scheduling is not
    supported with pipeline-parallel-size > 1.' (engine/arg_utils.py:1144-1146 in the v0.10.0 wheel, :1291-1293 in
    v0.10.2's, :1295-1297 in v0.11.0's)."""
    with pytest.raises(InputError, match="refuses --async-scheduling at pipeline parallel size 2"):
        runs(["--async-scheduling", "--pp", "2"], version)


@pytest.mark.parametrize("version", ["0.10.0", "0.11.0"])
def test_before_v0111_explicit_async_refuses_any_speculative_config(version: str) -> None:
    """EngineArgs.create_engine_config raised 'Currently, speculative decoding is not supported with async
    scheduling.' for any speculative_config (engine/arg_utils.py:1148-1153 in the v0.10.0 wheel, :1299-1304 in
    v0.11.0's), EAGLE-type too."""
    for method in ("ngram", "eagle3"):
        with pytest.raises(InputError, match="refuses --async-scheduling with --speculative-config"):
            runs(["--async-scheduling", *spec(method)], version, LLAMA8B)


@pytest.mark.parametrize("flag", ["--async-scheduling", "--no-async-scheduling"])
def test_before_v0100_there_is_no_such_flag(flag: str) -> None:
    """SchedulerConfig.async_scheduling first in v0.10.0 (engine/arg_utils.py:821 `--async-scheduling`, a
    BooleanOptionalAction); v0.9.2's arg_utils.py and config.py have none: argparse stops the launch."""
    with pytest.raises(InputError, match="vLLM 0.9.2 has no --async-scheduling") as err:
        check_parallel(parse_flags("vllm", [flag, "--engine-version", "0.9.2"], strict=True))
    assert err.value.field == flag
    check_parallel(parse_flags("vllm", [flag, "--engine-version", "0.10.0"], strict=True))


@pytest.mark.parametrize(("version", "on"), [
    ("0.19.0", False),  # ray_executor.py RayDistributedExecutor: Executor.supports_async_scheduling False
    ("0.20.1", False),  # VLLM_USE_RAY_V2_EXECUTOR_BACKEND defaults to 0 (envs.py): still RayDistributedExecutor
    ("0.21.0", True),  # its default 1: RayExecutorV2, a MultiprocExecutor (supports_async_scheduling True)
    ("0.29.0", True),
    ("0.33.0", True),  # abstract.py:77-79: RayExecutorV2 alone
])  # fmt: skip
def test_the_ray_executor_from_v0190_by_its_class(version: str, on: bool) -> None:
    """From v0.19.0 the executor class says (Executor.supports_async_scheduling, config/vllm.py:729 at v0.19.0), read
    in the v0.19.0, v0.20.1, v0.21.0, v0.29.0, v0.33.0 wheels."""
    assert runs(["--distributed-executor-backend", "ray"], version, LLAMA8B) is on


def ray_launch(env: str, version: str, *flags: str) -> bool:
    """The launch line `VLLM_USE_RAY_V2_EXECUTOR_BACKEND=env vllm serve … --distributed-executor-backend ray`."""
    settings = with_environment(parse_flags("vllm", ["--distributed-executor-backend", "ray", *flags], strict=True),
                                {"VLLM_USE_RAY_V2_EXECUTOR_BACKEND": env})
    return async_scheduling(settings, ResolvedVersion(text=version), LLAMA8B)[0]


@pytest.mark.parametrize(("env", "version", "on"), [
    ("1", "0.20.1", True),  # abstract.py:61-64 at v0.20.0: set, ray is RayExecutorV2 (supports_async_scheduling)
    ("0", "0.21.0", False),  # unset it defaults to 1 (envs.py); 0 keeps RayDistributedExecutor (Executor's False)
    ("0", "0.29.0", False),
    ("1", "0.19.1", False),  # no envs.py entry before v0.20.0: RayDistributedExecutor whatever the launch sets
    ("0", "0.33.0", True),  # v0.33.0 envs.py drops it: RayExecutorV2 alone (abstract.py:77-79)
])  # fmt: skip
def test_the_ray_v2_variable_picks_the_ray_executor_where_the_release_reads_it(env: str, version: str,
                                                                             on: bool) -> None:  # fmt: skip
    """envs.py VLLM_USE_RAY_V2_EXECUTOR_BACKEND, `bool(int(os.getenv(..., "0")))` at v0.20.0-v0.20.2, default "1" from
    v0.21.0 to v0.32.0 (wheels read), absent from v0.19.1's and v0.33.0's envs.py."""
    assert ray_launch(env, version) is on


def test_the_ray_v2_variable_decides_vllm_refusing_explicit_async() -> None:
    """config/vllm.py raises "`ray` does not support async scheduling yet." where the class says False: at v0.21.0
    with the variable 0; it takes it at v0.20.1 with the variable 1; a value int() rejects stops vLLM (envs.py)."""
    with pytest.raises(InputError, match="VLLM_USE_RAY_V2_EXECUTOR_BACKEND=0 in the launch"):
        ray_launch("0", "0.21.0", "--async-scheduling")
    assert ray_launch("1", "0.20.1", "--async-scheduling") is True
    with pytest.raises(InputError, match="whole number"):
        ray_launch("true", "0.21.0")


def test_an_executor_class_is_named_not_read() -> None:
    """A backend given as a class (`resolve_obj_by_qualname`): its supports_async_scheduling is not read."""
    with pytest.raises(UnsupportedModelError, match="executor class"):
        runs(["--distributed-executor-backend", "my_pkg.MyExecutor"], "0.21.0", LLAMA8B)


def test_vllm_refuses_explicit_async_under_an_executor_without_it() -> None:
    """config/vllm.py raises where async scheduling is asked under an executor that does not support it: by name at
    v0.14.0 (:582-586 'only supports `mp`, `uni`, or `external_launcher`'), by class at v0.19.0 (:751-754
    "`ray` does not support async scheduling yet."); RayExecutorV2 takes it from v0.21.0."""
    for version in ("0.14.0", "0.19.0", "0.20.1"):
        with pytest.raises(InputError, match="refuses --async-scheduling under the ray executor"):
            runs(["--async-scheduling", "--distributed-executor-backend", "ray"], version, LLAMA8B)
    assert runs(["--async-scheduling", "--distributed-executor-backend", "ray"], "0.21.0", LLAMA8B) is True


def test_vllm_0330_own_reading_in_every_flag_set_row() -> None:
    """vLLM 0.33.0's own `scheduler_config.async_scheduling` after VllmConfig (tests/data/engine_diff/
    vllm-0.33.0.flags.json, benchmarks/engine_diff/vllm_runner.py), PP 2 and 4 rows among them: kvtop reads the same."""
    rows = json.loads((DATA / "engine_diff" / "vllm-0.33.0.flags.json").read_text())["results"]
    read = [row for row in rows if row.get("async_scheduling") is not None]
    assert len(read) > 500 and any("--pipeline-parallel-size" in row["flags"] for row in read)
    for row in read:
        path = CONFIGS / f"{row['config']}.json"
        model = load(row["config"] + ".json") if path.exists() else model_from_config(
            json.loads((DATA / "engine_diff" / "configs" / f"{row['config']}.json").read_text()), source=row["config"])
        assert runs(row["flags"], "0.33.0", model) is row["async_scheduling"], (row["config"], row["flags"])
