"""Launch settings and layouts refuse values the engines cannot run, naming the flag (never a wrong number)."""

from __future__ import annotations

import json
import re

import pytest

from kvtop.domain.errors import InputError, LayoutError
from kvtop.domain.launch import LaunchSettings, check_parallel, parse_flags
from kvtop.domain.layout import ParallelLayout, validate_layout
from kvtop.domain.model_config import model_from_config
from tests.conftest import CONFIGS


def load(name: str):
    return model_from_config(json.loads((CONFIGS / name).read_text()), source=name)


@pytest.mark.parametrize("ratio", ["-1", "0", "-2", "1.5", "nan"])
def test_swa_full_tokens_ratio_outside_zero_one_is_refused(ratio: str) -> None:
    with pytest.raises(InputError, match=r"^--swa-full-tokens-ratio: must be in \(0, 1\]"):
        parse_flags("sglang", [f"--swa-full-tokens-ratio={ratio}"])


def test_swa_full_tokens_ratio_of_one_is_kept() -> None:
    assert parse_flags("sglang", ["--swa-full-tokens-ratio", "1"]).swa_full_tokens_ratio == 1.0


@pytest.mark.parametrize(
    ("engine", "flag"),
    [
        ("sglang", "--max-running-requests"), ("vllm", "--max-num-seqs"), ("sglang", "--max-total-tokens"),
        ("sglang", "--chunked-prefill-size"), ("sglang", "--max-prefill-tokens"),
        ("vllm", "--max-num-batched-tokens"), ("vllm", "--num-gpu-blocks-override"), ("vllm", "--block-size"),
        ("sglang", "--context-length"), ("sglang", "--cuda-graph-max-bs"),
    ],
)  # fmt: skip
def test_a_count_below_one_names_the_flag_as_typed(engine: str, flag: str) -> None:
    with pytest.raises(InputError, match=rf"^{flag}: must be at least 1"):
        parse_flags(engine, [flag, "0"])  # type: ignore[arg-type]


def test_chunked_prefill_minus_one_keeps_its_meaning() -> None:
    """SGLang: chunked_prefill_size ≤ 0 turns chunking off (docs/engines/sglang.md §5); -1 is the spelling it uses."""
    assert parse_flags("sglang", ["--chunked-prefill-size", "-1"]).chunked_prefill_size == -1


def test_vllm_auto_fit_length_is_refused_not_misread() -> None:
    """vLLM's `--max-model-len -1` auto-fits (docs/engines/vllm.md §4.2); kvtop does not model it, so it says so."""
    with pytest.raises(InputError, match=r"^--max-model-len: -1 \(vLLM's auto-fit"):
        parse_flags("vllm", ["--max-model-len", "-1"])


def test_merged_settings_are_checked_again_with_the_engines_spelling() -> None:
    with pytest.raises(InputError, match=r"^--max-num-seqs: must be at least 1 \(got -3\)"):
        LaunchSettings.model_validate({"engine": "vllm", "max_running_requests": -3})


@pytest.mark.parametrize(
    ("engine", "flags", "needle"),
    [
        ("sglang", ["--tp", "2", "--ep", "8"], "expert parallel size 8 must divide tp 2"),
        ("sglang", ["--tp", "2", "--dp", "4", "--ep", "8"], "expert parallel size 8 must divide tp 2"),
        (
            "vllm",
            ["--tp", "2", "--dp", "2", "--ep", "8"],
            r"vLLM has no expert-parallel size: .* tp × dp = 4 ranks \(got 8\)",
        ),
        (
            "vllm",
            ["--tp", "2", "--dp", "4", "--ep", "2"],
            r"vLLM has no expert-parallel size: .* tp × dp = 8 ranks \(got 2\)",
        ),
    ],
)
def test_ep_must_divide_the_ranks_holding_experts(engine: str, flags: list[str], needle: str) -> None:
    with pytest.raises(InputError, match=rf"^--ep: {needle}"):
        check_parallel(parse_flags(engine, flags))  # type: ignore[arg-type]


def test_vllm_ep_may_span_tp_times_dp() -> None:
    settings = parse_flags("vllm", ["--tp", "2", "--dp", "4", "--enable-expert-parallel"])
    check_parallel(settings)
    assert settings.effective_ep == 8


@pytest.mark.parametrize(("tp", "dcp"), [(8, 3), (1, 16)])
def test_dcp_must_divide_tp(tp: int, dcp: int) -> None:
    with pytest.raises(InputError, match=rf"^--dcp: decode context parallel size {dcp} must divide tp {tp}"):
        check_parallel(parse_flags("vllm", ["--tp", str(tp), "--dcp", str(dcp)]))


def test_layout_refuses_more_expert_shards_than_ranks() -> None:
    """Mixtral TP2 EP8 once planned '1 of 8 experts per rank' on 2 GPUs: 6 experts lived nowhere."""
    mixtral = load("mistralai--Mixtral-8x7B-v0.1.json")
    with pytest.raises(LayoutError, match=r"^--ep: ep 8 must divide the 2 ranks that hold the experts"):
        validate_layout(mixtral, ParallelLayout(tp=2, ep=8))
    validate_layout(mixtral, ParallelLayout(tp=2, dp=4, ep=8))  # DP replicas share the experts (vLLM EP)


def test_layout_refuses_dcp_that_does_not_divide_attention_tp() -> None:
    qwen = load("Qwen--Qwen2.5-7B-Instruct.json")
    with pytest.raises(
        LayoutError, match=r"^--dcp: decode context parallel size 3 must divide attention TP 4"
    ):
        validate_layout(qwen, ParallelLayout(tp=4, dcp=3))


@pytest.mark.parametrize(
    ("tp", "said"),
    [
        # Qwen2.5-7B's config: 28 heads, 4 KV heads. Of TP ≤ 8, 1, 2 and 4 divide both (7 divides 28, not 4)
        (8, "28 attention heads do not divide over attention TP 8: use TP 1, 2 or 4"),
        # above the heads: 28 itself splits (4 KV heads divide 28 ranks), 14 does not (4 KV heads over 14)
        (32, "28 attention heads do not divide over attention TP 32: more ranks than heads (a layout of 32 GPUs); "
             "use TP 1, 2, 4 or 28"),
    ],
)  # fmt: skip
def test_a_refused_tp_names_the_tps_the_heads_allow(tp: int, said: str) -> None:
    qwen = load("Qwen--Qwen2.5-7B-Instruct.json")
    with pytest.raises(LayoutError, match="^" + re.escape(f"--tp: {said}")):
        validate_layout(qwen, ParallelLayout(tp=tp))


@pytest.mark.parametrize(
    ("dcp", "use"),
    [
        # Qwen2.5-7B's 28 heads and 4 KV heads split over 1, 2 or 4 ranks; --dcp 4 must divide the attention TP too
        (4, "use TP 4"),
        (8, "no TP up to 8 splits them with --dcp 8"),  # 8 divides none of 1, 2, 4
    ],
)
def test_the_tps_named_also_pass_the_decode_context_split(dcp: int, use: str) -> None:
    qwen = load("Qwen--Qwen2.5-7B-Instruct.json")
    said = f"--tp: 28 attention heads do not divide over attention TP 8: {use}"
    with pytest.raises(LayoutError, match="^" + re.escape(said)):
        validate_layout(qwen, ParallelLayout(tp=8, dcp=dcp))
    if dcp == 4:  # the TP named passes both tests
        validate_layout(qwen, ParallelLayout(tp=4, dcp=dcp))


def test_under_dp_attention_the_tps_named_are_the_dp_size_times_an_attention_split() -> None:
    """DeepSeek-V3's 128 MLA heads over TP 24 ÷ DP 8 = 3 attention ranks: 1 and 2 split them, i.e. TP 8 and 16."""
    v3 = load("deepseek-ai--DeepSeek-V3.json")
    said = "--tp: 128 attention heads do not divide over attention TP 3: use TP 8 or 16"
    with pytest.raises(LayoutError, match=f"^{said}"):
        validate_layout(v3, ParallelLayout(tp=24, dp=8, dp_attention=True))
