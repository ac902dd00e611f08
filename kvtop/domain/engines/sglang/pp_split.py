"""How SGLang splits a model's layers over its pipeline stages, by release (`get_pp_indices`,
python/sglang/srt/distributed/utils.py; without SGLANG_PP_LAYER_PARTITION, which kvtop does not model).

Before 0.5.6 every stage takes num_layers // pp layers and the last stage the rest as well (`if pp_rank == pp_size -
1: end_layer = num_hidden_layers`: read in the 0.5.3, 0.5.4, 0.5.5, 0.5.5.post1 and 0.5.5.post3 wheels, as vLLM's
first split was); from 0.5.6 the last num_layers % pp stages take one more each ("the last N partitions will have one
extra layer": read in the 0.5.6 … 0.5.10rc0 and 0.5.23 wheels). 62 layers at PP 4: 15, 15, 15, 17 before, 15, 15,
16, 16 from 0.5.6.
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras
from kvtop.domain.layout import PpRemainder

PP_SPLIT_ERAS: Eras[PpRemainder] = Eras((
    Era("", "last_takes_all", "distributed/utils.py get_pp_indices: the last stage ends at num_hidden_layers "
        "(0.5.3 … 0.5.5.post3 wheels)"),
    Era("0.5.6", "last", "distributed/utils.py get_pp_indices: the last num_hidden_layers % pp_size partitions take "
        "one extra layer (0.5.6 … 0.5.23 wheels)"),
))  # fmt: skip
