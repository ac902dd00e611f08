"""The `speculative_config.decoding_type` values TensorRT-LLM accepts (docs/engines/trtllm.md §15).

2025 trees dispatch on `DecodingBaseConfig.from_dict`'s table (MTP, Medusa, Eagle, Lookahead, NGram, DraftTarget,
then SaveState, UserProvided, AUTO); the 2026 main (0004396) on the `decoding_type` Literal of each member of the
`SpeculativeConfig` union (Eagle3, Draft_Target, User_Provided, SA, PARD, DFlash, DSpark beside them), an unknown
value failing validation. No release tag was read (§16: the repository is over the reading tools' limit), so every
release is checked against the union of the trees read, and spellings are compared as the two tables differ
(case and underscores aside): a launch is never refused for a value one of them takes.
"""

from __future__ import annotations

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
