"""Which modality vLLM's encoder profile runs when two modalities have the most tokens per item
(`MultiModalBudget.get_modality_with_max_tokens`, docs/engines/vllm.md §24).

Before v0.17.0 `max(mm_max_toks_per_item.items(), key=lambda x: x[1])` keeps the first of the largest in the dict
(the processing info's `get_supported_mm_limits` order: the image before the video). From v0.17.0 the key is
`(x[1], x[0])`, so a tie goes to the larger name: the video over the image. A tie changes the profile's bytes only
through the modality's own per-prompt limit (`--limit-mm-per-prompt`), since equal tokens are equal patches,
pixels and outputs; the plan names the modality vLLM runs.
"""

from __future__ import annotations

from collections.abc import Mapping

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion

TIE_BY_NAME_ERAS: Eras[bool] = Eras((
    Era("", False, "`max(..., key=lambda x: x[1])`: the first of the largest (v1/worker/utils.py:77 at v0.11.0, "
                   "multimodal/encoder_budget.py:183 at v0.16.0)"),
    Era("0.17.0", True, "`max(..., key=lambda x: (x[1], x[0]))`: the larger name on a tie (multimodal/encoder_budget.py"
                        ":184 at v0.17.0, v0.18.0, v0.19.0, v0.20.0, v0.25.1; :191 at v0.27.1, "
                        "v0.28.0, v0.29.0, v0.30.0)"),
))  # fmt: skip


def profiled_modality(tokens: Mapping[str, int], version: ResolvedVersion) -> str:
    """The modality of the most tokens per item in `tokens` (in vLLM's dict order), a tie broken as the release
    breaks it (`TIE_BY_NAME_ERAS`)."""
    if TIE_BY_NAME_ERAS.at(version):
        return max(tokens, key=lambda name: (tokens[name], name))
    return max(tokens, key=lambda name: tokens[name])
