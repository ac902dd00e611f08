"""SGLANG_ENABLE_EMBED_REPLICATION and --enable-dp-lm-head on SGLang's embedding and LM head (vocab_launch.py).

Expected bytes from DeepSeek-V3's config and SGLang's VocabParallelEmbedding arithmetic, never from kvtop: vocab
129,280 (2,020 × 64: no padding) × hidden 7,168 × 2 B (bf16); rows ÷ the group's size, 1 under `enable_tp=False`.
- SGLANG_ENABLE_EMBED_REPLICATION=1: `get_embedding_tp_kwargs()` (layers/vocab_parallel_embedding.py 0.5.13:166-185,
  0.5.23 alike) returns `{"enable_tp": False}`, which deepseek_v2.py builds its embedding with from 0.5.13
  (0.5.13:2255, 0.5.23:2946): whole on every rank, DP attention or not; at 0.5.12 (no such helper, 0.5.12's
  environ.py has no such variable) the split stands.
- --enable-dp-lm-head: `ParallelLMHead(..., use_attn_tp_group=enable_dp_lm_head)` (deepseek_v2.py 0.5.23:3296):
  over attention TP = tp ÷ dp (8 ÷ 2 = 4: 32,320 rows; 8 ÷ 8 = 1: whole) instead of TP 8 (16,160 rows).
"""

from __future__ import annotations

import json
from pathlib import Path

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.launch import check_parallel, parse_flags
from kvtop.domain.launch_check import launch_refusals
from kvtop.domain.launch_line import parse_launch_command, with_environment
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA

DEEPSEEK_V3 = DATA / "configs" / "deepseek-ai--DeepSeek-V3.json"
QWEN3 = DATA / "configs" / "Qwen--Qwen3-32B.json"
WHOLE = 129_280 * 7_168 * 2  # 1,853,358,080 B
OVER_8, OVER_4 = 16_160 * 7_168 * 2, 32_320 * 7_168 * 2  # 231,669,760 B; 463,339,520 B


def _ledger(flags: list[str], env: dict[str, str] | None = None, config: str = str(DEEPSEEK_V3)) -> Ledger:
    raw = json.loads(Path(config).read_text())
    settings = with_environment(parse_flags("sglang", ["--model", "m", *flags]), env or {})
    check_parallel(settings)
    return predict(model_from_config(raw, source=config), settings, gpu_total_bytes=141 << 30, gpu_name="H200",
                   measured=MeasuredInputs())  # fmt: skip


def _rows(ledger: Ledger) -> dict[str, tuple[int, int]]:
    return {row.component: (row.bytes, row.shards) for row in ledger.ranks[0].weights.rows}


REPLICATE = {"SGLANG_ENABLE_EMBED_REPLICATION": "1"}


def test_embed_replication_makes_deepseek_v3_embedding_whole_from_0_5_13() -> None:
    flags = ["--tp", "8", "--engine-version"]
    assert _rows(_ledger([*flags, "0.5.23"], REPLICATE))["embedding"] == (WHOLE, 1) == (1_853_358_080, 1)
    assert _rows(_ledger([*flags, "0.5.13"], REPLICATE))["embedding"] == (WHOLE, 1)
    assert _rows(_ledger([*flags, "0.5.12"], REPLICATE))["embedding"] == (OVER_8, 8) == (231_669_760, 8)
    assert _rows(_ledger([*flags, "0.5.23"], {"SGLANG_ENABLE_EMBED_REPLICATION": "0"}))["embedding"] == (OVER_8, 8)
    rows = _rows(_ledger([*flags, "0.5.23"], REPLICATE))
    assert rows["lm_head"] == (OVER_8, 8)  # the head is not the embedding's helper's


def test_embed_replication_under_dp_attention_keeps_the_head_over_tp() -> None:
    flags = ["--tp", "8", "--dp", "2", "--enable-dp-attention", "--engine-version", "0.5.23"]
    assert _rows(_ledger(flags))["embedding"] == (OVER_4, 4) == (463_339_520, 4)
    rows = _rows(_ledger(flags, REPLICATE))
    assert (rows["embedding"], rows["lm_head"]) == ((WHOLE, 1), (OVER_8, 8))


def test_embed_replication_is_ignored_by_a_class_without_the_helper() -> None:
    """Qwen3-32B (qwen2.py Qwen2Model: `use_attn_tp_group=is_dp_attention_enabled()`, no get_embedding_tp_kwargs)."""
    flags = ["--tp", "8", "--engine-version", "0.5.23"]
    assert _rows(_ledger(flags, REPLICATE, str(QWEN3)))["embedding"] == _rows(_ledger(flags, None, str(QWEN3)))["embedding"]


def test_dp_lm_head_splits_deepseek_v3_head_over_attention_tp() -> None:
    flags = ["--tp", "8", "--dp", "2", "--enable-dp-attention", "--enable-dp-lm-head", "--engine-version", "0.5.23"]
    rows = _rows(_ledger(flags))
    assert (rows["embedding"], rows["lm_head"]) == ((OVER_4, 4), (OVER_4, 4))
    whole = _rows(_ledger(["--tp", "8", "--dp", "8", "--enable-dp-attention", "--enable-dp-lm-head",
                           "--engine-version", "0.5.23"]))  # fmt: skip
    assert whole["lm_head"] == (WHOLE, 1)
    # 0.5.7: the embedding whole (enable_tp=not is_dp_attention_enabled(), deepseek_v2.py 0.5.7:3042), the head over 4
    early = _rows(_ledger([*flags[:-1], "0.5.7"]))
    assert (early["embedding"], early["lm_head"]) == ((WHOLE, 1), (OVER_4, 4))


def test_dp_lm_head_by_class_and_release() -> None:
    """Qwen3-32B (vocab 151,936 = 2,374 × 64, hidden 5,120): qwen3.py's ParallelLMHead takes use_attn_tp_group=
    enable_dp_lm_head from 0.5.8 (0.5.7's does not): over attention TP 4, 37,984 rows, at 0.5.23; over TP 8, 18,992
    rows, at 0.5.7. Qwen2.5-7B (qwen2.py: never): the flag changes nothing. Llama-3.1-8B (vocab 128,256 = 2,004 × 64,
    hidden 4,096, untied): llama.py's ParallelLMHead takes it (0.4.6.post5:424, 0.5.23:578), its VocabParallelEmbedding
    nothing: head over attention TP 4 (32,064 rows), embedding over TP 8 (16,032 rows)."""
    flags = ["--tp", "8", "--dp", "2", "--enable-dp-attention", "--enable-dp-lm-head", "--engine-version"]
    assert _rows(_ledger([*flags, "0.5.23"], None, str(QWEN3)))["lm_head"] == (37_984 * 5_120 * 2, 4) == (388_956_160, 4)
    assert _rows(_ledger([*flags, "0.5.7"], None, str(QWEN3)))["lm_head"] == (18_992 * 5_120 * 2, 8) == (194_478_080, 8)
    qwen25 = str(DATA / "configs" / "Qwen--Qwen2.5-7B-Instruct.json")
    with_flag = _ledger([*flags, "0.5.23"], None, qwen25)
    assert not [r for r in launch_refusals(with_flag) if r.field == "--enable-dp-lm-head"]
    assert _rows(with_flag)["lm_head"] == _rows(_ledger([*flags[:5], *flags[6:], "0.5.23"], None, qwen25))["lm_head"]
    llama = _ledger([*flags, "0.5.23"], None, str(DATA / "configs" / "meta-llama--Llama-3.1-8B-Instruct.json"))
    assert not [r for r in launch_refusals(llama) if r.field == "--enable-dp-lm-head"]
    rows = _rows(llama)
    assert (rows["embedding"], rows["lm_head"]) == ((16_032 * 4_096 * 2, 8), (32_064 * 4_096 * 2, 4))
    assert rows["lm_head"] == (262_668_288, 4)
    for release in ("0.4.6.post5", "0.5.8"):
        assert _rows(_ledger([*flags, release], None, str(DATA / "configs" / "meta-llama--Llama-3.1-8B.json")))[
            "lm_head"] == (262_668_288, 4)  # fmt: skip
    no_flag = _ledger([*flags[:5], *flags[6:], "0.5.23"], None, str(DATA / "configs" / "meta-llama--Llama-3.1-8B.json"))
    assert _rows(no_flag)["lm_head"] == (131_334_144, 8)


def test_dp_lm_head_refusals() -> None:
    """Without DP attention at dp > 1 SGLang asserts; at dp 1 SGLang turns it off (nothing refused, nothing changed)."""
    old_words = "Please enable dp attention when setting enable_dp_lm_head."
    # where each wheel asserts it: 0.5.14 server_args.py:5061, 0.5.15 arg_groups/overrides.py:1792, 0.5.20 :1485
    for release, words, where in (("0.5.14", old_words, "server_args.py"),
                                  ("0.5.15", old_words, "arg_groups/overrides.py _dp_lm_head_validation"),
                                  ("0.5.20", old_words, "arg_groups/overrides.py _dp_lm_head_validation"),
                                  ("0.5.23", "--enable-dp-lm-head requires attention DP (--attn-dp-size).",
                                   "arg_groups/overrides.py _dp_lm_head_validation")):  # fmt: skip
        replicas = _ledger(["--tp", "8", "--dp", "2", "--enable-dp-lm-head", "--engine-version", release])
        (asserted,) = [r for r in launch_refusals(replicas) if r.field == "--enable-dp-lm-head"]
        assert words in asserted.message and asserted.source.startswith(where), (release, asserted.source)
    alone = _ledger(["--tp", "8", "--enable-dp-lm-head", "--engine-version", "0.5.23"])
    assert not [r for r in launch_refusals(alone) if r.field == "--enable-dp-lm-head"]
    assert _rows(alone)["lm_head"] == (OVER_8, 8)


def test_a_launch_line_carries_the_variable() -> None:
    settings = parse_launch_command("SGLANG_ENABLE_EMBED_REPLICATION=1 HF_TOKEN=secret python -m sglang.launch_server "
                                    "--model-path deepseek-ai/DeepSeek-V3 --tp 8")  # fmt: skip
    assert settings is not None and settings.flags.get("SGLANG_ENABLE_EMBED_REPLICATION") == "1"
    assert "HF_TOKEN" not in settings.flags
