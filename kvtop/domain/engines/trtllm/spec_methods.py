"""The `speculative_config.decoding_type` values TensorRT-LLM accepts (docs/engines/trtllm.md §15).

2025 trees dispatch on `DecodingBaseConfig.from_dict`'s table (MTP, Medusa, Eagle, Lookahead, NGram, DraftTarget,
then SaveState, UserProvided, AUTO); the 2026 main (0004396) on the `decoding_type` Literal of each member of the
`SpeculativeConfig` union (Eagle3, Draft_Target, User_Provided, SA, PARD, DFlash, DSpark beside them), an unknown
value failing validation. No release tag was read (§16: the repository is over the reading tools' limit), so every
release is checked against the union of the trees read, and spellings are compared as the two tables differ
(case and underscores aside): a launch is never refused for a value one of them takes.
"""

from __future__ import annotations

from enum import Enum

from kvtop.domain.engines.versions import Era, Eras

METHODS = ("MTP", "Medusa", "Eagle", "Eagle3", "Lookahead", "NGram", "DraftTarget", "SaveState", "UserProvided",
           "AUTO", "SA", "PARD", "DFlash", "DSpark")  # fmt: skip
METHOD_ERAS: Eras[tuple[str, ...]] = Eras((
    Era("", METHODS, "tensorrt_llm/llmapi/llm_args.py DecodingBaseConfig.from_dict (2025 trees) and the "
        "SpeculativeConfig union's decoding_type Literals (main 0004396, 2026); no release tag read"),
))  # fmt: skip


def fold(word: str) -> str:
    """'Draft_Target', 'drafttarget' → 'drafttarget': the spellings the trees read differ only so."""
    return word.replace("_", "").lower()


class Drafter(str, Enum):
    """What a decoding_type drafts with, each worded honestly in the not-modelled term (trtllm/deployment.py)."""

    DRAFT_MODEL = "draft_model"  # Eagle, Eagle3, DraftTarget, PARD, DFlash, DSpark, Medusa's heads: a draft's weights
    MTP = "mtp"  # the target's own next-n layers
    NGRAM = "ngram"  # the prompt's n-grams: no model
    LOOKAHEAD = "lookahead"  # Lookahead: the target itself drafts (Jacobi lookahead windows, an n-gram pool), no draft
    SUFFIX_AUTOMATON = "suffix_automaton"  # SA: a per-request suffix automaton of the tokens so far, no model
    USER_PROVIDED = "user_provided"  # UserProvided: a drafter the user's code supplies, its memory unknown to kvtop
    CHOSEN_BY_ENGINE = "chosen_by_engine"  # AUTO: TensorRT-LLM picks the method
    SAVE_STATE = "save_state"  # SaveState: saves hidden states for training a draft, no drafting


_DRAFTERS = {
    "mtp": Drafter.MTP, "ngram": Drafter.NGRAM, "lookahead": Drafter.LOOKAHEAD, "sa": Drafter.SUFFIX_AUTOMATON,
    "userprovided": Drafter.USER_PROVIDED, "auto": Drafter.CHOSEN_BY_ENGINE, "savestate": Drafter.SAVE_STATE,
}  # fmt: skip


def drafter(decoding_type: str) -> Drafter:
    """The drafter a decoding_type (any spelling `fold` takes) names; the rest of METHODS load a draft's weights."""
    return _DRAFTERS.get(fold(decoding_type), Drafter.DRAFT_MODEL)
