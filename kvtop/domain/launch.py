"""The engines' own launch flags, parsed once for `kvtop plan`, `--cmd`, logs and live processes.

Every engine names the same knob its own way (`--tp-size` / `--tensor-parallel-size`,
`--page-size` / `--block-size`, `--context-length` / `--max-model-len`, …). Each engine package
lists its spellings (`EngineFlags`); every spelling maps to one canonical field of
`LaunchSettings`. kvtop's short parallel flags (`--tp`, `--pp`, `--dp`, `--ep`, `--dcp`) work for
every engine. Flags kvtop does not model are kept verbatim in `flags`, so nothing typed is lost;
where the operator types flags to kvtop itself (`strict`), an unknown flag, or another engine's
flag, is an error naming it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from kvtop.domain.engine_launch import EngineLaunch, redacted_body
from kvtop.domain.engines.catalogue import ENGINE_IDS, EngineId, display_name, engine_module
from kvtop.domain.engines.versions import LATEST, ReleaseNames
from kvtop.domain.errors import InputError, UnknownFlagError
from kvtop.domain.launch_tokens import (
    image_release,
    split_tokens,
    typed_value,
)
from kvtop.domain.launch_vocabulary import FIELD_TYPES as FIELD_TYPES
from kvtop.domain.launch_vocabulary import (
    FRACTIONS,
    MAX_COUNT,
    MAX_PARALLEL,
    POSITIVE_COUNTS,
    WRITTEN_SIZE_FIELDS,
)
from kvtop.domain.launch_vocabulary import KVTOP_SPELLINGS as KVTOP_SPELLINGS
from kvtop.domain.launch_vocabulary import NO_WORDS as NO_WORDS
from kvtop.domain.launch_vocabulary import NeutralGroup as NeutralGroup
from kvtop.domain.launch_vocabulary import OwnFlag as OwnFlag
from kvtop.domain.launch_vocabulary import written_flags as written_flags
from kvtop.domain.load_casts import LoadCasts
from kvtop.domain.redact import masked_glued_flag, quoted, redact_argv
from kvtop.domain.units_parse import written_size, written_unit
from kvtop.domain.unknown_flags import alike_flag as alike_flag
from kvtop.domain.unknown_flags import flag_field, not_modelled_why, other_engines_flag, respelled
from kvtop.domain.wording import in_unit

# the `X as X` names above are re-exported: the engine packages and the commands take them from here


class EngineFlags(Protocol):
    """One engine's command-line vocabulary (implemented by each engine package)."""

    spellings: Mapping[str, str]  # flag as the engine spells it -> LaunchSettings field
    own_flags: Mapping[str, OwnFlag]  # kvtop's own flags for this engine, not the engine's (never in `spellings`)
    kv_cache_dtypes: tuple[str, ...]  # what `--kv-cache-dtype` accepts
    load_casts: LoadCasts  # what `--dtype` and online `--quantization` do to the weights at load (served_model.py)
    specials: Mapping[str, tuple[int, str]]  # field -> (a value below 1 it documents, its meaning)
    # how its server takes the model on the launch line: the flag, or None where it is the first positional
    model_flag: str | None
    choices: Mapping[str, tuple[str, ...]]  # field -> the words it accepts (e.g. the runtime: backend)

    # flags the engine has that do not change KV sizing: accepted as typed and kept verbatim in `flags`
    passthrough: frozenset[str]
    # of those, the ones a rule reads from `flags` (a refusal, a tower's split): `--help` lists them apart
    read_by_rules: frozenset[str]
    # of the engine's flags kvtop does not read, those its package classified as having no effect on GPU memory, by
    # kind (short name -> NeutralGroup): accepted, named on the plan's line under the engine flags, never written back;
    # `--help` counts them, `--list-neutral-flags ENGINE` lists them. Empty where the engine's flags were not
    # classified yet (its package says what is missing): such a flag is then refused as unknown
    memory_neutral_groups: Mapping[str, NeutralGroup]
    memory_neutral: frozenset[str]  # every spelling of those groups (all pass-through: accepted)
    # the engine's flags that change memory in a way kvtop does not model, or whose effect was not read: typed to
    # kvtop, refused as such ("a flag of vLLM whose effect on memory kvtop does not model"), not as unknown; on a
    # launch line (--cmd, a running server's command line) kept and named as ignored, never refused
    unmodelled: frozenset[str]
    # of `unmodelled`, those a rule still reads off a launch line for one effect (SGLang's `--language-only`: the
    # automatic fraction's VLM factor) -> that effect, said beside the flag where the plan names it ignored
    partly_read: Mapping[str, str]
    # what a pass-through flag that takes a value takes, as `--help` writes it (vLLM's `--hf-overrides JSON`); a flag
    # not named here is listed bare
    value_placeholders: Mapping[str, str]
    # flags that take one or more values (argparse nargs="+"): every token up to the next flag, joined by spaces
    list_valued: frozenset[str]
    # flags whose value is a secret (an API key, a hub token), every spelling the engine's parser takes; one that
    # `list_valued` names (`as_parsed`) takes several. Redaction masks them on any line, for every engine
    # (`secret_names.engine_secret_flags`), beside the secret names it knows by their words
    secret_flags: frozenset[str]
    # environment variables a rule reads from a launch line's leading `NAME=VALUE` tokens; every other assignment
    # there (HF_TOKEN=…, an API key) is dropped at parse time, never kept, shown or written
    env_read: frozenset[str]
    # container images whose tag names the engine's release (`vllm/vllm-openai:v0.11.0`), read where no version is set
    release_images: frozenset[str]

    def refuse(self, field: str, value: object, flag: str) -> None:
        """Raise InputError for a value the engine has but kvtop does not model (or the engine refuses).

        Called for every field that is set, after the generic count and fraction checks, and for each pass-through
        flag typed to kvtop or on the engine's launch line (`field` its name without dashes, `value` as typed)."""

    def read_int(self, field: str, raw: str, flag: str, engine_version: str | None) -> int | None:
        """A count as the engine reads it where that is not Python's int() (vLLM's '32K' at a release that takes it;
        `engine_version` None: the latest), else None; a form the release refuses is an InputError naming `flag`."""

    def check_parallel(self, settings: LaunchSettings) -> None:
        """Raise InputError when EP/DCP do not fit the ranks the way this engine lays them out."""

    def to_flags(self, settings: LaunchSettings) -> list[str]:
        """The settings as kvtop spells them for this engine (what `kvtop plan … --` reads back)."""

    def launch_parts(self, settings: LaunchSettings) -> EngineLaunch | None:
        """The launch as the engine takes it where its command line is not the whole of it (TensorRT-LLM: serve's
        options, the --extra_llm_api_options YAML, the TensorRT engine's build flags); None where `to_flags` is."""

    def find_launch(self, argv: Sequence[str]) -> tuple[int, str | None] | None:
        """(index after the entry point, positional model) when argv launches this engine's server."""

    def as_parsed(self, spelling: str) -> str:
        """The flag as the engine's own parser reads it before matching a name (vLLM's turns `--a_b` into
        `--a-b`); an engine whose parser takes names as typed returns `spelling`."""

    def refuse_kv_dtype(self, dtype: str, flag: str, engine_version: str | None) -> None:
        """Raise InputError for a KV dtype (typed as `flag`) the engine lacks at `engine_version` (None: the latest)
        or kvtop does not model (outside `kv_cache_dtypes`), saying which where the package knows it by release."""

    def kv_cache_dtype_words(self, engine_version: str | None) -> Mapping[str, str]:
        """What each of `kv_cache_dtypes` means, shown beside it where the value does not say it (LMDeploy's
        `--quant-policy 8` reads '8 · int8'), at the release `engine_version` names (None: the latest); empty for an
        engine whose values are words already ('fp8_e4m3'). The word names the KV format the plan then solves."""


def release_names(engine: EngineId) -> ReleaseNames:
    """What the engine calls a release (`--engine-version`): its package's `RELEASE_NAMES` (PEP 440's, or its
    own where it names its releases otherwise: llama.cpp's builds)."""
    names: ReleaseNames = engine_module(engine).RELEASE_NAMES
    return names


def engine_flags(engine: EngineId) -> EngineFlags:
    """The engine's command-line vocabulary (its package's `FLAGS`)."""
    flags: EngineFlags = engine_module(engine).FLAGS
    return flags


# LaunchSettings' fields a log's decisions set and nothing typed does (explain reads them off the log's decisions)
LOG_ONLY_FIELDS = frozenset({"logged_runner"})


class LaunchSettings(BaseModel):
    """What a launch command says, with the engine's defaults left as None (unset)."""

    model_config = ConfigDict(frozen=True)

    engine: EngineId
    model: str | None = None
    host: str | None = None
    port: int | None = None
    tp: int = 1
    pp: int = 1
    dp: int = 1
    ep: int = 1
    dcp: int = 1
    enable_dp_attention: bool = False
    enable_expert_parallel: bool = False
    mem_fraction_static: float | None = None
    gpu_memory_utilization: float | None = None
    kv_cache_dtype: str = "auto"
    page_size: int | None = None
    context_length: int | None = None
    max_running_requests: int | None = None
    max_total_tokens: int | None = None
    chunked_prefill_size: int | None = None
    max_prefill_tokens: int | None = None
    max_num_batched_tokens: int | None = None
    kv_cache_memory_bytes: int | None = None
    num_gpu_blocks_override: int | None = None
    swa_full_tokens_ratio: float | None = None
    disable_hybrid_swa_memory: bool = False
    disable_hybrid_kv_cache_manager: bool = False
    disable_radix_cache: bool = False
    enforce_eager: bool = False
    quantization: str | None = None
    dtype: str | None = None
    cuda_graph_max_bs: int | None = None
    engine_version: str | None = None  # which era of the engine's rules applies (see engines/versions.py)
    # TensorRT-LLM (docs/engines/trtllm.md §3, §6): kv_cache_config.free_gpu_memory_fraction, .max_tokens,
    # .max_gpu_total_bytes (0: unset), the beam width, the runtime (pytorch | tensorrt) and the YAML's path
    free_gpu_memory_fraction: float | None = None
    kv_cache_max_tokens: int | None = None
    max_gpu_total_bytes: int | None = None
    max_beam_width: int | None = None
    max_input_len: int | None = None  # a TensorRT engine's build limit (trtllm-build / build.py --max_input_len)
    extra_llm_api_options: str | None = None
    # the line's fraction that YAML's kv_cache_config replaced before PR #9262 (flags.PARTIAL_KV_CONFIG_SINCE): not read
    # (KvCacheConfig's 0.9 runs), kept only to say so (the budget's note); never written
    replaced_fraction: float | None = None
    flags: dict[str, str | bool] = {}
    unknown_flags: tuple[str, ...] = ()  # flags as spelled that neither the engine nor kvtop knows (kvtop ignored them)
    # LMDeploy
    # the runtime: LMDeploy "turbomind" | "pytorch" (None: TurboMind where it supports the model);
    # TensorRT-LLM "pytorch" | "tensorrt" (None: its release's default)
    backend: str | None = None
    cache_max_entry_count: float | None = (
        None  # a share of free (or, before v0.2.2, total) memory; ≥ 1: blocks
    )
    cache_chunk_size: int | None = None  # TurboMind blocks allocated per chunk (1: lazily, −1: all at start)
    prefix_cache_state_budget: int | None = None  # PyTorch engine: extra SSM state slots for prefix caching
    # the model path is a TurboMind workspace `lmdeploy convert` wrote (`triton_models/`), not a Hugging Face checkpoint
    turbomind_workspace: bool = False
    # the engine is started through vLLM's offline `LLM(...)` class (UsageContext.LLM_CLASS), whose batch defaults are
    # not `vllm serve`'s (read by vLLM's package, batching.default_batch_limits)
    llm_class: bool = False
    # the engine is started through vLLM's `EngineArgs` → `LLMEngine` (UsageContext.ENGINE_CONTEXT): the scheduler's own
    # batch defaults (read by vLLM's package, batching.default_batch_limits)
    engine_context: bool = False
    # the container image the launch line runs (`docker run … vllm/vllm-openai:v0.11.0 …`), as typed: what the install
    # holds beyond the engine's wheel is the image's (vLLM's sampler path reads it)
    image: str | None = None
    # whether the install holds FlashInfer beside the engine's wheel (vLLM: pip `flashinfer-python`), as the launch's source
    # states it (`plan --flashinfer`); None: not stated. vLLM's sampler path reads it (sampler_path.py FLASHINFER_TAKEN_ERAS)
    flashinfer: Literal["installed", "absent"] | None = None
    # the speculative draft's config class, where kvtop read the draft's config (`plan --draft-model`, the draft a
    # launch names loaded): not a flag but a fact of the draft that vLLM's method detection reads
    # (engines/vllm/spec_methods.py `stated_method`); set by `ledger.predict` from its `draft`
    # (`deployment.with_draft_config`), so every rule reading the ledger's launch sees it
    draft_architectures: tuple[str, ...] = ()
    # the model runner the engine's log says ran (vLLM's 'Using V2 Model Runner' or its V1 fallback warning,
    # engines/vllm/log_facts.py): a measured input explain sets from the log alone (`LOG_ONLY_FIELDS`), never a flag
    logged_runner: Literal["v1", "v2"] | None = None
    # the GPU the plan is for (`predict`'s gpu_name, explain's --gpu or the log's card): not a flag but a fact of the
    # host that a launch rule reads beside the flags (vLLM's sequence-parallel threshold, runner_refusals.py); set by
    # `ledger.predict`, None where no GPU is named
    gpu_name: str | None = None

    @field_validator("engine")
    @classmethod
    def _known_engine(cls, value: str) -> str:
        if value not in ENGINE_IDS:
            raise ValueError(f"unknown engine {value!r} (one of {', '.join(ENGINE_IDS)})")
        return value

    @field_validator("engine_version")
    @classmethod
    def _latest_is_not_stated(cls, value: str | None) -> str | None:
        """'latest' (what every header prints for no stated version) asks for the latest rules: unset; whitespace
        around a release is dropped, as PEP 440 ignores it (a typed '0.10.2 ' is 0.10.2: no space reaches a heading)."""
        return None if value is None or value.strip().lower() == LATEST else value.strip()

    @model_validator(mode="after")
    def _values_in_range(self) -> LaunchSettings:
        """Settings merged from several sources are checked again (flags named as the engine spells them)."""
        check_values(self.engine, {field: getattr(self, field) for field in FIELD_TYPES}, {})
        return self

    @property
    def image_release(self) -> str | None:
        """The release the image's tag names ('v0.11.0' -> '0.11.0') where it is one of the engine's `release_images`."""
        return image_release(self.image, engine_flags(self.engine).release_images) if self.image else None

    @property
    def effective_ep(self) -> int:
        """vLLM's `--enable-expert-parallel` spreads experts over tp × dp ranks."""
        if self.enable_expert_parallel and self.ep == 1:
            return self.tp * self.dp
        return self.ep

    @property
    def expert_parallel_asked(self) -> bool:
        """Whether the launch asks for expert parallelism: an EP size above 1, or a switch that spreads the experts
        over the ranks it has (`enable_expert_parallel`, which an engine's flag reading sets: vLLM's
        `--enable-expert-parallel`), at 1 × 1 too."""
        return self.effective_ep > 1 or self.enable_expert_parallel

    def engine_launch(self) -> EngineLaunch:
        """The launch to copy and paste as the engine takes it: `to_flags()` where that line is the engine's own
        (vLLM, SGLang, LMDeploy, llama.cpp), else the engine's parts (TensorRT-LLM: trtllm-serve's options, the
        --extra_llm_api_options YAML beside them, a TensorRT engine's build flags apart), each redacted; with the
        environment the launch set that a rule read (`env`, the engine's `env_read`: without it the engine lays its
        memory out otherwise), redacted too though no secret's name is kept."""
        read = engine_flags(self.engine).env_read  # `launch_line.with_environment` keeps them in `flags` by name
        said = redact_argv([f"{name}={value}" for name, value in self.flags.items() if name in read])
        env = dict(word.split("=", 1) for word in said)
        parts = engine_flags(self.engine).launch_parts(self)
        if parts is None:
            return EngineLaunch(line=tuple(self.to_flags()), env=env)
        return EngineLaunch(line=tuple(redact_argv(list(parts.line))), config=redacted_body(parts.config),
                            config_option=parts.config_option,
                            config_file=redact_argv([parts.config_file])[0] if parts.config_file else None,
                            build=tuple(redact_argv(list(parts.build))), build_said=parts.build_said,
                            line_said=parts.line_said, config_said=parts.config_said, env=env,
                            config_own=parts.config_own, moved=parts.moved, build_tools=parts.build_tools)  # fmt: skip

    def to_flags(self) -> list[str]:
        """The settings as kvtop spells them for the engine, which `kvtop plan … --` reads back (for every engine but
        TensorRT-LLM the engine's own flags too; `engine_launch` is what the engine takes): its modelled settings, then the
        deployment flags it keeps verbatim (a draft, LoRA, host KV: kvtop.domain.deployment) and its node count.
        Redacted (`redact_argv`): every surface prints or copies these, and a value kept verbatim may hold a key (a
        `--kv-transfer-config` JSON's `api_key`, an `s3://user:pass@` path); a JSON value stays JSON (`"***"`)."""
        # the flags its `deployment` module keeps verbatim (`DeploymentRules.flags`)
        deployment: frozenset[str] = engine_module(self.engine, "deployment").flags
        # and the node flags every node's launch carries alike (SGLang's and vLLM's `--nnodes`: its span's
        # `layout_flags`); the per-node ones (`--node-rank`, the head's address) are said apart (`per_node`)
        deployment |= engine_module(self.engine, "span").layout_flags
        own = engine_flags(self.engine).to_flags(self)
        kept = [  # a flag the engine's own list already wrote (vLLM's --speculative-config, read by its rules) once
            token
            for key, value in self.flags.items()
            if f"--{key}" in deployment and f"--{key}" not in own and value is not False
            for token in ([f"--{key}"] if value is True else [f"--{key}", str(value)])
        ]
        return list(redact_argv([*own, *kept]))


@lru_cache(maxsize=1024)
def spelling_of(engine: EngineId, field: str) -> str:
    """The flag `engine` spells `field` with (its first spelling), else kvtop's own. Cached: a pure function of the
    engine's constant `FLAGS`, which every LaunchSettings' validation asks for each count it checks (≈ 100 a
    settings, ≈ 500,000 calls in the engine-diff table's render)."""
    flags = engine_flags(engine)
    own = [flag for flag, name in flags.spellings.items() if name == field]
    own += [flag for flag, own_flag in flags.own_flags.items() if own_flag.field == field]
    if own:
        return own[0]
    return next(
        (flag for flag, name in KVTOP_SPELLINGS.items() if name == field), "--" + field.replace("_", "-")
    )


def model_args(engine: EngineId, model: str) -> list[str]:
    """The model as the engine's server takes it: `[flag, model]`, or `[model]` where its CLI takes the model
    positionally (`EngineFlags.model_flag` None); written before every other flag, where a positional belongs."""
    flag = engine_flags(engine).model_flag
    return [model] if flag is None else [flag, model]


#: The bounded counts that are sizes in bytes: their bounds are said in the unit typed ('1 TiB'), never a bare count.
SIZE_COUNTS = frozenset({"kv_cache_memory_bytes", "max_gpu_total_bytes"})


def check_values(
    engine: EngineId, values: Mapping[str, object], spelled: Mapping[str, str], written: Mapping[str, str] | None = None
) -> None:
    """Raise InputError naming the flag when a count or fraction is outside what the engine accepts.

    `spelled` maps a field to the spelling the user typed; otherwise the engine's own spelling is named. `written`
    maps a size to the text typed ('1000TiB'): its bounds are said in that unit.
    """
    flags = engine_flags(engine)
    for field in POSITIVE_COUNTS:
        value = values.get(field)
        if not isinstance(value, int) or isinstance(value, bool):
            continue
        flag = spelled.get(field) or spelling_of(engine, field)
        flags.refuse(field, value, flag)
        limit = MAX_PARALLEL if field in ("tp", "pp", "dp", "ep", "dcp") else MAX_COUNT
        if value > limit and field in SIZE_COUNTS:
            typed = (written or {}).get(field)  # said in the unit typed ('1 TiB'), in bytes for a byte count
            unit = written_unit(typed) if typed is not None else None
            raise InputError(f"must be at most {in_unit(limit, unit)} (got {in_unit(value, unit)})", field=flag)
        if value > limit:
            raise InputError(f"must be at most {limit:,} (got {value:,})", field=flag)
        if value >= 1:
            continue
        special = flags.specials.get(field)
        if special is not None and value == special[0]:
            continue
        hint = f", or {special[0]} {special[1]}" if special else ""
        raise InputError(f"must be at least 1{hint} (got {value})", field=flag)
    for field in FRACTIONS:
        value = values.get(field)
        if isinstance(value, float) and not 0 < value <= 1:  # NaN fails too
            flag = spelled.get(field) or spelling_of(engine, field)
            raise InputError(f"must be in (0, 1] (got {value:g})", field=flag)
    version = values.get("engine_version")
    if version is not None and not (names := release_names(engine)).names_one(str(version)):
        flag = spelled.get("engine_version") or spelling_of(engine, "engine_version")
        raise InputError(names.refusal(str(version)), field=flag)
    for field, words in flags.choices.items():
        value = values.get(field)
        if value is not None and value not in words:
            flag = spelled.get(field) or spelling_of(engine, field)
            raise InputError(f"must be {' or '.join(words)} (got {quoted(value)})", field=flag)
    for field, value in values.items():  # the engine's own refusals of its other settings
        if field in FIELD_TYPES and field not in POSITIVE_COUNTS and value is not None:
            flags.refuse(field, value, spelled.get(field) or spelling_of(engine, field))


def check_parallel(settings: LaunchSettings) -> None:
    """Raise InputError when --ep or --dcp do not fit the ranks of the final (merged) settings."""
    engine_flags(settings.engine).check_parallel(settings)


def parse_flags(
    engine: EngineId,
    tokens: Sequence[str],
    *,
    strict: bool = False,
    model: str | None = None,
    engine_line: bool = False,
) -> LaunchSettings:
    """Parse engine flags as `engine` spells them. `strict` rejects flags the engine or kvtop does not know;
    `engine_line` (the tokens are the engine's own command line, `--cmd`) refuses kvtop's own flags for it. Typed to
    kvtop (strict, not the engine's line) a size may also be written with its unit ('20GiB': WRITTEN_SIZE_FIELDS)."""
    if engine not in ENGINE_IDS:
        raise InputError(f"unknown engine {engine!r} (one of {', '.join(ENGINE_IDS)})", field="--engine")
    flags = engine_flags(engine)
    positionals, pairs = split_tokens(tokens, lambda typed: flags.as_parsed(typed) in flags.list_valued)
    values: dict[str, object] = {"engine": engine}
    extra: dict[str, str | bool] = {}
    unknown: list[str] = []  # flags neither the engine's nor kvtop's: kept in `flags`, named as ignored
    spelled: dict[str, str] = {}  # field -> the spelling the user typed, for error messages
    written: dict[str, str] = {}  # field -> the text typed for it, a size's bounds said in its unit
    # the release typed beside them (the last one wins, as in `values`): the engine's reading of a count may take it
    stated = [str(raw) for typed, raw in pairs if flag_field(engine, flags.as_parsed(typed)) == "engine_version"]
    for typed, raw in pairs:
        spelling = flags.as_parsed(typed)
        own_flag = flags.own_flags.get(spelling) if engine_line else None
        if own_flag is not None:
            raise InputError(
                f"kvtop's own flag ({own_flag.says}), which {display_name(engine)} would reject: "
                "give it to kvtop, outside --cmd",
                field=typed,
            )
        field = flag_field(engine, spelling)
        if field is None and spelling.startswith("--no-") and flag_field(engine, "--" + spelling[5:]):
            field, raw = flag_field(engine, "--" + spelling[5:]), False
        if field is None and spelling in flags.passthrough:
            if strict or engine_line:  # a value typed to kvtop or on the engine's line (a log's is what ran)
                # a memory-neutral flag at a value whose effect was not read (vLLM's flags_valued.py) is refused
                # when typed to kvtop; on an engine's line it is kept and named as not modelled, as an unmodelled
                # flag is
                try:
                    flags.refuse(spelling.lstrip("-"), raw, typed)
                except InputError:
                    if strict or spelling not in flags.memory_neutral:
                        raise
                    unknown.append(typed)
            extra[spelling.lstrip("-")] = raw
            continue
        if field is None:
            if strict:
                # the engine's own flag kvtop does not model first; then another engine's spelling ('--kv-cache-dtype'
                # is SGLang's: TensorRT-LLM's serve takes --kv_cache_config.dtype, though trtllm-build's
                # --kv_cache_dtype respells it), then a respelling
                reason = (not_modelled_why(engine, spelling) or other_engines_flag(engine, typed)
                          or respelled(engine, typed) or other_engines_flag(engine, spelling))  # fmt: skip
                if reason is not None:
                    raise InputError(reason, field=typed)
                raise UnknownFlagError(f"not a flag of {display_name(engine)} that kvtop knows", field=typed,
                                       engine_name=display_name(engine), alike=alike_flag(engine, typed))  # fmt: skip
            typed, raw = masked_glued_flag(typed, raw)  # `-hftKEY`: kept masked, never as typed
            extra[typed.lstrip("-")] = raw
            unknown.append(typed)
            continue
        # a size typed to kvtop may be written with its unit ('20GiB'); the engine's own line holds what it reads
        own_size = strict and not engine_line and field in WRITTEN_SIZE_FIELDS
        read = written_size(raw) if own_size and isinstance(raw, str) else None
        if read is None and isinstance(raw, str):
            read = flags.read_int(field, raw, typed, stated[-1] if stated else None)
        value = read if read is not None else typed_value(FIELD_TYPES[field], raw, typed)
        if strict and not engine_line and field in spelled and values[field] != value:
            # typed to kvtop twice at two values (`--tp 2 --tensor-parallel-size 4`): the engine's argparse would take
            # the last one silently, a plan of it would hide which one the operator meant
            raise InputError(f"given twice, at two values: {spelled[field]} {values[field]} and {typed} {value}: "
                             "give it once", field=typed)  # fmt: skip
        values[field] = value
        spelled[field] = typed
        if isinstance(raw, str):
            written[field] = raw
    if strict and positionals:
        # quoted as the redactor shows the line: a word left over after a secret flag may be a second key (SGLang's
        # one-valued `--api-key k1 k2`), not a positional to echo
        shown = redact_argv(tokens)[positionals[0]]  # by position: the same word may be a flag's value before it
        raise InputError(f"unexpected argument {quoted(shown, 80)}", field="command line")
    if model is not None and "model" not in values:
        values["model"] = model
    check_values(engine, values, spelled, written)
    dtype, version = values.get("kv_cache_dtype"), values.get("engine_version")
    if isinstance(dtype, str):  # a str where typed (FIELD_TYPES), like the release
        flags.refuse_kv_dtype(dtype, spelled["kv_cache_dtype"], version if isinstance(version, str) else None)
    values["flags"] = extra
    values["unknown_flags"] = tuple(unknown)
    return LaunchSettings.model_validate(values)
