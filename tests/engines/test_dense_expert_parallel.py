"""Expert parallelism on a model without routed experts, as each engine's release takes it (session 58, #27).

Expected outcomes from the engines' code, never from kvtop: SGLang 0.5.9's parallel_state.py (`_MOE_EP = _TP` at
ep == tp: no group of its own, so the plan is the plan without --ep-size) and 0.4.6.post5's expert_location.py (an
AssertionError over one dummy expert); vLLM's ModelConfig._verify_with_expert_parallelism (its ValueError's words);
TensorRT-LLM's Mapping (rank lists only); LMDeploy 0.12.2's DistConfig and cli/serve.py, TurboMind's
parallel_config.py and model classes in the 0.14.0–0.18.0 wheels. The launch is the one the
L20 report of sglang.jsonl record file52582238866 types (`--tp-size 2 --ep-size 2 --nnodes 2`), on its config.
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.errors import LayoutError
from kvtop.domain.launch import LaunchSettings, parse_flags
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA

L20_TOTAL = 46_068 * 2**20  # the 46,068 MiB L20 of the record
CONFIG = DATA / "calibration" / "configs" / "deepseek-ai--DeepSeek-R1-Distill-Qwen-1.5B.RECONSTRUCTED.json"


def _dense() -> ModelSpec:
    model = model_from_config(json.loads(CONFIG.read_text()), source=CONFIG.name)
    assert model.moe is None  # Qwen2ForCausalLM: no routed experts
    return model


def _plan(engine: str, flags: list[str]) -> Ledger:
    settings: LaunchSettings = parse_flags(engine, ["--model", "m", *flags])
    return predict(_dense(), settings, gpu_total_bytes=L20_TOTAL, gpu_name="L20", measured=MeasuredInputs())


def test_sglang_0_5_9_plans_ep_equal_to_tp_as_ep_off_and_says_so() -> None:
    base = ["--engine-version", "0.5.9", "--tp-size", "2", "--nnodes", "2", "--context-length", "5120",
            "--mem-fraction-static", "0.9"]  # fmt: skip
    off, typed = _plan("sglang", base), _plan("sglang", [*base, "--ep-size", "2"])
    assert typed.engine.token_capacity == off.engine.token_capacity > 0
    assert typed.layout.ep == 1 and typed.settings.ep == 2  # planned as EP off, the launch kept as typed
    assert any(
        "--ep-size 2 on a model without experts: planned as EP off" in note for note in typed.engine.notes
    )
    assert not any("EP off" in note for note in off.engine.notes)


def test_sglang_before_0_4_10_fails_on_the_dummy_expert() -> None:
    with pytest.raises(LayoutError, match=r"^--ep: SGLang 0\.4\.6\.post5 fails at start .*AssertionError"):
        _plan("sglang", ["--engine-version", "0.4.6.post5", "--tp-size", "2", "--ep-size", "2"])


def test_sglang_ep_inside_tp_is_not_modelled_without_experts() -> None:
    # 0.5.9 parallel_state.py :1801-1848: new moe_ep (2 ranks) and moe_tp (2 ranks) groups, pynccl and custom AR on
    with pytest.raises(
        LayoutError, match=r"^--ep: not modelled: at ep 2 inside tp 4 SGLang 0\.5\.9 opens two pynccl communicators"
    ):
        _plan("sglang", ["--engine-version", "0.5.9", "--tp-size", "4", "--ep-size", "2"])


def test_sglang_from_0_5_11_plans_ep_inside_tp_as_off_without_experts() -> None:
    """0.5.11's parallel_state.py (:1985, :2013) builds moe_ep and moe_tp without pynccl or custom all-reduce:
    nothing before the pool, so the plan is the plan without --ep-size."""
    base = ["--engine-version", "0.5.11", "--tp-size", "4", "--context-length", "5120"]
    off, typed = _plan("sglang", base), _plan("sglang", [*base, "--ep-size", "2"])
    assert typed.engine.token_capacity == off.engine.token_capacity > 0
    said = [note for note in typed.engine.notes if "--ep-size 2" in note]
    assert len(said) == 1 and "planned as EP off" in said[0] and "open no communicator before the KV pool" in said[0]


@pytest.mark.parametrize("tp", ["1", "2"])
def test_vllm_refuses_the_switch_in_its_own_words(tp: str) -> None:
    # at tp 1 × dp 1 the switch spreads nothing, and vLLM still raises: the check reads the switch, not a size
    words = "Number of experts in the model must be greater than 0 when expert parallelism is enabled."
    with pytest.raises(LayoutError, match=r"^--ep: vLLM 0\.11\.0 refuses") as refused:
        _plan(
            "vllm", ["--engine-version", "0.11.0", "--tensor-parallel-size", tp, "--enable-expert-parallel"]
        )
    assert words in str(refused.value)


def test_trtllm_plans_ep_as_off() -> None:
    off = _plan("trtllm", ["--tp_size", "2"])
    typed = _plan("trtllm", ["--tp_size", "2", "--ep_size", "2"])
    assert typed.engine.token_capacity == off.engine.token_capacity > 0
    assert any("--ep_size 2 on a model without experts" in note for note in typed.engine.notes)


@pytest.mark.parametrize(
    ("backend", "release", "package"),
    # check_env/dist.py's exit on CUDA, by release: dlblas (v0.12.2), DeepEP and DeepGEMM (0.18.0 wheel); none unread
    [("pytorch", "0.12.2", "dlblas"), ("pytorch", "0.18.0", "DeepEP"), ("turbomind", "0.14.0", None)],
)
def test_lmdeploy_plans_ep_equal_to_tp_as_off(backend: str, release: str, package: str | None) -> None:
    base = ["--backend", backend, "--tp", "2", "--engine-version", release]
    off, typed = _plan("lmdeploy", base), _plan("lmdeploy", [*base, "--ep", "2"])
    assert typed.engine.token_capacity == off.engine.token_capacity > 0
    # the PyTorch engine's words for a model without experts; TurboMind 0.14.0's one note: it reads no --ep at all
    words = "--ep 2 on a model without experts" if backend == "pytorch" else "--ep 2 not read: TurboMind 0.14.0"
    said = [note for note in typed.engine.notes if "--ep 2" in note]
    assert len(said) == 1 and words in said[0]
    assert ("requires install" in said[0]) == (package is not None) and (package is None or package in said[0])


@pytest.mark.parametrize("release", ["0.15.0", "0.18.0"])
def test_turbomind_from_0_15_holds_a_dense_models_ffn_whole_at_ep_equal_to_tp(release: str) -> None:
    """TurboMind 0.15.0+ reads --ep (cli/serve.py 0.15.0:279): parallel_config.py gives mlp_tp = tp ÷ ep = 1, and
    qwen2.py's FfnBuilder takes tp=self._mlp_tp (a dense model keeps it in 0.18.0): each rank holds the whole FFN,
    28 layers × 3 × 8,960 × 1,536 × 2 B (the config), where TP 2 holds half."""
    base = ["--backend", "turbomind", "--tp", "2", "--engine-version", release]
    off, typed = _plan("lmdeploy", base), _plan("lmdeploy", [*base, "--ep", "2"])
    whole_ffn = 28 * 3 * 8_960 * 1_536 * 2
    assert typed.ranks[0].weights_bytes - off.ranks[0].weights_bytes == whole_ffn // 2 == 1_156_055_040
    assert typed.engine.token_capacity < off.engine.token_capacity
    assert any("reads --ep and splits the FFN over mlp_tp" in note for note in typed.engine.notes)


def test_lmdeploy_ep_over_dp_replicas_is_not_modelled_without_experts() -> None:
    with pytest.raises(LayoutError, match=r"^--ep: not modelled: --ep 4 with --dp 2"):
        _plan("lmdeploy", ["--backend", "pytorch", "--tp", "2", "--dp", "2", "--ep", "4"])


@pytest.mark.parametrize(
    ("engine", "flags", "asked"),
    [
        ("vllm", ["--enable-expert-parallel"], True),  # vLLM's switch at 1 × 1: EP over one rank, still asked
        ("vllm", ["--tensor-parallel-size", "2"], False),
        ("sglang", ["--tp-size", "2", "--ep-size", "2"], True),
        ("sglang", ["--tp-size", "2"], False),
    ],
)
def test_the_shared_plan_asks_each_engines_flags_whether_ep_is_asked(engine: str, flags: list[str], asked: bool) -> None:
    """`LaunchSettings.expert_parallel_asked`: what `ledger._without_idle_ep` reads, whichever flag set it."""
    assert parse_flags(engine, ["--model", "m", *flags]).expert_parallel_asked is asked
