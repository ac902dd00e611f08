"""The max_seq_len TensorRT-LLM's PyTorch backend runs at (docs/engines/trtllm.md §33).

`PyTorchModelEngine._init_max_seq_len` (_torch/pyexecutor/model_engine.py), run by `_init_model_capacity` before
`_init_max_num_tokens` caps max_num_tokens at max_batch_size × max_seq_len (§30, `budget.executor_max_num_tokens`):
- an unset max_seq_len is the inferred one, `_infer_max_seq_len_from_config`: the config's max_position_embeddings
  (its text_config's for a multimodal model; 2,048 where neither states one), × the rope block's `factor` (rounded up)
  unless the rope type is su, longrope, llama3 or yarn (stored copies search-index ids 707893322, 3514536498; the
  oldest copies, ids 5661567389 and 5682132957, call the model's own `infer_max_seq_len()`: taken alike);
- a stated max_seq_len above the inferred one is kept in the oldest copies and lowered to it from PR #4879 (nvbug
  5319281, opened 2025-06-03: "avoid the user specifying a max_seq_len … higher than what the model supports"; ids
  1034563403, 707893322, 3514536498, "py_executor_creator makes sure that the executor uses this smaller value");
  its first release is not read in a release tree: 1.0.0rc0, the first main-line release after the PR opened, is
  assumed (the 0.21 branch planned without it). No release refuses a longer length: it starts at the lowered one, and
  the plan says so (`max_seq_len_note`). PR #10600 (merged 2026-01-16; ids 69471950776, 70433821559) keeps a longer
  one, with a warning, where the environment variable TLLM_ALLOW_LONG_MAX_MODEL_LEN reads true
  (`os.getenv(…, "0").lower() in ["1", "true", "yes", "y"]`, no strip), read from the launch line (flags.py env_read)
  by `LONG_CONTEXT_ERAS`.
A TensorRT engine runs at the max_seq_len its build took (`trtllm-build`'s own deduction, not read here).
"""

from __future__ import annotations

import math

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import ModelSpec
from kvtop.domain.refusals import AbovePositions, ContextOverride, allowed_note

ALLOW_LONG_ENV = "TLLM_ALLOW_LONG_MAX_MODEL_LEN"

NO_FACTOR_ROPE_TYPES = frozenset({"su", "longrope", "llama3", "yarn"})  # their factor is not a length multiple
# `inferred_max_seq_len = 2048` where the config states no max_position_embeddings (kvtop's nominal positions then,
# `ModelSpec.positions_nominal`, are the same 2,048 by another engine's rule: taken from here)
UNSTATED_POSITIONS = 2048

# whether a stated max_seq_len above the inferred one is lowered to it
LOWERED_ERAS: Eras[bool] = Eras((
    Era("", False, "model_engine.py _init_max_seq_len keeps a stated max_seq_len (ids 5661567389, 5682132957)"),
    Era("1.0.0rc0", True, "PR #4879 (nvbug 5319281, opened 2025-06-03): lowered to the inferred one (ids 1034563403, "
                          "707893322, 3514536498); 1.0.0rc0 assumed the first; from PR #10600 (2026-01-16) kept "
                          "under TLLM_ALLOW_LONG_MAX_MODEL_LEN (`LONG_CONTEXT_ERAS`)"),
))  # fmt: skip

# how each release reads the variable that keeps a stated max_seq_len above the inferred one
LONG_CONTEXT_ERAS: Eras[ContextOverride] = Eras((
    Era("", ContextOverride(env=ALLOW_LONG_ENV, read=False),
        "no variable: _init_max_seq_len lowers whatever the environment (ids 1034563403, 707893322, 3514536498)"),
    Era("1.3.0rc0", ContextOverride(env=ALLOW_LONG_ENV, truthy=frozenset({"1", "true", "yes", "y"})),
        "PR #10600 (merged 2026-01-16): _init_max_seq_len `os.getenv('TLLM_ALLOW_LONG_MAX_MODEL_LEN', '0').lower() in "
        "['1', 'true', 'yes', 'y']` warns and keeps the stated length (ids 69471950776, 70433821559); 1.3.0rc0 "
        "(2026-01-22) the first, by main's log (id 56421983517): 'Bump version to 1.3.0rc0 (#10681)' f4ace99218 on "
        "01-15, #10600 as 722978b837 on 01-16, 'Bump version to 1.3.0rc1 (#10923)' 0243abee22 on 01-22, the day "
        "1.3.0rc0 reached PyPI (each rc ships on the next bump's day: 1.3.0rc3 and the rc4 bump on 02-12); 1.2.0rc8 "
        "(01-15) before the merge, and no cherry-pick of #10600 to release/1.2 in the index; the rc0 tag's tree not "
        "read (no release snapshot fetchable); 1.3.0rc9's own guides set it (ids 55867783273, 62244817597)"),
))  # fmt: skip


def _factor_scales(model: ModelSpec) -> bool:
    """Whether the rope's factor multiplies the length: a factor other than 1, of a type outside NO_FACTOR_ROPE_TYPES."""
    return model.rope_type not in NO_FACTOR_ROPE_TYPES and model.rope_factor != 1


def inferred_max_seq_len(model: ModelSpec) -> int:
    """`_infer_max_seq_len_from_config`: the config's positions, scaled by a length-multiplying rope's factor."""
    positions = UNSTATED_POSITIONS if model.positions_nominal else model.max_position_embeddings
    return math.ceil(positions * model.rope_factor) if _factor_scales(model) else positions


def _whose(model: ModelSpec) -> str:
    """What the inferred length is, as a note names it."""
    scaled = f" × the rope factor {model.rope_factor:g}, rounded up" if _factor_scales(model) else ""
    if not model.positions_nominal:
        return f"max_position_embeddings{scaled}"
    unstated = f"{UNSTATED_POSITIONS:,} where the config states no max_position_embeddings"
    return f"{unstated},{scaled}" if scaled else unstated


def _above(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> AbovePositions | None:
    """A stated max_seq_len above the inferred one, in a release that lowers it unless told not to."""
    inferred, stated = inferred_max_seq_len(model), settings.context_length
    if not stated or stated <= inferred or not LOWERED_ERAS.at(version):
        return None
    return AbovePositions(stated=stated, positions=inferred, whose=_whose(model))


def pytorch_max_seq_len(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> int:
    """The launch's max_seq_len, else the inferred one; a stated one above the inferred is lowered to it from
    1.0.0rc0 (`LOWERED_ERAS`) unless the launch's TLLM_ALLOW_LONG_MAX_MODEL_LEN reads true (`LONG_CONTEXT_ERAS`)."""
    above = _above(model, settings, version)
    if above is not None and not LONG_CONTEXT_ERAS.at(version).allows(settings.flags):
        return above.positions
    return settings.context_length or inferred_max_seq_len(model)


def max_seq_len_note(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> str | None:
    """The plan's note where a stated max_seq_len is above the inferred one: lowered to it (the engine starts, and
    warns), or kept under the launch's TLLM_ALLOW_LONG_MAX_MODEL_LEN (`allowed_note`); None otherwise."""
    above = _above(model, settings, version)
    if above is None:
        return None
    override = LONG_CONTEXT_ERAS.at(version)
    kept = allowed_note(above, override, settings, version)
    if kept is not None:
        return kept
    told = f"; it keeps it with {override.spelled}" if override.spelled else ""
    return (f"TensorRT-LLM {version.label} lowers --max_seq_len {above.stated:,} to the model's {above.positions:,} "
            f"({above.whose}) and logs its warning: planned at {above.positions:,}{override.unread(settings.flags)}"
            f"{told}")
