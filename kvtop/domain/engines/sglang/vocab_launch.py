"""What a launch's own switches do to SGLang's vocab embedding and LM head, over vocab_split.py's split by class.

- `SGLANG_ENABLE_EMBED_REPLICATION` (an environment variable: a leading `NAME=VALUE` of a `--cmd` launch line,
  flags.py env_read; srt/environ.py `EnvBool`: true/1/yes/y): `get_embedding_tp_kwargs()` (srt/layers/
  vocab_parallel_embedding.py:166-185, first in 0.5.13) returns `{"enable_tp": False}`, so the model code that builds
  its input embedding through it holds the whole table on every rank (a VocabParallelEmbedding at tp_size 1: rows
  padded to 64), with DP attention or without; the LM head is untouched. Its users (REPLICATING_ERAS) read in the
  0.5.13, 0.5.17, 0.5.20 and 0.5.23 wheels. Other classes ignore it.
- `--enable-dp-lm-head` (first in 0.4.6.post5): a class whose `ParallelLMHead(..., use_attn_tp_group=enable_dp_lm_head)`
  takes it (deepseek_v2.py 0.4.6.post5:1422, 0.5.23:3296 and every DeepseekV2Model user; llama.py 0.4.6.post5:424 …
  0.5.23:578 and its subclasses; HEAD_OVER_ATTENTION_TP: Qwen2/3-MoE from 0.4.7, GLM-4.5, GPT-OSS, Qwen3 from 0.5.8, …)
  splits its head over attention TP under DP attention (tp ÷ dp; whole where dp == tp), rows padded to 64 as over TP,
  the embedding as vocab_split.py builds it (Llama's over TP: llama.py's VocabParallelEmbedding takes no DP switch);
  a tied head is the embedding (llama.py `self.lm_head = self.model.embed_tokens`) and moves with it. Bailing's
  model code at 0.5.3rc0 splits its embedding by the same flag (EMBEDDING_TAKES_DP_HEAD). Classes whose head never
  takes it (HEAD_OVER_TP: qwen2.py, llama4.py, step3_vl.py …): nothing changes; a class in neither (qwen3_vl.py,
  nemotron_h.py … pass it too, their embedding split under DP attention not read) is refused by name. Without DP
  attention SGLang turns it off where dp is 1 (server_args.py 0.5.12:3063-3065; 0.5.23 arg_groups/overrides.py
  `_data_parallelism_defaults`) and asserts otherwise ("Please enable dp attention when setting enable_dp_lm_head.",
  0.4.6.post5 … 0.5.14 server_args.py, 0.5.15 … 0.5.20 arg_groups/overrides.py `_dp_lm_head_validation`; 0.5.23
  there: "--enable-dp-lm-head requires attention DP (--attn-dp-size).").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kvtop.domain.engines.sglang.vocab_split import (
    TEXT_PICKING_WRAPPERS,
    TEXT_TYPE_CLASS,
    dp_attention_embedding_class,
)
from kvtop.domain.engines.versions import FIRST_RELEASE, Era, Eras, ResolvedVersion, parse_release
from kvtop.domain.layout import SplitGroup, VocabSplit
from kvtop.domain.refusals import Refusal

if TYPE_CHECKING:
    from kvtop.domain.launch import LaunchSettings
    from kvtop.domain.ledger import Ledger
    from kvtop.domain.model import ModelSpec

EMBED_ENV = "SGLANG_ENABLE_EMBED_REPLICATION"
# srt/environ.py EnvBool.parse, from 0.5.3rc2 (:82-89; 0.5.23 :143-150): `value.lower() in …`, no strip
TRUE_WORDS = frozenset({"true", "1", "yes", "y"})
DP_HEAD_FLAG = "--enable-dp-lm-head"
DP_HEAD_KEY = DP_HEAD_FLAG.removeprefix("--")  # its LaunchSettings.flags key
_DSV2 = "DeepseekV2Model"

# the model code (vocab_split.GROUP_ERAS's names) that builds the input embedding with **get_embedding_tp_kwargs()
REPLICATING_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), "no get_embedding_tp_kwargs() before 0.5.13 (vocab_parallel_embedding.py)"),
    Era("0.5.13", frozenset({_DSV2}), "deepseek_v2.py 0.5.13:2255 `**get_embedding_tp_kwargs()`"),
    Era("0.5.17", frozenset({_DSV2, "KimiK3LinearModel"}), "kimi_k3.py KimiK3LinearModel 0.5.17:2367 (its first)"),
    Era("0.5.20", frozenset({_DSV2, "KimiK3LinearModel", "HYV4Model", "Glm5NextModel"}),
        "hunyuan_v4.py 0.5.20, 0.5.23:692; glm5_next.py Glm5NextModel 0.5.20:870, 0.5.23:1030 (both first releases)"),
    Era("0.5.23", frozenset({_DSV2, "KimiK3LinearModel", "HYV4Model", "Glm5NextModel", "MuseSpark1xModel"}),
        "muse_spark.py MuseSpark1xModel 0.5.23:1082 (its first)"),
))  # fmt: skip
# SGLang's assertion where the flag is set without DP attention at dp > 1: (its words, where)
DP_HEAD_ASSERT_ERAS: Eras[tuple[str, str]] = Eras((
    Era("", ("Please enable dp attention when setting enable_dp_lm_head.", "server_args.py ServerArgs"),
        "read at 0.4.6.post5, 0.5.12, 0.5.13 (server_args.py:3333), 0.5.14 (:5061 _handle_data_parallelism)"),
    Era("0.5.15", ("Please enable dp attention when setting enable_dp_lm_head.",
                   "arg_groups/overrides.py _dp_lm_head_validation"),
        "read at 0.5.15 (arg_groups/overrides.py:1792), 0.5.16 (:1953), 0.5.17 (:2316), 0.5.20 (:1485)"),
    Era("0.5.23", ("--enable-dp-lm-head requires attention DP (--attn-dp-size).",
                   "arg_groups/overrides.py _dp_lm_head_validation"), "read at 0.5.23 (0.5.21, 0.5.22 not read)"),
))  # fmt: skip
# the classes whose ParallelLMHead takes `use_attn_tp_group=…enable_dp_lm_head` (DpHeadRow: file, first release): the
# wheels 0.4.6.post5, 0.4.7, 0.4.8, 0.4.9, 0.4.9.post5, 0.4.10, 0.5.0rc0, 0.5.1, 0.5.2rc0, 0.5.2, 0.5.3rc0, 0.5.3rc2,
# 0.5.3, 0.5.4, 0.5.6 … 0.5.12, 0.5.17, 0.5.20 and 0.5.23 read (each holds from then through 0.5.23); a release
# before: over TP
_READ = "0.4.6.post5 … 0.5.12, 0.5.17, 0.5.20, 0.5.23"
_BAILING = ("bailing_moe.py", "0.5.3rc0")
_LLAMA = ("llama.py", "0.4.6.post5")  # LlamaForCausalLM's head (0.4.6.post5:424 … 0.5.23:578); its `pass` subclasses


@dataclass(frozen=True)
class DpHeadRow:
    """A class whose LM head takes `--enable-dp-lm-head`: from release `since` through 0.5.23 (every wheel of `_READ`
    between them), its `file`'s ParallelLMHead is built with `use_attn_tp_group=…enable_dp_lm_head`; before `since`,
    over TP."""

    architecture: str
    file: str
    since: str

    def splits_at(self, version: ResolvedVersion) -> bool:
        """Whether the head splits over attention TP at `version` (not stated: the newest read, so it does)."""
        return version.release is None or version.release >= (parse_release(self.since) or FIRST_RELEASE)


HEAD_OVER_ATTENTION_TP: tuple[DpHeadRow, ...] = (
    DpHeadRow("Qwen2MoeForCausalLM", "qwen2_moe.py", "0.4.7"),
    DpHeadRow("Qwen3MoeForCausalLM", "qwen3_moe.py", "0.4.7"),
    DpHeadRow("Qwen3ForCausalLM", "qwen3.py", "0.5.8"),
    DpHeadRow("Glm4MoeForCausalLM", "glm4_moe.py", "0.4.9.post5"),
    DpHeadRow("GptOssForCausalLM", "gpt_oss.py", "0.5.0rc0"),
    DpHeadRow("Qwen3NextForCausalLM", "qwen3_next.py", "0.5.2"),
    DpHeadRow("BailingMoeForCausalLM", *_BAILING),
    DpHeadRow("BailingMoeV2ForCausalLM", *_BAILING),
    DpHeadRow("BailingMoEForCausalLM", *_BAILING),
    DpHeadRow("FalconH1ForCausalLM", "falcon_h1.py", "0.5.3rc2"),
    DpHeadRow("LongcatFlashForCausalLM", "longcat_flash.py", "0.5.2rc0"),
    DpHeadRow("LLaDA2MoeModelLM", "llada2.py", "0.5.6"),
    DpHeadRow("MiMoV2FlashForCausalLM", "mimo_v2_flash.py, mimo_v2.py", "0.5.7"),
    DpHeadRow("MiMoV2ForCausalLM", "mimo_v2.py", "0.5.11"),
    DpHeadRow("Glm4MoeLiteForCausalLM", "glm4_moe_lite.py", "0.5.8"),
    DpHeadRow("SarvamMLAForCausalLM", "sarvam_moe.py", "0.5.10rc0"),
    DpHeadRow("DeepseekV4ForCausalLM", "deepseek_v4.py", "0.5.12"),
    DpHeadRow("BailingMoeV2_5ForCausalLM", "bailing_moe_linear.py", "0.5.9"),
    DpHeadRow("HYV4ForCausalLM", "hunyuan_v4.py", "0.5.20"),
    DpHeadRow("LlamaForCausalLM", *_LLAMA),
    DpHeadRow("Phi3ForCausalLM", *_LLAMA),
    DpHeadRow("InternLM3ForCausalLM", *_LLAMA),
    DpHeadRow("IQuestCoderForCausalLM", *_LLAMA),
    DpHeadRow("MistralForCausalLM", "mistral.py (a LlamaForCausalLM)", "0.4.6.post5"),
    DpHeadRow("KimiK3ForConditionalGeneration", "kimi_k3.py KimiK3LinearForCausalLM 0.5.17:2609, 0.5.23:3032", "0.5.17"),
    DpHeadRow("KimiK3LinearForCausalLM", "kimi_k3.py 0.5.17:2609, 0.5.23:3032", "0.5.17"),
    DpHeadRow("Glm5NextForConditionalGeneration", "glm5_next.py 0.5.20:1146, 0.5.23:1293", "0.5.20"),
    DpHeadRow("MuseSparkForConditionalGeneration", "muse_spark.py MuseSparkTextForCausalLM 0.5.23:1281", "0.5.23"),
)  # fmt: skip
_HEAD_ROWS = {row.architecture: row for row in HEAD_OVER_ATTENTION_TP}
# every DeepseekV2Model user's head is DeepseekV2ForCausalLM's
DSV2_HEAD = DpHeadRow(_DSV2, "deepseek_v2.py 0.4.6.post5:1422, 0.5.12:2378, 0.5.23:3296", "0.4.6.post5")
# classes whose head never takes the flag (their file's ParallelLMHead has no use_attn_tp_group, 0.5.23 and every
# release above read): the flag leaves their weights as they are
HEAD_OVER_TP: dict[str, str] = {
    "Qwen2ForCausalLM": "qwen2.py", "Qwen2AudioForConditionalGeneration": "qwen2_audio.py (a Qwen2ForCausalLM)",
    "LlavaQwenForCausalLM": "llava.py (a Qwen2ForCausalLM)", "Qwen2VLForConditionalGeneration": "qwen2_vl.py",
    "Qwen2_5_VLForConditionalGeneration": "qwen2_5_vl.py", "Llama4ForCausalLM": "llama4.py",
    "Llama4ForConditionalGeneration": "mllama4.py (a Llama4ForCausalLM)", "Step3VLForConditionalGeneration": "step3_vl.py",
}  # fmt: skip
# model code whose input embedding takes the same flag, by release: Bailing's at 0.5.3rc0 only (its next read, 0.5.3rc2,
# builds it whole under DP attention: vocab_split.GROUP_ERAS)
EMBEDDING_TAKES_DP_HEAD: dict[str, Eras[bool]] = {
    "BailingMoEModel": Eras((
        Era("", False, "bailing_moe.py 0.5.1 … 0.5.2: VocabParallelEmbedding over TP"),
        Era("0.5.3rc0", True, "bailing_moe.py 0.5.3rc0:700-706 `use_attn_tp_group=global_server_args_dict"
                              "['enable_dp_lm_head']`"),
        Era("0.5.3rc2", False, "bailing_moe.py 0.5.3rc2:723-729 `enable_tp=not is_dp_attention_enabled()`"),
    )),
}  # fmt: skip


def replicates_embedding(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> bool:
    """Whether the launch's SGLANG_ENABLE_EMBED_REPLICATION makes this class's embedding whole on every rank."""
    value = settings.flags.get(EMBED_ENV)
    if not isinstance(value, str) or value.lower() not in TRUE_WORDS:
        return False
    entry = dp_attention_embedding_class(model)
    return entry is not None and entry.built_by in REPLICATING_ERAS.at(version)


def _head_class(model: ModelSpec) -> str:
    """The class that builds the LM head: a wrapper's language model (vocab_split.TEXT_PICKING_WRAPPERS) or the model's."""
    if model.architecture in TEXT_PICKING_WRAPPERS:
        return TEXT_TYPE_CLASS.get(model.model_type, "")
    return model.architecture


def _head_row(model: ModelSpec) -> DpHeadRow | None:
    """The row of the class whose head takes the flag, or None where the class is not in either table."""
    entry = dp_attention_embedding_class(model)
    return DSV2_HEAD if entry is not None and entry.built_by == _DSV2 else _HEAD_ROWS.get(_head_class(model))


def dp_head(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> bool | None:
    """Under DP attention with --enable-dp-lm-head: True where the class's head splits over attention TP at this
    release, False where it does not (or the flag is not set, or no DP attention), None where not read."""
    if not settings.flags.get(DP_HEAD_KEY) or not settings.enable_dp_attention:
        return False
    row = _head_row(model)
    if row is not None:
        return row.splits_at(version)
    return False if _head_class(model) in HEAD_OVER_TP else None


def _embedding_takes_dp_head(model: ModelSpec, version: ResolvedVersion) -> bool:
    entry = dp_attention_embedding_class(model)
    eras = EMBEDDING_TAKES_DP_HEAD.get(entry.built_by) if entry is not None else None
    return eras is not None and eras.at(version)


def with_launch_switches(
    split: VocabSplit, model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion
) -> VocabSplit:
    """vocab_split.py's split with the embedding whole under SGLANG_ENABLE_EMBED_REPLICATION and the LM head over
    attention TP under --enable-dp-lm-head, where the class's code reads them."""
    replicated, head = replicates_embedding(model, settings, version), dp_head(model, settings, version) is True
    if not (replicated or head):
        return split
    embedding = SplitGroup.WHOLE if replicated else split.embedding
    notes = [split.note] if split.note and not replicated else []
    if replicated:
        notes.append(f"{EMBED_ENV}: SGLang {version.label} builds it whole on every rank (get_embedding_tp_kwargs, "
                     "vocab_parallel_embedding.py; vocab_launch.py)")  # fmt: skip
    elif head and embedding is SplitGroup.TP and _embedding_takes_dp_head(model, version):
        embedding = SplitGroup.ATTENTION_TP
        notes.append(f"{DP_HEAD_FLAG}: SGLang {version.label} splits the embedding over attention TP too "
                     "(bailing_moe.py use_attn_tp_group; vocab_launch.py)")  # fmt: skip
    if head:
        where = _head_row(model)
        assert where is not None  # dp_head is True only for a class one of the head tables names
        notes.append(f"{DP_HEAD_FLAG}: the LM head splits over attention TP ({where.file} ParallelLMHead "
                     "use_attn_tp_group; vocab_launch.py)")  # fmt: skip
    return VocabSplit(
        embedding=embedding,
        lm_head=SplitGroup.ATTENTION_TP if head else split.lm_head,
        # SGLang's whole tables here are VocabParallelEmbeddings at tp_size 1: rows padded to 64
        embedding_rows_padded=embedding is SplitGroup.WHOLE,
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
                       "modelled); plan without it", source=f"srt/models: each class's ParallelLMHead `use_attn_tp_group` (read at {_READ}); "
                       f"{model.architecture}'s not among them")  # fmt: skip
    return None
