"""vLLM's V2 model runner under WSL2: it needs pinned host memory, which WSL2 turns off, by release (docs/engines/vllm.md
§21). A plan of such a start says whether it starts, and what it keeps on the GPU instead; nothing is charged.

V2 keeps its request state in UVA buffers: pinned host memory the GPU reads in place (v1/worker/gpu/buffer_utils.py
`UvaBuffer`, which raises "UVA is not available" where `is_uva_available()` is false, i.e. pinned memory is off:
utils/platform_utils.py). Under WSL (`in_wsl()`: 'microsoft' in the kernel's uname) pinned memory is
- before v0.24.0 always off (platforms/interface.py:724-734 at v0.22.0, :752-762 at v0.23.0): every V2 start fails at
  its worker's init (buffer_utils.py:39 at v0.22.0, :48 at v0.23.0); VLLM_USE_V2_MODEL_RUNNER=0 runs V1;
- from v0.24.0 opt-in (vllm#41496): on a WSL2 kernel of 4.19.121 or later `VLLM_WSL2_ENABLE_PIN_MEMORY` decides,
  default 0 (platforms/cuda.py:286-303 at v0.24.0, :286-304 at v0.27.1, :290-308 at v0.29.0; envs.py:1855 at
  v0.24.0): V2 fails at init without it (buffer_utils.py:46-47 at v0.24.0, v0.27.1 and v0.29.0; vllm#47387 at
  v0.24.0, #54652 at v0.28.1rc1);
- from v0.30.0 tolerated (vllm#56908): without pinned memory the pools fall back to device buffers (`NonUvaBuffer`,
  buffer_utils.py:41-57 and :80 at v0.30.0, :51 and :108 at v0.34.0) and a table V2 would keep in UVA stays on the
  GPU (`uva_instead_of_gpu`, buffer_utils.py:153-157 at v0.30.0): the token ids, max_num_seqs × max_model_len int32
  (v1/worker/gpu/states.py:34-39 at v0.30.0), and an M-RoPE model's prefill positions, 3 × that or more
  (v1/worker/gpu/mm/rope.py:46-51 at v0.30.0, its rows the config's M-RoPE sections, at least 3:
  transformers_utils/config.py:648-653 `mrope_num_dims` at v0.30.0). They are
  allocated when the runner is built, after the worker's first snapshot, so they come off the KV cache; with
  VLLM_WSL2_ENABLE_PIN_MEMORY=1 they stay in host memory.
The variable is read from the launch line (a leading `VLLM_WSL2_ENABLE_PIN_MEMORY=1`, flags.py env_read) as envs.py
reads it, `bool(int(os.getenv(…, "0")))` (envs.py:1979-1981 at v0.27.1; a value int() refuses fails vLLM's start, so
kvtop reads none): 1 starts an opt-in release and keeps the tolerated era's tables off the GPU, 0 fails the one and
keeps them on it; unset it may still be exported outside the line, so the plan says both and names the bytes rather
than charge them (session 68).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

from kvtop.domain.engines.versions import Era, Eras
from kvtop.domain.engines.vllm.runner_eras import runs_v2
from kvtop.domain.wording import GIB, gib, mib

if TYPE_CHECKING:
    from kvtop.domain.engines.base import EngineInputs

PIN_ENV = "VLLM_WSL2_ENABLE_PIN_MEMORY"
UVA_ERROR = "'RuntimeError: UVA is not available'"
TOKEN_ID_BYTES = 4  # int32 (v1/worker/gpu/states.py:34-39 at v0.30.0)
MROPE_DIMS = 3  # the fewest M-RoPE position rows a request (mm/rope.py:46-51, config.py:648-653 at v0.30.0)

WslPinned = Literal["off", "opt_in", "tolerated"]
WSL2_PINNED_ERAS: Eras[WslPinned] = Eras((
    Era("", "off", "v0.22.0 platforms/interface.py:724-734, v0.23.0 :752-762: pinned memory off under WSL; "
        "v1/worker/gpu/buffer_utils.py:39 / :48 raise where it is"),
    Era("0.24.0", "opt_in", "vllm#41496, first in v0.24.0: platforms/cuda.py:286-303 returns "
        "VLLM_WSL2_ENABLE_PIN_MEMORY (envs.py:1855, default 0); v0.27.1 :286-304, v0.29.0 :290-308; "
        "buffer_utils.py:46-47 raise at v0.24.0, v0.27.1, v0.29.0"),
    Era("0.30.0", "tolerated", "vllm#56908, first in v0.30.0: buffer_utils.py:41-57 NonUvaBuffer, :80 the pools' "
        "fallback, :153-157 device tables where UVA is off (v0.34.0 :51, :108, :191)"),
))  # fmt: skip


def on_gpu_bytes(inputs: EngineInputs, max_num_seqs: int) -> int:
    """What V2 keeps on the GPU without pinned memory in the tolerated era: the token ids, and an M-RoPE model's prefill
    positions (`max_num_seqs` × max_model_len int32 each row)."""
    rows = max_num_seqs * (1 + (MROPE_DIMS if inputs.model.mrope else 0))
    return rows * inputs.context_length * TOKEN_ID_BYTES


def pin_env(flags: Mapping[str, object] | None) -> bool | None:
    """The launch's VLLM_WSL2_ENABLE_PIN_MEMORY as envs.py reads it (`bool(int(value))`): None where unset or a value
    int() refuses (not read)."""
    value = (flags or {}).get(PIN_ENV)
    try:
        return None if value is None else bool(int(str(value).strip()))
    except ValueError:
        return None


def wsl2_pinned_note(inputs: EngineInputs, max_num_seqs: int) -> str | None:
    """The plan's note where the launch runs V2 under WSL2 (`plan --wsl2`, a node that shows WSL2): whether it starts,
    and what it keeps on the GPU without pinned memory; None elsewhere (Linux, the V1 runner)."""
    if not inputs.measured.wsl2 or not runs_v2(inputs.version, inputs.model, inputs.settings):
        return None
    era = WSL2_PINNED_ERAS.at(inputs.version)
    v2 = f"vLLM {inputs.version.label} runs this launch on its V2 model runner, which needs pinned memory"
    if era == "off":
        return (f"{v2}, off under WSL at this release: the start fails at init with {UVA_ERROR}; "
                "VLLM_USE_V2_MODEL_RUNNER=0 runs the V1 runner, which this plan is not")  # fmt: skip
    pinned = pin_env(inputs.settings.flags)  # read from v0.24.0 only: the "off" era returned above
    if era == "opt_in":
        if pinned:
            return (f"{v2}: {PIN_ENV}=1 in the launch turns it on under WSL2 (a WSL2 kernel of 4.19.121 or later), "
                    "so it starts")  # fmt: skip
        if pinned is False:
            return f"{v2}: {PIN_ENV}=0 in the launch leaves it off under WSL2, so it fails at init with {UVA_ERROR}"
        return f"{v2}: under WSL2 it starts only with {PIN_ENV}=1 set, else it fails at init with {UVA_ERROR}"
    if pinned:
        return (f"vLLM {inputs.version.label} runs this launch on its V2 model runner; {PIN_ENV}=1 in the launch "
                "turns pinned memory on under WSL2, so its request tables stay in host memory, as on Linux")  # fmt: skip
    held = on_gpu_bytes(inputs, max_num_seqs)
    shown = gib(held) if held >= GIB else mib(held, 1)
    rows = f"{max_num_seqs:,} seqs{f' × {1 + MROPE_DIMS} rows (M-RoPE)' if inputs.model.mrope else ''}"
    off = (f"{PIN_ENV}=0 in the launch leaves pinned memory off under WSL2" if pinned is False
           else f"under WSL2 pinned memory is off unless {PIN_ENV}=1")  # fmt: skip
    return (f"vLLM {inputs.version.label} runs this launch on its V2 model runner; {off}, and V2 then keeps its "
            f"request tables on the GPU ({shown}: {rows} × {inputs.context_length:,} tokens × {TOKEN_ID_BYTES} B), "
            "which the plan does not charge")  # fmt: skip
