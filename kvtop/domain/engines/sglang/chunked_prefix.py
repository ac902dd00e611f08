"""SGLang's `--disable-chunked-prefix-cache`: no effect on a model without MLA, not modelled on one with it.

The chunked prefix cache is the MLA prefill path that reads a cached prefix in chunks (DeepSeek's MHA-over-prefix
prefill). SGLang turns it off by itself wherever the model is not MLA or the prefill backend cannot read that layout,
before anything is sized: 0.5.9 `ModelRunner.__init__` (srt/model_executor/model_runner.py:685-690, `if not
self.use_mla_backend or server_args.attention_backend not in CHUNKED_PREFIX_CACHE_SUPPORTED_ATTENTION_BACKENDS:
server_args.disable_chunked_prefix_cache = True`), 0.5.23 `maybe_disable_chunked_prefix_cache`
(srt/model_executor/model_runner_components/misc_utils.py:26-48, called from model_runner.py:432). On such a model the
flag only says what SGLang sets anyway: nothing kvtop sizes changes. On an MLA model it picks the prefill path and, at
0.5.23, the prefill CUDA graphs' capture variants (runner/prefill_cuda_graph_runner.py:557-561
`_capture_chunked_prefix`): not modelled, refused by name. Read in the 0.5.9 wheel (PyPI) and 0.5.23's; the flag is
in every release kvtop reads from 0.4.6.post5 (flags_table)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvtop.domain.errors import InputError
from kvtop.domain.model import MLA_KINDS

if TYPE_CHECKING:
    from kvtop.domain.engines.base import EngineInputs

FLAG = "--disable-chunked-prefix-cache"
KEY = "disable-chunked-prefix-cache"  # its `LaunchSettings.flags` key


def check_chunked_prefix(inputs: EngineInputs) -> None:
    """Refuse the flag on an MLA model (its prefill path and graphs are not modelled); on any other model it is
    what SGLang sets by itself, so the plan stands."""
    if inputs.settings.flags.get(KEY) in (None, False) or inputs.model.attention_kind not in MLA_KINDS:
        return
    raise InputError(
        f"{FLAG}: on an MLA model ({inputs.model.architecture}) it changes SGLang's prefill path and its prefill "
        "CUDA graphs, which kvtop does not model: plan without it, or read the log of a start that used it with "
        "`kvtop explain` (on a model without MLA SGLang sets it by itself)",
        field=FLAG,
    )
