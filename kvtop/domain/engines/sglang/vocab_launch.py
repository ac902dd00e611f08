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
  class built on it (vocab_split.py's DeepseekV2Model users) alike. Other classes pass it to their own heads from a
  release on (HEAD_OVER_ATTENTION_TP: Qwen2/3-MoE from 0.4.7, GLM-4.5, GPT-OSS, Qwen3 from 0.5.8, …) or never
  (HEAD_OVER_TP: qwen2.py, llama4.py, step3_vl.py …: the flag changes nothing there); a class in neither (llama.py,
  qwen3_vl.py, nemotron_h.py … pass it too, their embedding split under DP attention not read) is refused by name,
  and so is a head over attention TP beside an embedding over TP (Bailing at 0.5.3rc0/rc2), which VocabSplit does
  not hold. Without DP attention SGLang turns it off where dp is 1
  (server_args.py 0.5.12:3063-3065; 0.5.23 arg_groups/overrides.py `_data_parallelism_defaults`) and asserts
  otherwise ("Please enable dp attention when setting enable_dp_lm_head.", 0.4.6.post5 … 0.5.12 server_args.py;
  0.5.23 `_dp_lm_head_validation`: "--enable-dp-lm-head requires attention DP (--attn-dp-size).").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvtop.domain.engines.sglang.vocab_split import (
    TEXT_PICKING_WRAPPERS,
    TEXT_TYPE_CLASS,
    dp_attention_embedding_class,
    sglang_vocab_split,
)
from kvtop.domain.engines.versions import FIRST_RELEASE, Era, Eras, ResolvedVersion, parse_release
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
# class → (the file whose ParallelLMHead takes `use_attn_tp_group=…enable_dp_lm_head`, the first release it does): the
# wheels 0.4.6.post5, 0.4.7, 0.4.8, 0.4.9, 0.4.9.post5, 0.4.10, 0.5.0rc0, 0.5.1, 0.5.2rc0, 0.5.2, 0.5.3rc0, 0.5.3rc2,
# 0.5.3, 0.5.4, 0.5.6 … 0.5.12, 0.5.20 and 0.5.23 read (each holds from then through 0.5.23); a release before: over TP
_BAILING = ("bailing_moe.py", "0.5.3rc0")
HEAD_OVER_ATTENTION_TP: dict[str, tuple[str, str]] = {
    "Qwen2MoeForCausalLM": ("qwen2_moe.py", "0.4.7"), "Qwen3MoeForCausalLM": ("qwen3_moe.py", "0.4.7"),
    "Qwen3ForCausalLM": ("qwen3.py", "0.5.8"), "Glm4MoeForCausalLM": ("glm4_moe.py", "0.4.9.post5"),
    "GptOssForCausalLM": ("gpt_oss.py", "0.5.0rc0"), "Qwen3NextForCausalLM": ("qwen3_next.py", "0.5.2"),
    "BailingMoeForCausalLM": _BAILING, "BailingMoeV2ForCausalLM": _BAILING, "BailingMoEForCausalLM": _BAILING,
    "FalconH1ForCausalLM": ("falcon_h1.py", "0.5.3rc2"), "LongcatFlashForCausalLM": ("longcat_flash.py", "0.5.2rc0"),
    "LLaDA2MoeModelLM": ("llada2.py", "0.5.6"), "MiMoV2FlashForCausalLM": ("mimo_v2_flash.py, mimo_v2.py", "0.5.7"),
    "MiMoV2ForCausalLM": ("mimo_v2.py", "0.5.11"), "Glm4MoeLiteForCausalLM": ("glm4_moe_lite.py", "0.5.8"),
    "SarvamMLAForCausalLM": ("sarvam_moe.py", "0.5.10rc0"), "DeepseekV4ForCausalLM": ("deepseek_v4.py", "0.5.12"),
    "BailingMoeV2_5ForCausalLM": ("bailing_moe_linear.py", "0.5.9"), "HYV4ForCausalLM": ("hunyuan_v4.py", "0.5.20"),
}  # fmt: skip
# every DeepseekV2Model user's head is DeepseekV2ForCausalLM's
DSV2_HEAD = ("deepseek_v2.py 0.4.6.post5:1422, 0.5.12:2378, 0.5.23:3296", "0.4.6.post5")
# classes whose head never takes the flag (their file's ParallelLMHead has no use_attn_tp_group, 0.5.23 and every
# release above read): the flag leaves their weights as they are
HEAD_OVER_TP: dict[str, str] = {
    "Qwen2ForCausalLM": "qwen2.py", "Qwen2AudioForConditionalGeneration": "qwen2_audio.py (a Qwen2ForCausalLM)",
    "LlavaQwenForCausalLM": "llava.py (a Qwen2ForCausalLM)", "Qwen2VLForConditionalGeneration": "qwen2_vl.py",
    "Qwen2_5_VLForConditionalGeneration": "qwen2_5_vl.py", "Llama4ForCausalLM": "llama4.py",
    "Llama4ForConditionalGeneration": "mllama4.py (a Llama4ForCausalLM)", "Step3VLForConditionalGeneration": "step3_vl.py",
}  # fmt: skip


def replicates_embedding(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> bool:
    """Whether the launch's SGLANG_ENABLE_EMBED_REPLICATION makes this class's embedding whole on every rank."""
    value = settings.flags.get(EMBED_ENV)
    if not isinstance(value, str) or value.strip().lower() not in TRUE_WORDS:
        return False
    codes, classes = REPLICATING_ERAS.at(version)
    entry = dp_attention_embedding_class(model)
    return model.architecture in classes or (entry is not None and entry.built_by in codes)


def _head_class(model: ModelSpec) -> str:
    """The class that builds the LM head: a wrapper's language model (vocab_split.TEXT_PICKING_WRAPPERS) or the model's."""
    if model.architecture in TEXT_PICKING_WRAPPERS:
        return TEXT_TYPE_CLASS.get(model.model_type, "")
    return model.architecture


def dp_head(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> bool | None:
    """Under DP attention with --enable-dp-lm-head: True where the class's head splits over attention TP at this
    release, False where it does not (or the flag is not set, or no DP attention), None where not read."""
    if not settings.flags.get(DP_HEAD_KEY) or not settings.enable_dp_attention:
        return False
    entry, name = dp_attention_embedding_class(model), _head_class(model)
    row = DSV2_HEAD if entry is not None and entry.built_by == _DSV2 else HEAD_OVER_ATTENTION_TP.get(name)
    if row is not None:
        return version.release is None or version.release >= (parse_release(row[1]) or FIRST_RELEASE)
    return False if name in HEAD_OVER_TP else None


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
    head = dp_head(model, settings, ledger.version)
    if head is None:
        return Refusal(field=DP_HEAD_FLAG, message=f"{DP_HEAD_FLAG} on {model.architecture}: whether SGLang "
                       f"{ledger.version.label}'s class splits its LM head over attention TP is not read (not "
                       "modelled); plan without it", source="vocab_launch.py HEAD_OVER_ATTENTION_TP")  # fmt: skip
    base = sglang_vocab_split(model, settings, ledger.version)
    if head and not (base.embedding_whole or base.embedding_over_attention_tp or base.over_attention_tp):
        return Refusal(field=DP_HEAD_FLAG, message=f"{DP_HEAD_FLAG} on {model.architecture}: SGLang "
                       f"{ledger.version.label} splits its LM head over attention TP and its embedding over TP, which "
                       "kvtop's vocab split does not hold (not modelled); plan without it",
                       source="vocab_launch.py; vocab_split.py GROUP_ERAS")  # fmt: skip
    return None
