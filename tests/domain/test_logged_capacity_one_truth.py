"""One answer to "what capacity did this log state", for every engine and every real log in tests/data.

`kvtop explain LOG` reports `Explanation.logged.token_capacity`; `--engine-log LOG` attaches
`kvtop.domain.logged_capacity.logged_token_capacity(log, ledger)` (the live engine's predicted ledger, else the
log alone). Both must be one figure, read by one function per engine. Before this test they were not: a TensorRT-LLM
log printing only `Number of blocks in KV cache primary pool: B` and every V0 vLLM log printing `# GPU blocks: N`
stated a capacity to explain and none to `--engine-log`. Spot values are quoted from the log lines beside them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.commands.explain import _decisions, settings_typed_for_log
from kvtop.commands.node_source import DemoSource
from kvtop.domain.capacity import CapacitySource
from kvtop.domain.engine_log import EngineLog
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import ResolvedVersion, from_flag
from kvtop.domain.errors import KvtopError, UnsupportedModelError
from kvtop.domain.explain import explain, explain_unsolved
from kvtop.domain.explain_request import ExplainRequest
from kvtop.domain.explanation import PLACEHOLDER_GPU_BYTES
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.logged_capacity import logged_token_capacity
from kvtop.domain.model import ModelSpec
from kvtop.sources.engine_logs import read_engine_log
from kvtop.sources.hub import load_model
from kvtop.sources.scenario import scenario_dir
from tests.conftest import CASES, CONFIGS, DATA

STAND_IN = "llama-3.1-8b"  # a case without a config in tests/data runs with this preset, as test_explain_cases does
LOGS = sorted(CASES.glob("*/*/engine.log")) + sorted((DATA / "served_model").glob("*.log"))


def _model_ref(log_path: Path) -> str:
    """The case's config (case.json's `config`, else a config.json beside the log), else the stand-in preset."""
    beside = log_path.parent / "config.json"
    case_file = log_path.parent / "case.json"
    config = (json.loads(case_file.read_text()).get("config") or "").split(" ")[0] if case_file.is_file() else ""
    if config and (CONFIGS / config).is_file():
        return str(CONFIGS / config)
    return str(beside) if beside.is_file() else STAND_IN


def _engine(log_path: Path) -> str:
    return log_path.parent.parent.name if log_path.parent.parent.parent == CASES else "vllm"


def _cli_settings(log_path: Path, *flags: str) -> tuple[EngineLog, LaunchSettings, ResolvedVersion]:
    """(log, settings, version) as `kvtop explain LOG --model M --engine E [flags]` derives them."""
    log = read_engine_log(log_path)
    engine = log.engine_for(_engine(log_path))
    args = {**log.server_args, **log.engine_config, **_decisions(log.decisions)}
    settings = settings_typed_for_log(args, engine, list(flags), _model_ref(log_path), log.launch_command)[0]
    rules = engine_rules(engine)
    if settings.engine_version is not None:
        version = from_flag(settings.engine_version, rules.calendar)
    else:
        version = rules.resolve_version(log)
        settings = settings.model_copy(update={"engine_version": version.text})
    return log, settings, version


def _both(log_path: Path, *flags: str) -> tuple[int | None, int | None]:
    """(explain's logged capacity, the one `--engine-log` attaches to the engine that ran this launch): the live
    engine's ledger is predicted for the same settings, on the GPU explain read off the log; one that cannot be
    predicted is a refusal string, as the node's predictor gives."""
    log, settings, version = _cli_settings(log_path, *flags)
    model: ModelSpec | None = None
    try:
        model = load_model(settings.model or STAND_IN)
    except UnsupportedModelError as error:
        explained = explain_unsolved(log, settings, str(error), version)
    if model is not None:
        request = ExplainRequest(log=log, model=model, settings=settings, version=version)
        explained = explain(request)
    ledger: Ledger | str = "not predicted"
    if model is not None:
        gpu_name = explained.ledger.gpu_name if explained.ledger is not None else None
        try:
            ledger = predict(model, settings, gpu_total_bytes=PLACEHOLDER_GPU_BYTES, gpu_name=gpu_name)
        except KvtopError as error:
            ledger = str(error)
    return explained.logged.token_capacity, logged_token_capacity(log, ledger)


@pytest.mark.parametrize("log_path", LOGS, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}")
def test_explain_and_engine_log_state_one_capacity(log_path: Path) -> None:
    if _engine(log_path) == "sglang" and log_path.parent.name == "C06":
        pytest.skip("C06 holds no SGLang startup line kvtop reads (explain refuses it: nothing to compare)")
    explained, attached = _both(log_path)
    assert explained == attached


@pytest.mark.parametrize("log_path", LOGS, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}")
def test_the_log_alone_states_what_explain_reads_without_a_model(log_path: Path) -> None:
    """No ledger (the live engine's model not predicted): the log alone, as explain reads it without a model."""
    if _engine(log_path) == "sglang" and log_path.parent.name == "C06":
        pytest.skip("C06 holds no SGLang startup line kvtop reads")
    log, settings, version = _cli_settings(log_path)
    unsolved = explain_unsolved(log, settings, "not modelled", version)
    assert logged_token_capacity(log) == unsolved.logged.token_capacity


@pytest.mark.parametrize(
    ("case", "flags", "expected"),
    [
        # "Number of blocks in KV cache primary pool: 631" on 0.13.0.dev2024082000, whose TensorRT engine build
        # takes 64 tokens per block (#2268's worked check): 631 × 64 = 40,384 (was: none to --engine-log)
        ("trtllm/trtllm-2268-qwen15-7b-primary-pool", ("--engine-version", "0.13.0.dev2024082000"), 40_384),
        # "GPU blocks: 1952, # CPU blocks: 2048" (V0, Llama-3.1-8B, 16-token blocks): 1,952 × 16 = 31,232 (was: none)
        ("vllm/vllm-10517-llama31-8b-3090-v0", (), 31_232),
        # "Using Triton MLA backend." on an NVIDIA A100-SXM4-40GB, then "# cuda blocks: 5302, # CPU blocks: 7767":
        # TRITON_MLA's 16-token blocks, 5,302 × 16 = 84,832 (was: none)
        ("vllm/lws-v083-deepseek-v25-pp2-tp8-a100-40g", (), 84_832),
        # "# GPU blocks: 80, …" then "… stored in KV cache (1280)": 80 × 16 = 1,280 (was: none)
        ("vllm/vllm-11230-qwen25-72b-gptq-v064-refusal", (), 1_280),
        # "# cuda blocks: 0": a pool of 0 tokens (was: none)
        ("vllm/vllm-13882-qwen2.5-7b-rtx4060-v0-negative", (), 0),
        # TP 4 × PP 2 workers print "GPU KV cache size: 6,654,432 tokens" ×4, then 6,167,568 and 6,167,536 ×3:
        # the engine core takes the least of the eight
        ("vllm/isambard-v0101dev-qwen3-30b-a3b-pp2-tp4-gh200", (), 6_167_536),
        # "max cached tokens: 42880" (LMDeploy v0.12+'s own token figure)
        ("lmdeploy/lmdeploy-4367-glm47-flash-max-cached-tokens", (), 42_880),
        # "Allocated … for max tokens in paged KV cache (259840)"
        ("trtllm/trtllm-docs-memory-md-4060-blocks", (), 259_840),
    ],
)
def test_spot_values_from_the_log_lines(case: str, flags: tuple[str, ...], expected: int) -> None:
    assert _both(CASES / case / "engine.log", *flags) == (expected, expected)


def test_a_v0_block_count_needs_a_block_to_be_tokens() -> None:
    # "GPU blocks: 1952, # CPU blocks: 2048" and no block size printed, no ledger: the log alone states blocks, not tokens
    log = read_engine_log(CASES / "vllm/vllm-10517-llama31-8b-3090-v0/engine.log")
    assert logged_token_capacity(log) is None
    assert logged_token_capacity(log, "the model could not be predicted") is None


def test_engine_log_attaches_a_v0_block_count_to_the_running_engine(tmp_path: Path) -> None:
    """`--engine-log` end to end on the vLLM demo node (its endpoints unreachable, so the log's figure is the one
    the ranks show): "GPU blocks: 1952, # CPU blocks: 2048" × the 16-token blocks vLLM takes for the node's
    Llama-3-70B = 31,232 tokens, as explain reads it (was: "states no token capacity", the predicted figure shown)."""
    scenario = json.loads((scenario_dir() / "llama70b-pp2-vllm-node0.json").read_text())
    for engine in scenario["engines"]:
        engine["endpoint"] = "unreachable"
    path = tmp_path / "vllm-no-endpoint.json"
    path.write_text(json.dumps(scenario))
    log = CASES / "vllm/vllm-10517-llama31-8b-3090-v0/engine.log"
    snapshot = DemoSource.open(str(path), engine_log=log).collect_at(0)
    (view,) = snapshot.engines
    assert {(r.capacity.actual_tokens, r.capacity.actual_source) for r in view.ranks if r.capacity} == {
        (1_952 * 16, CapacitySource.LOGGED)
    }
    assert snapshot.notice is None
