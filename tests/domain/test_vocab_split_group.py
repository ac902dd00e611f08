"""One typed group a vocab table (`layout.SplitGroup`): whole, attention TP, or TP, and each rank's share of it.

Expected ranks from SGLang's code, never from kvtop: under `--enable-dp-attention` the attention-TP group is tp ÷ dp
(`get_attention_tp_size()`; layers/dp_attention.py `compute_dp_attention_world_info`: `attn_tp_size = tp_size //
dp_size`), so `--tp 8 --dp 2` splits a table over attention TP on 4 ranks, over TP on 8, and whole on 1.
"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from kvtop.domain.layout import ParallelLayout, SplitGroup, VocabSplit


def test_each_group_names_its_ranks_under_dp_attention() -> None:
    layout = ParallelLayout(tp=8, dp=2, dp_attention=True)
    shards = {group: layout.vocab_shards(group) for group in SplitGroup}
    assert shards == {SplitGroup.WHOLE: 1, SplitGroup.ATTENTION_TP: 4, SplitGroup.TP: 8}


def test_the_default_splits_both_tables_over_tp() -> None:
    assert (VocabSplit().embedding, VocabSplit().lm_head) == (SplitGroup.TP, SplitGroup.TP)


@pytest.mark.parametrize("stale", ["embedding_whole", "lm_head_whole", "over_attention_tp", "embedding_over_attention_tp"])
def test_the_old_flags_are_refused_not_read_as_tp(stale: str) -> None:
    with pytest.raises(ValidationError):
        VocabSplit.model_validate({stale: True})
