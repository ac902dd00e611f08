"""llama.cpp's rules that changed between builds, each with its first build and its source
(docs/engines/llamacpp.md §1–§4, §10), and how a log says which build printed it.

llama.cpp names its releases by build number (`b6980`, printed `build: 6980 (5e4f…)` or
`version: 6980 (…)`), not by a semantic version: its eras are `Eras` like every engine's, ordered by
build number (`build_order`), and a log's era is read from its build line, else from the dialect of
its KV lines (the function that prints them was renamed twice), else the latest rules are used and
said so.
"""

from __future__ import annotations

import re
from typing import Literal

from kvtop.domain.engines.versions import NOT_STATED, Era, Eras, ReleaseNames, ResolvedVersion


def build_order(text: str | None) -> tuple[int, ...] | None:
    """llama.cpp's releases in order: 'b6980' → (6980,) (`Eras`' order for this engine's rules)."""
    build = build_number(text)
    return None if build is None else (build,)


def named_build(text: str | None) -> tuple[int, ...] | None:
    """A release as `--engine-version` names it: 'b6980' or '6980' (the release's tag, or its build line's
    number), the whole text; None for anything else ('0.5.9' is no llama.cpp release)."""
    match = _NAMED_BUILD.fullmatch(text.strip()) if text else None
    return None if match is None else (int(match.group(1)),)


# llama.cpp tags each release `b<build>` (github.com/ggml-org/llama.cpp/releases: b5400, b6980) and prints the same
# number as `build: 6980 (5e4f…)`: what `--engine-version` and the planner's field take (`ReleaseNames`)
_NAMED_BUILD = re.compile(r"[bB]?(\d{1,6})")
# a release's tag at the start of the engine's own words: 'b6980', 'b6980-5e4f1a2' (the server's `build_info`)
_SAID_BUILD = re.compile(r"[bB](\d{1,6})(?![0-9A-Za-z.])")


def said_build(text: str | None) -> str | None:
    """The release the engine's own words start with ('b6980' of 'b6980' or 'b6980-5e4f1a2'); None where they
    start with none ('dev', '0.5.9', '6980x')."""
    match = _SAID_BUILD.match(text.strip()) if text else None
    return None if match is None else f"b{int(match.group(1))}"


RELEASE_NAMES = ReleaseNames(
    order=named_build, examples=("b6980", "b5400"), noun="build",
    why="llama.cpp names its releases by build number", said=said_build,
)  # fmt: skip


def build_release(build: int | None) -> ResolvedVersion:
    """The release `build` names, for the eras' `.at` (None: not stated, the latest rules)."""
    return NOT_STATED if build is None else ResolvedVersion(text=f"b{build}")


def first_build(era: Era[Dialect] | Era[int] | Era[bool]) -> int:
    """The first build of `era` as a number (0: from the start)."""
    return build_number(era.since) or 0


Dialect = Literal["kv_self", "unified", "kv_cache"]
# §3: the function that prints the KV summary, and so the log's wording.
KV_LOG_DIALECTS: Eras[Dialect] = Eras((
    Era("", "kv_self", "llama.cpp `llama_new_context_with_model`: `llama_kv_cache_init: … KV self size = X MiB, "
        "K (f16): …, V (f16): …`"),
    Era("b5400", "unified", "src/llama-kv-cache-unified.cpp (refactor of 2025-05): `llama_kv_cache_unified: size = X "
        "MiB (N cells, L layers, S seqs), K (t): …, V (t): …`"),
    Era("b6400", "kv_cache", "src/llama-kv-cache.cpp (rename of 2025-08/09): `llama_kv_cache: size = X MiB (N cells, "
        "L layers, S/T seqs)`"),
), order=build_order)  # fmt: skip
# docs/engines/llamacpp.md §1 (the rule), §4 (by build): how llama_context pads the context it is given.
CTX_PAD_256_ERAS: Eras[bool] = Eras((
    Era("", False, "src/llama-context.cpp before PR #17046: `n_ctx` as given (older builds padded inside the cache)"),
    Era("b6980", True, "src/llama-context.cpp: `cparams.n_ctx = GGML_PAD(cparams.n_ctx, 256)` and "
        "`n_ctx_seq = GGML_PAD(n_ctx / n_seq_max, 256)` (PR #17046, 2025-11)"),
), order=build_order)  # fmt: skip
# llamacpp.md §1 (defaults), §4: llama-server's default context: 4096 tokens, then 0 = the training context.
DEFAULT_CTX_ERAS: Eras[int] = Eras((
    Era("", 4096, "common/common.h: `int32_t n_ctx = 4096; // context size`"),
    Era("b6980", 0, "common/common.h: `int32_t n_ctx = 0; // context size, 0 == context the model was trained with`"),
), order=build_order)  # fmt: skip
# llamacpp.md §1 (defaults), §4: llama-server's default slot count: 1, then -1 = auto (4 slots, one unified cache).
DEFAULT_PARALLEL_ERAS: Eras[int] = Eras((
    Era("", 1, "common/common.h: `int32_t n_parallel = 1`"),
    Era("b6925", -1, "tools/server/server.cpp: `n_parallel = -1` (auto) → 4 slots with `kv_unified = true` (PR "
        "#16736, commit cd5e3b57, 2025-11: 'By default, start the server using 4 slots and unified KV cache'; build "
        "b6925 by a `b6925-cd5e3b575` fingerprint)"),
), order=build_order)  # fmt: skip
# llamacpp.md §10: what no `-ngl` means. llama-server's `common_params.n_gpu_layers = -1` is "use the library's
# default" (common/common.cpp sets `mparams.n_gpu_layers` only when it is not −1), so the default is
# `llama_model_default_params().n_gpu_layers`: 0 (every layer on the CPU) on CUDA/ROCm/Vulkan builds, then 999
# (every layer on the GPU). First build approximate, by the PR's date.
DEFAULT_GPU_LAYERS_ERAS: Eras[int] = Eras((
    Era("", 0, "src/llama-model.cpp `llama_model_default_params`: `n_gpu_layers = 0` (999 only under GGML_USE_METAL)"),
    Era("b6350", 999, "src/llama-model.cpp `llama_model_default_params`: `n_gpu_layers = 999` (PR #15434, 2025-08; "
        "documented in `-ngl`'s help by PR #15771, 2025-09-03)"),
), order=build_order)  # fmt: skip
SlotCap = Literal["none", "train", "yarn_unread", "yarn_lifts"]
# llamacpp.md §1 (slot context), §4: what caps the context one slot (one request) may fill. `yarn_unread`: the cap
# holds as in `train`, but whether --rope-scaling yarn lifts it (PR #28030) at these builds is not read.
SLOT_CAP_ERAS: Eras[SlotCap] = Eras((
    Era("", "none", "tools/server/server.cpp `init()`: `n_ctx_slot = n_ctx / params_base.n_parallel`, no cap"),
    Era("b6925", "train", "tools/server/server-context.cpp `load_model`: `n_ctx_slot = llama_n_ctx_seq(ctx)`, "
        "`if (n_ctx_slot > n_ctx_train) … n_ctx_slot = n_ctx_train` (commit cd5e3b57, PR #16736, 2025-11; build "
        "b6925 by a `b6925-cd5e3b575` fingerprint; RoPE flags do not lift it: issue #17459, still so at b8850: #22140)"),
    Era("b8851", "yarn_unread", "the same cap; PR #28030 (merged 2026-08-30, fixes #17459) re-adjusts n_ctx_train "
        "under YaRN flags, at a first build kvtop has not read (after b8850, by b10754)"),
    Era("b10754", "yarn_lifts", "tools/server/server-context.cpp `n_ctx_slot()`: `std::min(res, "
        "llama_model_n_ctx_train(model_tgt))`; src/llama-context.cpp `llama_init_from_model`: with YaRN scaling and "
        "`rope_freq_scale != rope_freq_scale_train`, `n_ctx_train = n_ctx_orig_yarn / rope_freq_scale` (PR #28030; "
        "read at b10754 43d87ff2d as quoted in meta-models/meta-oss-cookbook#37)"),
), order=build_order)  # fmt: skip
# llamacpp.md §1 (slot context), §4: `--kv-unified-per-slot N` (PR #24124, "server: add ctx-per-slot"), a server flag
# that caps each slot at N tokens and, with no `-c`, sizes the pool to `n_parallel × N`. First build b10662: what
# a third-party launcher's build gate states (`kv-unified-per-slot needs b10662`, older builds refuse the flag); a
# flag audit finds it absent at b10502 and present at b10734, which agrees.
PER_SLOT_CAP_ERAS: Eras[bool] = Eras((
    Era("", False, "llama-server has no --kv-unified-per-slot (common/arg.cpp refuses it as an unknown argument)"),
    Era("b10662", True, "tools/server/server-context.cpp `n_ctx_slot()`: `res = llama_n_ctx_seq(ctx_tgt)`, "
        "`if (params_base.kv_unified_per_slot > 0) res = std::min(res, params_base.kv_unified_per_slot)`, then "
        "`std::min(res, llama_model_n_ctx_train(model_tgt))`; tools/server/server.cpp: with no -c (n_ctx == 0, not "
        "`-c 0`) `params.n_ctx = params.n_parallel * params.kv_unified_per_slot` (ggml-org/llama.cpp PR #24124)"),
), order=build_order)  # fmt: skip
AUTO_PARALLEL_SLOTS = 4  # tools/server: -np -1 → 4 slots, one unified KV stream
DEFAULT_UBATCH = 512  # common_params.n_ubatch
DEFAULT_PORT = 8080  # common_params.port

_BUILD = re.compile(r"\b(?:build|version)(?: =|:) (\d{1,6}) \([0-9a-f]{6,12}\)")


def build_number(text: str | None) -> int | None:
    """`6980` from 'b6980', '6980 (5e4f…)' or 'build: 6980'; None when the text names no build."""
    if not text:
        return None
    match = re.search(r"b?(\d{3,6})", text.strip()[:40])
    return int(match.group(1)) if match else None


def stated_build(line: str) -> int | None:
    """The build a `build: N (hash)` / `version: N (hash)` line states."""
    match = _BUILD.search(line)
    return int(match.group(1)) if match else None
