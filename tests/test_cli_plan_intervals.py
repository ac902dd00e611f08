"""`kvtop plan`'s interval where an operator read it wrong (#27): an attention-free model's requests, llama.cpp's
context fixed by -c, SGLang given only the free memory after the load, a state-only model's nominal head, an audio
tower's row.

Every expected figure is the engine's arithmetic done here by hand on the plan's inputs (the calibrated terms, as
`plan --json` lists them: `terms`, `interval_scale`, the engine's fraction), never the interval's own code: each end
moves the one estimated term by round(scale × its error) (one term with an error: the root of squares is itself).
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from kvtop.domain.wording import GIB
from tests.conftest import CONFIGS
from tests.data_paths import DATA

FALCON_MAMBA = str(CONFIGS / "tiiuae--falcon-mamba-7b.json")  # the Hub's config.json (SOURCES.md)
QWEN2_AUDIO = str(DATA / "engine_diff" / "registry" / "configs" / "Qwen2AudioForConditionalGeneration.json")


def plan_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:  # type: ignore[type-arg]
    assert main(["plan", "--json", "--no-calibration-store", *args]) == 0
    return json.loads(capsys.readouterr().out)


def plan_text(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["plan", "--no-calibration-store", *args]) == 0
    return capsys.readouterr().out


def _term(out: dict, name: str) -> dict:  # type: ignore[type-arg]
    return next(term for term in out["terms"] if term["term"] == name)


def _moved(out: dict, name: str) -> int:  # type: ignore[type-arg]
    """How far an end moves the one estimated term: round(interval scale × its error)."""
    return round(out["interval_scale"] * _term(out, name)["error_bytes"])


# Falcon-Mamba-7B on SGLang 0.5.23, TP 1, H100, 78 GiB free before the load (measured: CUDA's total and the context
# are then exact, the weights the one estimated term). One request's state (SGLang keeps the SSM float32): 64 layers ×
# (conv 3 × 8,192 × 2 B + SSM 8,192 × 16 × 4 B) = 64 × 573,440 = 36,700,160 B. SGLang 0.5.23 (docs/engines/sglang.md
# §4.2, §7): rest = free − weights − free × (1 − 0.83); the state's share rest × 0.9 ÷ 1.9; slots = (share − state) //
# state; running requests min(--max-running-requests 4,000, tokens 100,000 // 2, slots // 3).
MAMBA_ARGS = ("--cmd", f"python -m sglang.launch_server --model-path {FALCON_MAMBA} --max-total-tokens 100000 "
              "--max-running-requests 4000", "--gpu", "H100", "--free-memory", "78GiB", "--engine-version", "0.5.23")
STATE = 64 * (3 * 8192 * 2 + 8192 * 16 * 4)


def _slots(weights: int, fraction: float) -> int:
    free = 78 * GIB
    rest_gib = (free - weights) / GIB - free / GIB * (1 - fraction)
    share = rest_gib * 0.9 / (1 + 0.9) * GIB
    return int((share - STATE) // STATE)


def test_an_attention_free_plan_gives_its_requests_an_interval(capsys: pytest.CaptureFixture[str]) -> None:
    """Before: 'none in requests yet'. The weights W = 14,562,107,392 B (64 × 105,312,256 params + 2 × 65,024 ×
    4,096 + 4,096 = 7,272,665,088 × 2 B, and A_log's 64 × 8,192 × 16 held in float32: + 16,777,216 B) move by their
    error at each end: 708 slots at the centre (236 requests; 706 and 235 with the allocator's tails below); the ends move with the fitted error and scale, which a
    refit changes, so they are worked from the plan's own terms (with the session-44 fit: 704 and 712 slots, 234 and
    237 requests; 703 and 712 with the one before)."""
    out = plan_json(capsys, *MAMBA_ARGS)
    weights = _term(out, "weights")
    # and the caching allocator's tails SGLang's weights count (docs/engines/sglang.md §20.2): each layer's x_proj
    # (4.5 MiB) and dt_proj (4 MiB), under 10 MiB, share 20 MiB segments, two layers' 17 MiB a segment: 32 × 20 MiB
    # for 64 × 8.5 MiB, 96 MiB unused; the tensors under 1 MiB (41,426,944 B) fill twenty 2 MiB segments (516,096 B)
    tails = 96 * 2**20 + 20 * 2 * 2**20 - 41_426_944
    assert weights["bytes"] - tails == 7_272_665_088 * 2 + 64 * 8192 * 16 * 2 == 14_562_107_392
    assert weights["source"] == "calibrated" and weights["error_bytes"] > 0
    fraction, moved = out["memory_fraction"]["value"], _moved(out, "weights")
    centre, low, high = (_slots(weights["bytes"] + delta, fraction) for delta in (0, moved, -moved))
    # 708 before the allocator's tails; the weights' error (0.5 % since session 55) may move one end by less than a
    # slot, so an end may equal the centre
    assert centre == 706 and low <= centre <= high and low < high
    interval = out["request_interval"]
    assert out["request_capacity"]["state_bytes_per_request"] == STATE == 36_700_160
    assert (interval["slots_min"], interval["slots_max"]) == (low, high)
    assert (interval["requests_min"], interval["requests"], interval["requests_max"]) == (low // 3, 235, high // 3)
    assert interval["term"] == out["interval_term"] == "weights" and out["interval_kind"] == "requests"
    text = plan_text(capsys, *MAMBA_ARGS)
    line = next(line for line in text.splitlines() if line.startswith("Interval"))
    below, above = 235 - low // 3, high // 3 - 235  # ends this close differ by more than 1 %: both said
    spread = f"± {below}" if below == above else f"{'−' if below else ''}{below} / +{above}"  # a zero side unsigned
    assert line.endswith(f"{low // 3} – {high // 3} requests ({spread}), mostly weights (calibrated); "
                         f"state slots {low} – {high} fit")  # fmt: skip


def test_a_state_only_models_nominal_head_is_named_kvtops(capsys: pytest.CaptureFixture[str]) -> None:
    """MambaConfig and FalconMambaConfig have no num_attention_heads and no max_position_embeddings: the 1 and the
    2,048 the reader fills in are kvtop's nominal head and vLLM's default context, not transformers' class defaults."""
    out = plan_json(capsys, *MAMBA_ARGS)
    assert out["config_defaults_used"] == []
    assert out["config_nominal_defaults"] == [
        "max_position_embeddings=2048: vLLM's and SGLang's context where a config names no position field "
        "(vLLM _get_and_verify_max_len, SGLang get_context_length)",
        "num_attention_heads=1: kvtop's nominal head (no layer attends; no book reads it)",
    ]
    text = plan_text(capsys, *MAMBA_ARGS)
    assert "transformers' class defaults" not in text
    assert "note: the config leaves out num_attention_heads=1: kvtop's nominal head" in text


def test_llamacpp_on_a_gb10_says_its_context_is_fixed_by_c(capsys: pytest.CaptureFixture[str]) -> None:
    """llama.cpp sizes its cache by -c (not given: 0, the training context, Llama-3.1-8B's 131,072 positions;
    common/common.h n_ctx), never from a share of memory: the assumed host share decides only whether it fits, and it
    fits at both ends (the weights 14.96 GiB + 16 GiB of KV against at least 84.58 − 28.14 GiB left: kvtop reads
    llama.cpp's free memory as cudaMemGetInfo's, the page cache held, `EngineBase.reads_available_memory`). Before:
    '± 0: no estimated input moves it', read as measured."""
    args = ("--model", "llama-3.1-8b", "--engine", "llamacpp", "--gpu", "GB10")
    out = plan_json(capsys, *args)
    assert out["token_capacity_min"] == out["token_capacity"] == out["token_capacity_max"] == 131_072
    assert out["interval_kind"] == "fixed_by_flag" and out["capacity_fixed_by"] == "-c"
    assert out["interval_term"] is None and _term(out, "host")["source"] == "assumed"
    line = next(line for line in plan_text(capsys, *args).splitlines() if line.startswith("Interval"))
    assert "131,072 tokens, fixed by -c: not a memory budget" in line and "± 0" not in line


# Llama-3.1-8B on SGLang, the free memory after the load given (60 GiB): SGLang's reserve is the free memory before
# the load × (1 − 0.83) (model_runner: pre-load memory), and the load's usage is pre − post, so before = 60 GiB + the
# weights W; KV budget = 60 GiB − the reserve, 131,072 B a token (32 layers × 2 × 8 KV heads × 128 × 2 B).
def _sglang_tokens(weights: int, fraction: float) -> int:
    before = 60 * GIB + weights
    return int((60 - before / GIB * (1 - fraction)) * GIB) // 131_072


@pytest.mark.parametrize("gpu", ["H100", "GB10"])
def test_free_memory_after_load_says_which_input_was_measured(capsys: pytest.CaptureFixture[str], gpu: str) -> None:
    """Before: the weights were labelled 'measured' (only the free memory was), and the interval ± 0. Now the weights
    stay the calibrated term with their error (W = 16,127,631,360 B: more weights, a larger reserve), and CUDA's total,
    the context and a GB10 host's share are held in the measured figure (0 error, said so)."""
    args = ("--model", "llama-3.1-8b", "--engine", "sglang", "--gpu", gpu, "--free-after-load", "60GiB")
    out = plan_json(capsys, *args)
    weights = _term(out, "weights")
    assert weights["source"] == "calibrated" and weights["within"] is None and weights["error_bytes"] > 0
    for name in ("cuda_total", "context", *(("host",) if gpu == "GB10" else ())):
        held = _term(out, name)
        assert held["error_bytes"] == 0 and held["within"].startswith("the free memory after load (measured")
    assert not any(term["source"] == "measured" for term in out["terms"])
    fraction, moved = out["memory_fraction"]["value"], _moved(out, "weights")
    ends = [_sglang_tokens(weights["bytes"] + delta, fraction) for delta in (0, moved, -moved)]
    assert [out["token_capacity"], out["token_capacity_min"], out["token_capacity_max"]] == ends
    assert out["interval_term"] == "weights" and out["beyond_support"] == []
    if gpu == "H100":  # 0.83: (81,559 − 13,904 MiB) ÷ 81,559 MiB; the ends move with the fit (386,606 / 387,481
        # 387,042 since the allocator's tails (1,564,672 B) are in the weights: a larger reserve of the free before
        assert ends[0] == 387_042 and ends[1] < ends[0] < ends[2]  # with session 44's, 386,558 / 387,529 before)
    text = plan_text(capsys, *args)
    assert "in measured" in text and "held in the free memory after load (measured: --free-after-load)" in text


def test_an_audio_tower_is_keyed_audio(capsys: pytest.CaptureFixture[str]) -> None:
    """Qwen2-Audio's tower row holds its Whisper encoder and projector: keyed `audio` in the JSON and the table, with
    the engines' meta build's bytes (vLLM 0.33.0 and SGLang 0.5.23: 1,284,431,872 B, tests/domain/test_towers_audio.py)."""
    args = ("--model", QWEN2_AUDIO, "--engine", "vllm", "--gpu", "H100", "--max-model-len", "4096")
    rows = {row["component"]: row["bytes"] for row in plan_json(capsys, *args)["ranks"][0]["weights"]}
    assert rows["audio"] == 1_284_431_872 and "vision" not in rows
    assert any(line.startswith("  audio ") for line in plan_text(capsys, *args).splitlines())


# Falcon-Mamba-7B on vLLM on a GB10 (119.70 GiB unified, the host assumed to hold 14.04 GiB ± 8.40 as v0.33.0 reads
# the kernel's available memory): vLLM asks --gpu-memory-utilization × the total free at its start
# (docs/engines/vllm.md), so 0.96 asks 114.91 GiB (the host may hold 4.79 GiB: below the span's low end 5.64, refused
# across it) and 0.85 asks 101.75 GiB (the host may hold 17.96 GiB: refused only at the span's high end). A refused end
# holds no request, as it holds no token. Before: '1,024 requests at both ends: the engine's cap binds' beside a Token
# capacity line saying the start is refused.
# the start check is 0.33.0's (v0.34.0 skips it under the extensible KV cache): pinned
GB10_MAMBA = ("--model", FALCON_MAMBA, "--engine", "vllm", "--engine-version", "0.33.0", "--gpu", "GB10")


def test_an_attention_free_start_refused_across_the_host_span_holds_no_request(
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = plan_json(capsys, *GB10_MAMBA, "--gpu-memory-utilization", "0.96")
    interval = out["request_interval"]
    assert out["interval_kind"] == "refused_across_span" and out["token_capacity_max"] == 0
    assert (interval["requests_min"], interval["requests_max"], interval["slots_min"], interval["slots_max"]) == (0,) * 4
    text = plan_text(capsys, *GB10_MAMBA, "--gpu-memory-utilization", "0.96")
    line = next(line for line in text.splitlines() if line.startswith("Interval"))
    assert "0 requests at both ends: refused across the assumed host share" in line and "cap binds" not in line


def test_an_attention_free_start_refused_at_the_high_end_holds_none_there(capsys: pytest.CaptureFixture[str]) -> None:
    out = plan_json(capsys, *GB10_MAMBA, "--gpu-memory-utilization", "0.85")
    interval = out["request_interval"]
    assert out["interval_kind"] == "refused_at_high_end" and out["token_capacity_min"] == 0
    # the other end: vLLM's cap, 256 sequences (vllm serve's default on a GB10, whose compute capability 12.1 v0.33.0
    # keeps on the small row: engine/arg_utils.py:2963, :2984-2986), below the state slots there
    assert (interval["requests_min"], interval["requests_max"]) == (0, 256) and interval["slots_max"] > 256
    text = plan_text(capsys, *GB10_MAMBA, "--gpu-memory-utilization", "0.85")
    line = next(line for line in text.splitlines() if line.startswith("Interval"))
    assert line.split(None, 1)[1].startswith("0 – 256 requests at --gpu-memory-utilization 0.85 (0: may not start "
                                             "where the host holds more than 17.96 GiB)")  # fmt: skip


# Qwen3-8B-AWQ on vLLM 0.28.0 on a GB10 with n-gram speculation (k = 3): the V1 runner's pinned copy segment only
# raises the activation term (one-sided, pinned_copy.py). At --gpu-memory-utilization 0.9 the start is refused at the
# centre ('0 – 756,688'), at 0.85 at the span's high end ('0 – 712,384'): both intervals have width, so the one-sided
# sentence is said there too (review R5 C3-5, session 71: it was said for SPREAD and REQUESTS alone)
NGRAM_GB10 = ("--model", str(DATA / "calibration" / "configs" / "Qwen--Qwen3-8B-AWQ.RECONSTRUCTED.json"), "--engine",
              "vllm", "--engine-version", "0.28.0", "--gpu", "GB10", "--speculative-config",
              '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":3}')  # fmt: skip


@pytest.mark.parametrize(("fraction", "kind"), [("0.9", "refused_at_centre"), ("0.85", "refused_at_high_end")])
def test_a_refused_end_keeps_the_one_sided_sentence(capsys: pytest.CaptureFixture[str], fraction: str, kind: str) -> None:
    out = plan_json(capsys, *NGRAM_GB10, "--gpu-memory-utilization", fraction)
    assert out["interval_kind"] == kind and out["token_capacity_min"] == 0 < out["token_capacity_max"]
    assert "the interval is one-sided" in plan_text(capsys, *NGRAM_GB10, "--gpu-memory-utilization", fraction)
