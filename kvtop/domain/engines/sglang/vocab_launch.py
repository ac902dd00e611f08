"""What a launch's own switches do to SGLang's vocab embedding and LM head, over vocab_split.py's split by class.

- `SGLANG_ENABLE_EMBED_REPLICATION` (an environment variable: a leading `NAME=VALUE` of a `--cmd` launch line,
  flags.py env_read; srt/environ.py `EnvBool`: true/1/yes/y): `get_embedding_tp_kwargs()` (srt/layers/
  vocab_parallel_embedding.py:166-185, first in 0.5.13) returns `{"enable_tp": False}`, so the model code that builds
  its input embedding through it holds the whole table on every rank (a VocabParallelEmbedding at tp_size 1: rows
  padded to 64), with DP attention or without; the LM head is untouched. Its users (REPLICATING_ERAS) read in the
  0.5.13, 0.5.17, 0.5.20 and 0.5.23 wheels. Other classes ignore it.
- `--enable-dp-lm-head` (first in 0.4.6.post5): DeepseekV2ForCausalLM builds `ParallelLMHead(...,
  use_attn_tp_group=enable_dp_lm_head)` (deepseek_v2.py 0.4.6.post5:1422, 0.5.12:2378, 0.5.23:3296), so under DP
  attention its head splits over attention TP (tp ÷ dp; whole where dp == tp), rows padded to 64 as over TP; every
  class built on it (vocab_split.py's DeepseekV2Model users) alike. Other classes pass it to their own heads or not,
  by file and release (0.5.23: llama.py, glm4_moe.py, gpt_oss.py, qwen3_vl.py, nemotron_h.py … do; qwen2.py does
  not): not read, so refused by name under DP attention. Without DP attention SGLang turns it off where dp is 1
  (server_args.py 0.5.12:3063-3065; 0.5.23 arg_groups/overrides.py `_data_parallelism_defaults`) and asserts
  otherwise ("Please enable dp attention when setting enable_dp_lm_head.", 0.4.6.post5 … 0.5.12 server_args.py;
  0.5.23 `_dp_lm_head_validation`: "--enable-dp-lm-head requires attention DP (--attn-dp-size).").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvtop.domain.engines.sglang.vocab_split import dp_attention_embedding_class
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.layout import VocabSplit
from kvtop.domain.refusals import Refusal

if TYPE_CHECKING:
    from kvtop.domain.launch import LaunchSettings
    from kvtop.domain.ledger import Ledger
    from kvtop.domain.model import ModelSpec

EMBED_ENV = "SGLANG_ENABLE_EMBED_REPLICATION"
TRUE_WORDS = frozenset({"true", "1", "yes", "y"})  # srt/environ.py EnvBool.parse
DP_HEAD_FLAG = "--enable-dp-lm-head"
DP_HEAD_KEY = "enable-dp-lm-head"  # its LaunchSettings.flags key
_DSV2 = "DeepseekV2Model"

# model classes whose model code builds the input embedding with **get_embedding_tp_kwargs(), by release
_KIMI_K3 = frozenset({"KimiK3ForConditionalGeneration", "KimiK3LinearForCausalLM"})
REPLICATING_ERAS: Eras[tuple[frozenset[str], frozenset[str]]] = Eras((
    Era("", (frozenset(), frozenset()), "no get_embedding_tp_kwargs() before 0.5.13 (vocab_parallel_embedding.py)"),
    Era("0.5.13", (frozenset({_DSV2}), frozenset()), "deepseek_v2.py 0.5.13:2255 `**get_embedding_tp_kwargs()`"),
    Era("0.5.17", (frozenset({_DSV2}), _KIMI_K3), "kimi_k3.py KimiK3LinearModel (its first release) 0.5.17, 0.5.23:2751"),
    Era("0.5.20", (frozenset({_DSV2, "HYV4Model"}), _KIMI_K3 | {"Glm5NextForConditionalGeneration"}),
        "hunyuan_v4.py 0.5.20, 0.5.23:692; glm5_next.py Glm5NextModel 0.5.20, 0.5.23:1030 (both first releases)"),
))  # fmt: skip
# SGLang's assertion where the flag is set without DP attention at dp > 1: (its words, where)
DP_HEAD_ASSERT_ERAS: Eras[tuple[str, str]] = Eras((
    Era("", ("Please enable dp attention when setting enable_dp_lm_head.", "server_args.py ServerArgs"),
        "read at 0.4.6.post5, 0.5.12, 0.5.13 (server_args.py:3333), 0.5.17 and 0.5.20 (arg_groups/overrides.py:1485)"),
    Era("0.5.23", ("--enable-dp-lm-head requires attention DP (--attn-dp-size).",
                   "arg_groups/overrides.py _dp_lm_head_validation"), "read at 0.5.23 (0.5.21, 0.5.22 not read)"),
))  # fmt: skip
DP_HEAD_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), "no --enable-dp-lm-head before 0.4.6.post5"),
    Era("0.4.6.post5", frozenset({_DSV2}), "deepseek_v2.py 0.4.6.post5:1422, 0.5.12:2378, 0.5.23:3296 "
                                           "`ParallelLMHead(..., use_attn_tp_group=enable_dp_lm_head)`"),
))  # fmt: skip


def replicates_embedding(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> bool:
    """Whether the launch's SGLANG_ENABLE_EMBED_REPLICATION makes this class's embedding whole on every rank."""
    value = settings.flags.get(EMBED_ENV)
    if not isinstance(value, str) or value.strip().lower() not in TRUE_WORDS:
        return False
    codes, classes = REPLICATING_ERAS.at(version)
    entry = dp_attention_embedding_class(model)
    return model.architecture in classes or (entry is not None and entry.built_by in codes)


def dp_head(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> bool | None:
    """Under DP attention with --enable-dp-lm-head: True where the class's head splits over attention TP (read),
    None where not read; False where the flag is not set or does nothing (no DP attention)."""
    if not settings.flags.get(DP_HEAD_KEY) or not settings.enable_dp_attention:
        return False
    entry = dp_attention_embedding_class(model)
    return True if entry is not None and entry.built_by in DP_HEAD_ERAS.at(version) else None


def with_launch_switches(
    split: VocabSplit, model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion
) -> VocabSplit:
    """vocab_split.py's split with the embedding whole under SGLANG_ENABLE_EMBED_REPLICATION and the LM head over
    attention TP under --enable-dp-lm-head, where the class's code reads them."""
    replicated, head = replicates_embedding(model, settings, version), dp_head(model, settings, version) is True
    if not (replicated or head):
        return split
    notes = [split.note] if split.note and not replicated else []
    if replicated:
        notes.append(f"{EMBED_ENV}: SGLang {version.label} builds it whole on every rank (get_embedding_tp_kwargs, "
                     "vocab_parallel_embedding.py; vocab_launch.py)")  # fmt: skip
    if head:
        notes.append(f"{DP_HEAD_FLAG}: the LM head splits over attention TP (deepseek_v2.py ParallelLMHead "
                     "use_attn_tp_group; vocab_launch.py)")  # fmt: skip
    embedding_whole = replicated or split.embedding_whole
    return VocabSplit(
        embedding_whole=embedding_whole,
        embedding_rows_padded=embedding_whole,  # SGLang's whole tables here are VocabParallelEmbeddings at tp_size 1
        over_attention_tp=head,  # the head (and an embedding split alike) over attention TP
        embedding_over_attention_tp=not embedding_whole and (split.embedding_over_attention_tp or head),
        note="; ".join(notes),
    )


def dp_head_refusal(ledger: Ledger) -> Refusal | None:
    """--enable-dp-lm-head where SGLang asserts against it (dp > 1 without DP attention) or on a class whose head
    split under it kvtop has not read."""
    settings, model = ledger.settings, ledger.model
    if not settings.flags.get(DP_HEAD_KEY):
        return None
    if not settings.enable_dp_attention:
        if settings.dp <= 1:
            return None  # SGLang turns it off where dp is 1
        words, where = DP_HEAD_ASSERT_ERAS.at(ledger.version)
        return Refusal(field=DP_HEAD_FLAG, message=f"SGLang {ledger.version.label} asserts {words!r}: add "
                       f"--enable-dp-attention or drop {DP_HEAD_FLAG}", source=where)  # fmt: skip
    if dp_head(model, settings, ledger.version) is None:
        return Refusal(field=DP_HEAD_FLAG, message=f"{DP_HEAD_FLAG} on {model.architecture}: whether SGLang "
                       f"{ledger.version.label}'s class splits its LM head over attention TP is not read (not "
                       "modelled); plan without it", source="vocab_launch.py DP_HEAD_ERAS")  # fmt: skip
    return None
