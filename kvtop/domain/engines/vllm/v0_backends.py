"""`VLLM_ATTENTION_BACKEND` naming a backend V1 does not take: V0 in the releases that still hold it (docs/engines/vllm.md §2).

`EngineArgs._is_v1_supported_oracle` (vllm/engine/arg_utils.py) returns False, and `create_engine_config` sets up
V0 ('VLLM_ATTENTION_BACKEND=XFORMERS is not supported by the V1 Engine. Falling back to V0'), where the variable is
set (`envs.is_set`: present in the environment, whatever its value) and its value, compared as written
(envs.py: `os.getenv("VLLM_ATTENTION_BACKEND", None)`, no case folding), is not in the oracle's `V1_BACKENDS`.
Under VLLM_USE_V1=1 `_raise_or_fallback` raises NotImplementedError ('VLLM_USE_V1=1 is not supported with …')
instead; under VLLM_USE_V1=0 the oracle is not asked (V0 already). Read in the PyPI wheels (manylinux x86_64):

- v0.8.0 engine/arg_utils.py:1566-1575: FLASH_ATTN_VLLM_V1, FLASH_ATTN, PALLAS, PALLAS_VLLM_V1, TRITON_MLA, FLASHMLA
  ("No FlashInfer or XFormers so far").
- v0.10.1.1 engine/arg_utils.py:1456-1477: 15 names (FLASHINFER, TRITON_ATTN_VLLM_V1, XFORMERS_VLLM_V1, … added).
- v0.10.2 engine/arg_utils.py:1502-1526: 18 names (FLASHMLA_VLLM_V1, FLASH_ATTN_MLA, FLASHINFER_MLA added).
- v0.11.0: no V0 (vllm#25033), no oracle.

Each list read holds the one before it, so between v0.8.0 and v0.10.1.1 (releases not read) a name of v0.8.0's
list is V1's and a name outside v0.10.1.1's is V0's; a name in v0.10.1.1's list but not v0.8.0's (FLASHINFER,
XFORMERS_VLLM_V1, …) has no known answer there: not modelled (`backend_runs_v0` None; refusals.py names it).
"""

from __future__ import annotations

from collections.abc import Mapping

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.errors import UnsupportedModelError

ATTENTION_BACKEND_ENV = "VLLM_ATTENTION_BACKEND"

_V080 = frozenset({"FLASH_ATTN_VLLM_V1", "FLASH_ATTN", "PALLAS", "PALLAS_VLLM_V1", "TRITON_MLA", "FLASHMLA"})
_V0_10_1_1 = _V080 | frozenset({
    "TRITON_ATTN_VLLM_V1", "CUTLASS_MLA", "FLASHINFER", "FLASHINFER_VLLM_V1", "ROCM_AITER_MLA", "TORCH_SDPA_VLLM_V1",
    "FLEX_ATTENTION", "TREE_ATTN", "XFORMERS_VLLM_V1",
})  # fmt: skip
_V0_10_2 = _V0_10_1_1 | frozenset({"FLASHMLA_VLLM_V1", "FLASH_ATTN_MLA", "FLASHINFER_MLA"})

# (names V1 surely takes, names it may take): outside the second the oracle falls back to V0; in the first and not the
# second unknown. None: no oracle (V0 is the release's engine, or V0 is gone).
V1_BACKEND_ERAS: Eras[tuple[frozenset[str], frozenset[str]] | None] = Eras((
    Era("", None, "before v0.8.0 V0 is the default engine: no oracle"),
    Era("0.8.0", (_V080, _V080), "v0.8.0 engine/arg_utils.py:1566-1575 V1_BACKENDS (PyPI wheel)"),
    Era("0.8.1", (_V080, _V0_10_1_1), "not read between v0.8.0 and v0.10.1.1: v0.8.0's list (held by every later "
        "list read) is V1's, a name outside v0.10.1.1's V0's"),
    Era("0.10.1.1", (_V0_10_1_1, _V0_10_1_1), "v0.10.1.1 engine/arg_utils.py:1456-1477 V1_BACKENDS (PyPI wheel)"),
    Era("0.10.2", (_V0_10_2, _V0_10_2), "v0.10.2 engine/arg_utils.py:1502-1526 V1_BACKENDS (PyPI wheel)"),
    Era("0.11.0", None, "vllm#25033: the V0 engine removed, no oracle"),
))  # fmt: skip


def named_backend(flags: Mapping[str, object] | None) -> str | None:
    """The VLLM_ATTENTION_BACKEND the launch sets (its leading NAME=VALUE, in the settings flags), as written."""
    value = (flags or {}).get(ATTENTION_BACKEND_ENV)
    return None if value is None else str(value)


def backend_runs_v0(version: ResolvedVersion, flags: Mapping[str, object] | None) -> bool | None:
    """Whether the launch's VLLM_ATTENTION_BACKEND makes the oracle fall back to V0 at `version`: True for a name
    outside the release's V1_BACKENDS, False for one inside it, or unset, or where the release has no oracle; None where
    the release's list was not read for that name (not modelled)."""
    name, lists = named_backend(flags), V1_BACKEND_ERAS.at(version)
    if name is None or lists is None:
        return False
    surely, maybe = lists
    if name in surely:
        return False
    return True if name not in maybe else None


def check_backend_env(version: ResolvedVersion, flags: Mapping[str, object] | None) -> None:
    """Refuse by name a VLLM_ATTENTION_BACKEND whose engine (V0 or V1) kvtop cannot tell at `version`
    (`backend_runs_v0` None): a name v0.10.1.1's V1_BACKENDS holds and v0.8.0's does not, in a release between."""
    if backend_runs_v0(version, flags) is None:
        raise UnsupportedModelError(
            f"whether vLLM {version.label} runs V1 with {ATTENTION_BACKEND_ENV}={named_backend(flags)} is not "
            "modelled: its V1_BACKENDS list (engine/arg_utils.py _is_v1_supported_oracle) was read at v0.8.0 and "
            "v0.10.1.1 only; name no backend, or VLLM_USE_V1=0 for V0",
            field=ATTENTION_BACKEND_ENV,
        )
