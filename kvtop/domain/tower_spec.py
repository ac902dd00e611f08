"""A vision tower's weights as values: `TowerSpec` (its parameters, by how engines split them) and `TowerSplit`
(how one engine's own model code builds the parts engines disagree on), and the parameters one rank holds.

The architectures' tower entries (`kvtop.domain.architectures.towers*`) build the `TowerSpec`; each engine package
states its `TowerSplit` (`architectures.TOWER_SPLIT`); the weights book asks `params_per_rank`. The block rules per
encoder class are `kvtop.domain.tower_blocks`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from kvtop.domain.engines.versions import parse_release
from kvtop.domain.rounding import round_up
from kvtop.domain.tower_blocks import BlockSplit, cannot_build, dummy_heads, splits
from kvtop.domain.vocab_rows import vocab_parallel_rows


class TowerSplit(BaseModel):
    """How an engine's own model code builds the parts engines disagree on (each engine package's
    `architectures.TOWER_SPLIT`): a learned position table split by rows over TP (`VocabParallelEmbedding`)
    rather than whole, block linears another engine builds replicated split over TP, and a projector another
    engine splits (Column/RowParallelLinear) built whole (transformers' nn.Linear projector class); and, named by
    architecture class, a language model's embedding or V projection another engine builds otherwise."""

    model_config = ConfigDict(frozen=True)
    position_table: bool = False
    replicated_linears: bool = False
    projector_whole: bool = False
    mlp_multiple: int = 1  # a padded MLP width (SGLang qwen2_5_vl.py: up to a multiple of 8), where the tower says
    mlp_divides: bool = False  # that width unpadded must divide by TP (vLLM MergedColumnParallelLinear asserts it)
    block_mlp_whole: bool = False  # block MLPs built nn.Linear (SGLang kimi_k25.py MLP2), where the tower says
    post_norm: bool = False  # a final LayerNorm built that another engine skips (SGLang's MiniMax-M3 tower)
    float32_norms: bool = False  # LayerNorms the tower names (TowerSpec.float32_norm_params) held in float32
    # encoder classes (TowerSpec.block_class) whose position table the engine builds in float32 whatever the model's
    # dtype (TowerSpec.float32_table_params; vLLM 0.33.0 voxtral.py: WhisperEncoder(init_in_fp32=True))
    float32_tables: tuple[str, ...] = ()
    # towers (by TowerSpec.config_class) whose head-split blocks the engine builds nn.Linear, whole on every rank
    # (SGLang 0.5.23 kimi_k3_vl.py: Kimi-K3's MoonViT runs data-parallel)
    whole_blocks: tuple[str, ...] = ()
    # Beyond the tower, the language model's parts an engine's own class builds its way (by architecture class):
    whole_embedding: tuple[str, ...] = ()  # a plain nn.Embedding: vocab × hidden whole on every rank, unpadded
    # V built beside K on attention_k_eq_v layers, K copied into it at load (SGLang's and vLLM's Gemma-4)
    k_eq_v_holds_v: tuple[str, ...] = ()
    # a per-layer embedding projection split over TP beside a plain (whole) per-layer table (SGLang's Gemma-3n)
    per_layer_split: tuple[str, ...] = ()
    # K, V and k_norm built on a KV-shared layer though it reads another's KV (SGLang's Gemma-3n and Gemma-4: the
    # whole qkv_proj and k_norm on every layer, the num_kv_shared_layers ones included)
    shared_kv_holds_kv: tuple[str, ...] = ()
    # towers (by TowerSpec.config_class) whose blocks the engine gives a second output projection (SGLang 0.5.23
    # step3_vl.py: Step3VisionAttention's out_proj beside its VisionAttention's proj)
    second_out_proj: tuple[str, ...] = ()
    # towers (by TowerSpec.config_class) whose projector linears the engine builds biased where another builds them
    # unbiased (vLLM 0.33.0 midashenglm.py: Column/RowParallelLinear's default bias=True; SGLang 0.5.23 bias=False)
    projector_bias: tuple[str, ...] = ()
    # per encoder class (TowerSpec.block_class), when its attention and MLP split (kvtop.domain.tower_blocks)
    blocks: tuple[tuple[str, BlockSplit], ...] = ()
    # The engine's data-parallel encoder: the launch flag (as `LaunchSettings.flags` keys it) and the value that
    # builds the encoder whole on every TP rank, the architecture classes it applies to (others: the engine
    # ignores the flag), and whether this launch passes it (`for_launch`)
    data_parallel_flag: tuple[str, str | bool] | None = None
    data_parallel: tuple[str, ...] = ()
    data_parallel_unmodelled: tuple[str, ...] = ()  # classes that take the flag too, their build not modelled
    # (class, the first release whose class takes the flag) of the two lists above, where the class is older than
    # its taking it: at an earlier release the engine falls back to the split build
    data_parallel_since: tuple[tuple[str, str], ...] = ()
    encoder_data_parallel: bool = False
    not_yet_data_parallel: tuple[str, ...] = ()  # this launch's release: the classes that do not take it yet
    # (architecture class, the first release whose tower keeps its learned position table whole) where an older
    # release split it by rows (VocabParallelEmbedding: vLLM's siglip.py to v0.13.x); `split_tables` the classes
    # whose table this launch's release splits (`for_launch`), read through `of_class`
    split_tables_before: tuple[tuple[str, str], ...] = ()
    split_tables: tuple[str, ...] = ()
    # the first release whose block attention (TowerSpec.attention_split_params) splits over the attention-TP group
    # while the rest splits over TP (SGLang VisionAttention: `get_attention_tp_size()`); None: over TP. `attention_dp`
    # the launch's attention-DP size where its release splits so (`for_launch`), else 1
    attention_tp_since: str | None = None
    attention_dp: int = 1
    # (TowerSpec.config_class, first release) of towers whose MLPs and mergers split over the attention-TP group
    # too (SGLang 0.5.9 qwen3_vl.py: `get_attention_tp_size()`); `attention_tp_towers` those of this launch's release
    attention_tp_towers_since: tuple[tuple[str, str], ...] = ()
    attention_tp_towers: tuple[str, ...] = ()

    def for_launch(
        self, flags: Mapping[str, str | bool], release: str | None = None, attention_dp: int = 1
    ) -> TowerSplit:
        """This split as a launch with `flags` and `attention_dp` attention-DP ranks sets it at `release` (None:
        the newest read): the encoder data-parallel where it passes the flag, for the classes that take it at that
        release, the position tables that release still splits, and the attention group its blocks split over."""
        at = parse_release(release)

        def before(since: str) -> bool:
            first = parse_release(since)
            return at is not None and first is not None and at < first

        tables = tuple(cls for cls, since in self.split_tables_before if before(since))
        attention_since = self.attention_tp_since
        dp = attention_dp if attention_since is not None and not before(attention_since) else 1
        towers = tuple(cls for cls, since in self.attention_tp_towers_since if not before(since)) if dp > 1 else ()
        update = {"split_tables": tables, "attention_dp": dp, "attention_tp_towers": towers}
        if self.data_parallel_flag is None:
            return self.model_copy(update=update) if tables or dp > 1 else self
        name, value = self.data_parallel_flag
        later = tuple(cls for cls, since in self.data_parallel_since if before(since))
        return self.model_copy(update={**update, "encoder_data_parallel": flags.get(name) == value,
                                       "not_yet_data_parallel": later})  # fmt: skip

    def of_class(self, architecture: str) -> TowerSplit:
        """This split for the tower of `architecture`: its position table split by rows where this launch's
        release splits that class's (`split_tables`)."""
        return self.model_copy(update={"position_table": True}) if architecture in self.split_tables else self

    def _takes_flag(self, architecture: str, classes: tuple[str, ...]) -> bool:
        return self.encoder_data_parallel and architecture in classes and architecture not in self.not_yet_data_parallel

    def builds_whole(self, architecture: str) -> bool:
        """Whether this launch builds the tower of `architecture` whole on every rank (as at TP 1)."""
        return self._takes_flag(architecture, self.data_parallel)

    def data_parallel_not_modelled(self, architecture: str) -> str | None:
        """Why this launch's tower bytes are not the engine's: it takes the data-parallel flag for `architecture`,
        whose data-parallel build kvtop does not model (the tower stays counted split over TP); else None."""
        if not self._takes_flag(architecture, self.data_parallel_unmodelled):
            return None
        flag, value = self.data_parallel_flag or ("", "")
        spelled = f"--{flag}" if value is True else f"--{flag} {value}"
        return f"{spelled} not modelled for {architecture}: counted split over TP, the engine builds more of it whole"


# the kinds a tower's weights row is named by (`TowerSpec.kind`): the vision tower, the audio encoder, or both together
# (the Omni thinkers count their `audio_config` encoder in the vision kind's row)
TowerKind = Literal["vision", "audio", "vision_audio"]
TOWER_KINDS: tuple[TowerKind, ...] = get_args(TowerKind)
# the part of a `vision_audio` tower an engine may leave unbuilt alone, by its own modality limits (vLLM's Gemma-4)
TowerPart = Literal["vision", "audio"]


class TowerSpec(BaseModel):
    """A vision tower and its projector (whole model): its parameters, those every engine splits over TP
    (`kvtop.domain.architectures.towers`), those split only where the head count divides by TP (vLLM
    intern_vit.py: else whole), and those engines shard differently (`TowerSplit`); the rest is whole on every
    rank of the first pipeline stage."""

    model_config = ConfigDict(frozen=True)
    params: int
    tp_split_params: int
    config_class: str
    source: str
    head_split_params: int = 0  # attention split over TP only where `heads` divides by TP
    # of tp_split_params: the blocks' attention (qkv with its bias, proj), split over the attention-TP group where
    # the engine's TowerSplit.attention_tp_since says (0: not told apart, all over TP)
    attention_split_params: int = 0
    heads: int = 0
    divided_heads: tuple[int, ...] = ()  # head counts the tower's attention divides by TP, asserting (vLLM divide)
    position_params: int = 0  # a learned position table (whole, or split by rows: TowerSplit.position_table)
    position_rows: int = 0
    replicated_params: int = 0  # linears built replicated, or split (TowerSplit.replicated_linears)
    projector_params: int = 0  # of tp_split_params: the projector's, whole where TowerSplit.projector_whole
    mlp_width: int = 0  # a block MLP width an engine pads (TowerSplit.mlp_multiple), and the split parameters
    mlp_unit_params: int = 0  # each padded unit of it adds over the tower (gate, up with biases, down)
    head_split_mlp_params: int = 0  # of head_split_params: block MLPs, whole where TowerSplit.block_mlp_whole
    post_norm_params: int = 0  # a final LayerNorm not in `params`, built whole where TowerSplit.post_norm
    float32_norm_params: int = 0  # of `params`: whole LayerNorms held in float32 where TowerSplit.float32_norms
    float32_table_params: int = 0  # of `params`: a whole position table held in float32 where TowerSplit.float32_tables
    # the tower as transformers' own classes hold it (every layer whatever vision_feature_layer, its post-norm and
    # SigLIP's pooling head where vision_use_head): what a Transformers backend builds, whole on every rank
    # (StageParts.tower_as_transformers); 0 where the kind does not count it
    transformers_params: int = 0
    second_out_proj_split_params: int = 0  # a second output projection a block (TowerSplit.second_out_proj): split
    second_out_proj_whole_params: int = 0  # … and its biases, whole
    projector_bias_split_params: int = 0  # projector biases an engine adds (TowerSplit.projector_bias): split
    projector_bias_whole_params: int = 0  # … and whole (a row-parallel bias)
    block_class: str = ""  # the encoder class whose head_split_params each engine divides its way (TowerSplit.blocks)
    block_mlp_width: int = 0  # of its MLPs (head_split_mlp_params) the width a `width` rule reads; a fused K bias:
    k_bias_params: int = 0
    head_params: int = 0  # of head_split_params: one head's across the blocks (what a dummy head adds, split)
    head_norm_params: int = 0  # and whole: one head's share of q/k norms over the padded width (InternViT's)
    # what the weights book's tower row holds, in words (the config reader names an audio encoder's)
    label: str = "the vision tower and its projector"
    # the weights book's row it makes, the kind its description says (`TOWER_KINDS`): an audio encoder is no vision row
    kind: TowerKind = "vision"
    # of `params` and of `replicated_params`: an audio encoder and its embedder joined to the vision tower (Gemma-4's
    # `audio_config`), which an engine may build without the other (`tower_parts`)
    audio_params: int = 0
    audio_replicated_params: int = 0
    # the part the engine left unbuilt at this launch (`tower_parts.without_part`): what the plan's note says
    unbuilt_part: TowerPart | None = Field(default=None, exclude=True)

    def block_rule(self, split: TowerSplit | None) -> BlockSplit | None:
        """The engine's rule for this tower's encoder class, where it states one."""
        return dict((split or TowerSplit()).blocks).get(self.block_class) if self.block_class else None

    def not_built(self, tp: int, split: TowerSplit | None = None) -> str | None:
        """Why the engine's build of the tower stops at `tp` (its own assertion), else None."""
        how, rule = split or TowerSplit(), self.block_rule(split)
        if rule is not None and cannot_build(rule, tp, self.heads):
            return f"splits {self.block_class}'s attention whatever its heads: {self.heads} heads do not divide by TP {tp}"
        if how.mlp_divides and self.mlp_width and self.mlp_width % tp:
            return f"splits the tower's gated MLP unpadded: {self.mlp_width:,} wide does not divide by TP {tp}"
        return None

    def _blocks_split(self, tp: int, how: TowerSplit) -> tuple[int, int, int]:
        """(of `params` the split blocks; what the engine adds split: K bias, dummy heads; and whole) at `tp`."""
        rule = self.block_rule(how)
        if rule is None:
            heads_split = self.head_split_params - (self.head_split_mlp_params if how.block_mlp_whole else 0)
            heads_split = 0 if self.config_class in how.whole_blocks else heads_split
            return (heads_split if self.heads and self.heads % tp == 0 else 0), 0, 0
        attention_split = splits(rule.attention, tp, self.heads, self.block_mlp_width)
        out = self.head_split_params - self.head_split_mlp_params if attention_split else 0
        out += self.head_split_mlp_params if splits(rule.mlp, tp, self.heads, self.block_mlp_width) else 0
        k_bias = self.k_bias_params if rule.k_bias else 0
        dummy = dummy_heads(rule, tp, self.heads)
        added_whole = (0 if attention_split else k_bias) + dummy * self.head_norm_params
        return out, (k_bias if attention_split else 0) + dummy * self.head_params, added_whole

    def params_per_rank(self, tp: int, split: TowerSplit | None = None) -> float:
        """The parameters one rank of the first stage holds at `tp`, as the engine's `split` shards them."""
        how = split or TowerSplit()
        blocks, k_split, k_whole = self._blocks_split(tp, how)
        shared = self.tp_split_params + blocks
        shared += self.replicated_params if how.replicated_linears else 0
        shared -= self.projector_params if how.projector_whole else 0
        whole = self.params - shared + (self.post_norm_params if how.post_norm else 0) + k_whole
        shared += k_split  # a K bias or dummy heads beyond the checkpoint's parameters, split with the attention
        if self.config_class in how.second_out_proj:
            shared += self.second_out_proj_split_params
            whole += self.second_out_proj_whole_params
        if self.config_class in how.projector_bias:
            shared += self.projector_bias_split_params
            whole += self.projector_bias_whole_params
        if self.mlp_width:  # padded MLP units join the split part
            shared += (round_up(self.mlp_width, how.mlp_multiple) - self.mlp_width) * self.mlp_unit_params
        attention_tp = max(tp // how.attention_dp, 1)
        over_attention_tp = attention_tp < tp and self.config_class in how.attention_tp_towers  # all of it
        if how.position_table and self.position_rows:  # rows padded to 64, then split (VocabParallelEmbedding)
            per_row = self.position_params // self.position_rows
            rows = vocab_parallel_rows(self.position_rows, attention_tp if over_attention_tp else tp)
            whole += rows * per_row - self.position_params
        if over_attention_tp:
            return whole + shared / attention_tp
        if attention_tp < tp:  # the blocks' attention over the attention-TP group, the rest over TP
            shared -= self.attention_split_params
            return whole + self.attention_split_params / attention_tp + shared / tp
        return whole + shared / tp


__all__ = ["TowerSpec", "TowerSplit"]
