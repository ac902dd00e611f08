"""llama-server's command line (`common/arg.cpp`, docs/engines/llamacpp.md §1): the flags that size KV.

`-c/--ctx-size` is the whole cache's context (all slots together), `-np/--parallel` the slots,
`-ctk/--cache-type-k` and `-ctv/--cache-type-v` the ggml types of K and V apart (kvtop's KV dtype is
K's; V's is read from the flags), `--kv-unified` one cache stream shared by every slot, `--swa-full`
a full-size sliding-window cache, `-ub` the micro-batch that the sliding-window cache adds to its
window. `-nkvo` and `-ngl` place the KV (placement.py, §10). What kvtop does not model (multi-GPU split
modes, `--fit`'s context shrinking) is kept verbatim and named in the plan's notes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kvtop.domain.engines.llamacpp.deployment import FLAGS as DEPLOYMENT_FLAGS
from kvtop.domain.engines.llamacpp.ggml_types import DEFAULT_CACHE_TYPE, KV_CACHE_TYPES, cache_type
from kvtop.domain.engines.llamacpp.span import FLAGS as SPAN_FLAGS
from kvtop.domain.errors import InputError
from kvtop.domain.launch import NO_WORDS, LaunchSettings, OwnFlag, written_flags
from kvtop.domain.launch_tokens import false_word
from kvtop.domain.launch_vocabulary import NeutralGroup, refuse_unlisted_kv_dtype
from kvtop.domain.load_casts import NO_CASTS, LoadCasts
from kvtop.domain.redact import quoted

SPELLINGS: Mapping[str, str] = {
    "-m": "model", "--model": "model", "--host": "host", "--port": "port",
    "-c": "context_length", "--ctx-size": "context_length",
    "-np": "max_running_requests", "--parallel": "max_running_requests",
    "-ctk": "kv_cache_dtype", "--cache-type-k": "kv_cache_dtype",
}  # fmt: skip
PREFERRED: Mapping[str, str] = {"context_length": "-c", "max_running_requests": "-np", "kv_cache_dtype": "-ctk"}
V_TYPE_FLAGS = ("ctv", "cache-type-v")
BOTH_TYPES_FLAGS = ("kv-cache-type",)  # Ollama's runner: one type for K and V (OLLAMA_KV_CACHE_TYPE)
UNIFIED_FLAGS = ("kvu", "kv-unified")
NO_UNIFIED_FLAGS = ("no-kv-unified",)
SWA_FULL_FLAGS = ("swa-full",)
UBATCH_FLAGS = ("ub", "ubatch-size")
GPU_LAYERS_FLAGS = ("ngl", "gpu-layers", "n-gpu-layers")
NO_KV_OFFLOAD_FLAGS = ("nkvo", "no-kv-offload")  # cparams.offload_kqv = false: every layer's KV in host memory
KV_OFFLOAD_FLAGS = ("kvo", "kv-offload")  # the default spelled out (common/arg.cpp)
SPLIT_FLAGS = ("sm", "split-mode", "ts", "tensor-split")
PER_SLOT_FLAGS = ("kv-unified-per-slot",)  # PR #24124: each slot capped at N (eras.PER_SLOT_CAP_ERAS)
# `--override-kv KEY=TYPE:VALUE` rewrites GGUF metadata at load (src/llama-model-loader.cpp `get_key` returns the
# override): `<arch>.context_length=int:N` sets n_ctx_train, which the default -c, the slot cap and YaRN's base read.
# kvtop does not know a config.json model's GGUF arch name nor reads the override: refused by name (check_parallel)
OVERRIDE_KV_FLAGS = ("override-kv",)
FIT_FLAGS = ("fit", "fitt", "fit-target", "fitc", "fit-ctx")
# flags read by the budget, and flags that change nothing kvtop sizes (kept as typed)
PASSTHROUGH: frozenset[str] = frozenset({
    "-ctv", "--cache-type-v", "-kvu", "--kv-unified", "--no-kv-unified", "--swa-full", "-ub", "--ubatch-size",
    "-ngl", "--gpu-layers", "--n-gpu-layers", "-sm", "--split-mode", "-ts", "--tensor-split", "-fit", "--fit",
    "-fitt", "--fit-target", "-fitc", "--fit-ctx", "-fa", "--flash-attn", "-b", "--batch-size", "-t", "--threads",
    "--jinja", "-a", "--alias", "--mlock", "--no-mmap", "-hf", "--hf-repo", "--metrics", "--slots", "--no-slots",
    "--api-key", "--kv-cache-type", "--multiuser-cache", "--main-gpu", "--mmproj", "--verbose", "-nkvo",
    "--no-kv-offload", "-kvo", "--kv-offload", "--rope-scaling", "--rope-scale", "--rope-freq-scale", "--yarn-orig-ctx",
    "--kv-unified-per-slot", "--override-kv",
    "-hft", "--hf-token",  # the hub token (common/arg.cpp `{"-hft", "--hf-token"}, "TOKEN"`, @145b6280): a secret, masked
}) | DEPLOYMENT_FLAGS | SPAN_FLAGS  # fmt: skip
_DTYPES = ("auto", *KV_CACHE_TYPES)


def flag_value(settings: LaunchSettings, names: Sequence[str]) -> str | bool | None:
    """The value of the first of `names` (as kept in `flags`, without dashes) the launch sets."""
    for name in names:
        if name in settings.flags:
            return settings.flags[name]
    return None


def flag_on(settings: LaunchSettings, names: Sequence[str]) -> bool | None:
    """A switch: True when set bare or to a true word, False for a false word, None when not given."""
    value = flag_value(settings, names)
    if value is None:
        return None
    return value is True or (isinstance(value, str) and not false_word(value.strip()))


class LlamacppFlags:
    load_casts: LoadCasts = NO_CASTS  # no flag kvtop reads re-casts weights at load
    spellings: Mapping[str, str] = SPELLINGS
    own_flags: Mapping[str, OwnFlag] = {}  # kvtop takes no flag of its own for this engine
    kv_cache_dtypes: tuple[str, ...] = _DTYPES
    # how the server takes its model (common/arg.cpp `{"-m", "--model"}`: llama-server takes no positional model)
    model_flag: str | None = "-m"
    specials: Mapping[str, tuple[int, str]] = {"context_length": (0, "takes the model's training context")}
    choices: Mapping[str, tuple[str, ...]] = {}
    passthrough: frozenset[str] = PASSTHROUGH
    read_by_rules: frozenset[str] = frozenset()
    env_read: frozenset[str] = frozenset()  # no rule reads an environment variable of the launch line
    release_images: frozenset[str] = frozenset()  # no container image whose tag kvtop reads as the release
    # llama-server's options (common/arg.cpp) are not classified yet: PASSTHROUGH holds those kvtop accepts
    # (named in the plan's notes, not modelled), with no list of those with no effect on memory nor of those kvtop
    # does not model; any other option is refused as unknown
    memory_neutral_groups: Mapping[str, NeutralGroup] = {}
    memory_neutral: frozenset[str] = frozenset()
    unmodelled: frozenset[str] = frozenset()
    partly_read: Mapping[str, str] = {}  # no unmodelled flag a rule reads in part
    value_placeholders: Mapping[str, str] = {}  # no pass-through flag listed with a placeholder
    list_valued: frozenset[str] = frozenset()  # no flag kvtop reads takes several values
    # one value each: `{"--api-key"}, "KEY"` and `{"-hft", "--hf-token"}, "TOKEN"` (common/arg.cpp,
    # ggml-org/llama.cpp@145b6280)
    secret_flags: frozenset[str] = frozenset({"--api-key", "-hft", "--hf-token"})

    def refuse(self, field: str, value: object, flag: str) -> None:
        if field == "kv_cache_dtype" and isinstance(value, str) and value != "auto":
            cache_type(value, flag)

    def check_parallel(self, settings: LaunchSettings) -> None:
        """llama.cpp splits a model over GPUs by layers or rows (`-sm`), not by kvtop's TP/PP/DP/EP."""
        for field in ("tp", "pp", "dp", "ep", "dcp"):
            if getattr(settings, field) != 1:
                raise InputError("llama.cpp has no tensor, pipeline, data or expert parallel ranks; its multi-GPU "
                                 "split modes (-sm layer/row) are not modelled", field=f"--{field}")  # fmt: skip
        override = flag_value(settings, OVERRIDE_KV_FLAGS)
        if override is not None:
            raise InputError(f"{quoted(override, 60)} rewrites the GGUF's metadata (e.g. "
                             "<arch>.context_length=int:N sets n_ctx_train, the training context the default -c "
                             "and the slot cap read); kvtop does not read it: not modelled", field="--override-kv")
        v_type = flag_value(settings, V_TYPE_FLAGS)
        if isinstance(v_type, str):
            cache_type(v_type, "-ctv")
        ubatch = flag_value(settings, UBATCH_FLAGS)
        if ubatch is not None and not (isinstance(ubatch, str) and ubatch.strip().isdigit() and int(ubatch) >= 1):
            raise InputError(f"expected a whole number of at least 1, got {quoted(ubatch)}", field="-ub")

    def launch_parts(self, settings: LaunchSettings) -> None:
        """None: its command line carries every setting kvtop reads (`to_flags` is the engine's own line)."""
        return None

    def to_flags(self, settings: LaunchSettings) -> list[str]:
        out = written_flags(settings, PREFERRED)
        v_type = flag_value(settings, V_TYPE_FLAGS)
        if isinstance(v_type, str):
            out += ["-ctv", v_type]
        for names, spelled in ((UNIFIED_FLAGS, "--kv-unified"), (NO_UNIFIED_FLAGS, "--no-kv-unified"),
                               (SWA_FULL_FLAGS, "--swa-full"), (NO_KV_OFFLOAD_FLAGS, "--no-kv-offload")):  # fmt: skip
            if flag_on(settings, names):
                out.append(spelled)
        ubatch = flag_value(settings, UBATCH_FLAGS)
        if isinstance(ubatch, str):
            out += ["-ub", ubatch]
        per_slot = flag_value(settings, PER_SLOT_FLAGS)
        if isinstance(per_slot, str):  # caps the slot and, with no -c, sizes the pool (cells.py, slot_context.py)
            out += ["--kv-unified-per-slot", per_slot]
        gpu_layers = flag_value(settings, GPU_LAYERS_FLAGS)
        if isinstance(gpu_layers, str):  # where the KV sits (placement.py, §10): a pasted launch keeps it
            out += ["-ngl", gpu_layers]
        return out

    def read_int(self, field: str, raw: str, flag: str, engine_version: str | None) -> int | None:
        return None  # no suffixed counts read: every count is a plain whole number (int())

    def as_parsed(self, spelling: str) -> str:
        return spelling  # llama-server matches option names as typed

    def refuse_kv_dtype(self, dtype: str, flag: str, engine_version: str | None) -> None:
        """A cache type outside those kvtop models (`refuse` names a ggml type it lacks first) is refused."""
        refuse_unlisted_kv_dtype("llama.cpp", dtype, self.kv_cache_dtypes, flag)

    def kv_cache_dtype_words(self, engine_version: str | None) -> Mapping[str, str]:
        """Empty: its KV dtype values are the formats' own names, at every release."""
        return NO_WORDS

    def find_launch(self, argv: Sequence[str]) -> tuple[int, str | None] | None:
        """`llama-server …` (its model comes by `-m`, never positionally), or Ollama's llama.cpp runner:
        `ollama_llama_server --model … --ctx-size … --parallel …` (ollama llm/server.go) or `ollama runner …`
        without `--ollama-engine` (Ollama's own Go engine, which kvtop does not model)."""
        for index, token in enumerate(argv):
            name = token.replace("\\", "/").rsplit("/", 1)[-1].removesuffix(".exe")
            if name in ("llama-server", "ollama_llama_server"):
                return index + 1, None
            if name == "ollama" and argv[index + 1 : index + 2] == ["runner"] and "--ollama-engine" not in argv:
                return index + 2, None
        return None


def cache_types(settings: LaunchSettings) -> tuple[str, str]:
    """(K type, V type) as llama.cpp names them: `-ctk` and `-ctv`, else Ollama's runner's one
    `--kv-cache-type` for both, else f16."""
    both = flag_value(settings, BOTH_TYPES_FLAGS)
    default = both.strip().lower() if isinstance(both, str) else DEFAULT_CACHE_TYPE
    k = settings.kv_cache_dtype if settings.kv_cache_dtype != "auto" else default
    v = flag_value(settings, V_TYPE_FLAGS)
    return k.strip().lower(), (v.strip().lower() if isinstance(v, str) else default)
