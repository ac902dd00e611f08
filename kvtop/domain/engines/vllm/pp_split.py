"""How vLLM splits a model's layers over its pipeline stages, by release (`get_pp_indices`,
vllm/distributed/utils.py), and the launch environment that overrides it.

From v0.5.1 (PR #6115, "support layer size undividable by pp size") to v0.7.3 every stage takes num_layers // pp
layers and the last stage the rest as well (`if pp_rank == pp_size - 1: end_layer = num_hidden_layers`: read in the
0.5.1, 0.6.0, 0.6.1, 0.6.3 and 0.7.3 wheels); from v0.8.0 (PR #13839, "Improve pipeline partitioning") the
num_layers % pp extra layers go one each to the stages before the last, from the second to last backwards
(`for i in range(2, remaining_layers + 2): partitions[-i] += 1`: read in the 0.8.0 and 0.11.2 wheels and on main at
5a6541db). 28 layers at PP 5: 5, 5, 5, 5, 8 before, 5, 6, 6, 6, 5 from v0.8.0. Before v0.5.1 a count that pp does not
divide was refused (config.py), which kvtop does not model.

VLLM_PP_LAYER_PARTITION (from v0.6.0: comma-separated layer counts a stage, summing to the model's layers) replaces
the split; kvtop reads it from the launch line (flags.py env_read) but does not model the stages it sets: the plan
names it not modelled (`pp_partition_not_modelled`).
"""

from __future__ import annotations

from collections.abc import Mapping

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.layout import PpRemainder

PP_PARTITION_ENV = "VLLM_PP_LAYER_PARTITION"

PP_SPLIT_ERAS: Eras[PpRemainder] = Eras((
    Era("", "last_takes_all", "distributed/utils.py get_pp_indices: the last stage ends at num_hidden_layers "
        "(PR #6115; 0.5.1 … 0.7.3 wheels)"),
    Era("0.8.0", "second_to_last", "distributed/utils.py get_pp_indices: the remainder one layer each on the stages "
        "before the last, second to last first (PR #13839; 0.8.0, 0.11.2 wheels, main 5a6541db)"),
))  # fmt: skip


def pp_partition_not_modelled(flags: Mapping[str, object] | None, pp: int, version: ResolvedVersion) -> str | None:
    """Why the plan's stages are not the ones vLLM builds: the launch set VLLM_PP_LAYER_PARTITION at pp > 1, whose
    layer counts replace get_pp_indices' split. None where it is unset or the launch has one stage."""
    stated = str((flags or {}).get(PP_PARTITION_ENV, "")).strip()
    if not stated or pp <= 1:
        return None
    return (f"{PP_PARTITION_ENV}={stated} in the launch: the pipeline stages it sets are not modelled; the plan splits "
            f"the layers as vLLM {version.label}'s get_pp_indices does without it")
