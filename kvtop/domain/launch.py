"""The engines' own launch flags, parsed once for `kvtop plan`, `--cmd` and live processes.

SGLang and vLLM name the same knob differently (`--tp-size` / `--tensor-parallel-size`,
`--page-size` / `--block-size`, `--context-length` / `--max-model-len`, …). Every spelling maps
to one canonical field of `LaunchSettings`; flags kvtop does not model are kept verbatim in
`flags` so nothing the operator typed is lost.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, model_validator

from kvtop.domain.errors import InputError

EngineName = Literal["sglang", "vllm"]

KV_CACHE_DTYPES = (
    "auto", "bf16", "bfloat16", "fp16", "float16", "half", "fp32", "float32",
    "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_e4m3fn", "fp8_ds_mla", "fp4", "nvfp4", "fp4_e2m1", "mxfp8",
)  # fmt: skip

# canonical field -> (every spelling the engines accept, value type)
_FLAGS: dict[str, tuple[tuple[str, ...], type]] = {
    "model": (("--model", "--model-path"), str),
    "host": (("--host",), str),
    "port": (("--port",), int),
    "tp": (("--tp", "--tp-size", "--tensor-parallel-size", "-tp"), int),
    "pp": (("--pp", "--pp-size", "--pipeline-parallel-size", "-pp"), int),
    "dp": (("--dp", "--dp-size", "--data-parallel-size", "-dp"), int),
    "ep": (("--ep", "--ep-size", "--expert-parallel-size"), int),
    "dcp": (("--dcp", "--dcp-size", "--decode-context-parallel-size", "-dcp"), int),
    "enable_dp_attention": (("--enable-dp-attention",), bool),
    "enable_expert_parallel": (("--enable-expert-parallel",), bool),
    "mem_fraction_static": (("--mem-fraction-static",), float),
    "gpu_memory_utilization": (("--gpu-memory-utilization",), float),
    "kv_cache_dtype": (("--kv-cache-dtype",), str),
    "page_size": (("--page-size", "--block-size"), int),
    "context_length": (("--context-length", "--max-model-len"), int),
    "max_running_requests": (("--max-running-requests", "--max-num-seqs"), int),
    "max_total_tokens": (("--max-total-tokens",), int),
    "chunked_prefill_size": (("--chunked-prefill-size",), int),
    "max_prefill_tokens": (("--max-prefill-tokens",), int),
    "max_num_batched_tokens": (("--max-num-batched-tokens",), int),
    "kv_cache_memory_bytes": (("--kv-cache-memory-bytes", "--kv-cache-memory"), str),
    "num_gpu_blocks_override": (("--num-gpu-blocks-override",), int),
    "swa_full_tokens_ratio": (("--swa-full-tokens-ratio",), float),
    "disable_hybrid_swa_memory": (("--disable-hybrid-swa-memory",), bool),
    "disable_hybrid_kv_cache_manager": (("--disable-hybrid-kv-cache-manager",), bool),
    "disable_radix_cache": (("--disable-radix-cache",), bool),
    "enforce_eager": (("--enforce-eager",), bool),
    "quantization": (("--quantization", "-q"), str),
    "dtype": (("--dtype",), str),
    "cuda_graph_max_bs": (("--cuda-graph-max-bs",), int),
    "engine_version": (("--engine-version",), str),  # kvtop's own: which era of defaults applies
}
_SPELLING = {spelling: field for field, (spellings, _) in _FLAGS.items() for spelling in spellings}


class LaunchSettings(BaseModel):
    """What a launch command says, with the engine's defaults left as None (unset)."""

    model_config = ConfigDict(frozen=True)

    engine: EngineName
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
    kv_cache_memory_bytes: str | None = None
    num_gpu_blocks_override: int | None = None
    swa_full_tokens_ratio: float | None = None
    disable_hybrid_swa_memory: bool = False
    disable_hybrid_kv_cache_manager: bool = False
    disable_radix_cache: bool = False
    enforce_eager: bool = False
    quantization: str | None = None
    dtype: str | None = None
    cuda_graph_max_bs: int | None = None
    engine_version: str | None = None  # e.g. "0.20.1": older vLLM defaults to utilisation 0.9
    flags: dict[str, str | bool] = {}

    @model_validator(mode="after")
    def _values_in_range(self) -> LaunchSettings:
        """Settings merged from several sources are checked again (flags named as the engine spells them)."""
        check_values(self.engine, {field: getattr(self, field) for field in _FLAGS}, {})
        return self

    @property
    def effective_ep(self) -> int:
        """vLLM's `--enable-expert-parallel` spreads experts over tp × dp ranks."""
        if self.enable_expert_parallel and self.ep == 1:
            return self.tp * self.dp
        return self.ep

    def to_flags(self) -> list[str]:
        """The settings as engine flags (the engine's own spelling), for copy and paste."""
        vllm = self.engine == "vllm"
        names = {
            "tp": "--tensor-parallel-size" if vllm else "--tp-size",
            "pp": "--pipeline-parallel-size" if vllm else "--pp-size",
            "dp": "--data-parallel-size" if vllm else "--dp-size",
            "page_size": "--block-size" if vllm else "--page-size",
            "context_length": "--max-model-len" if vllm else "--context-length",
            "max_running_requests": "--max-num-seqs" if vllm else "--max-running-requests",
        }
        out: list[str] = []
        for field in ("tp", "pp", "dp"):
            value = getattr(self, field)
            if value != 1:
                out += [names[field], str(value)]
        if self.ep != 1 and not vllm:
            out += ["--ep-size", str(self.ep)]
        if self.ep != 1 and vllm and not self.enable_expert_parallel:
            out.append("--enable-expert-parallel")  # vLLM's only spelling: experts over tp × dp
        if self.enable_dp_attention:
            out.append("--enable-dp-attention")
        if self.enable_expert_parallel:
            out.append("--enable-expert-parallel")
        if self.kv_cache_dtype != "auto":
            out += ["--kv-cache-dtype", self.kv_cache_dtype]
        for field in (
            "mem_fraction_static", "gpu_memory_utilization", "page_size", "context_length",
            "max_running_requests", "max_total_tokens", "chunked_prefill_size", "max_num_batched_tokens",
        ):  # fmt: skip
            value = getattr(self, field)
            if value is not None:
                out += [names.get(field, "--" + field.replace("_", "-")), str(value)]
        return out


# Counts that must be at least 1; the engines give no smaller value a meaning kvtop models.
_POSITIVE_COUNTS = (
    "tp", "pp", "dp", "ep", "dcp", "port", "page_size", "context_length", "max_running_requests",
    "max_total_tokens", "chunked_prefill_size", "max_prefill_tokens", "max_num_batched_tokens",
    "num_gpu_blocks_override", "cuda_graph_max_bs",
)  # fmt: skip
# Smaller values an engine documents: SGLang's `--chunked-prefill-size -1` turns chunking off
# (sglang.md §5: "chunked_prefill_size > 0 … else max_prefill_tokens").
_DOCUMENTED_SPECIAL = {"chunked_prefill_size": (-1, "-1 turns chunked prefill off")}
_FRACTIONS = ("mem_fraction_static", "gpu_memory_utilization", "swa_full_tokens_ratio")


def _engine_spelling(engine: EngineName, field: str) -> str:
    """The flag as `engine` spells it (vLLM's names for the knobs both engines have)."""
    spellings = _FLAGS[field][0]
    if engine == "vllm":
        for spelling in spellings:
            if spelling in _VLLM_SPELLINGS:
                return spelling
    return spellings[0]


_VLLM_SPELLINGS = frozenset(
    ("--tensor-parallel-size", "--pipeline-parallel-size", "--data-parallel-size", "--block-size",
     "--max-model-len", "--max-num-seqs")
)  # fmt: skip


def check_values(engine: EngineName, values: dict[str, object], spelled: dict[str, str]) -> None:
    """Raise InputError naming the flag when a count or fraction is outside what the engine accepts.

    `spelled` maps a field to the spelling the user typed; otherwise the engine's own spelling is named.
    """
    for field in _POSITIVE_COUNTS:
        value = values.get(field)
        if not isinstance(value, int) or isinstance(value, bool) or value >= 1:
            continue
        flag = spelled.get(field) or _engine_spelling(engine, field)
        special = _DOCUMENTED_SPECIAL.get(field)
        if special is not None and value == special[0]:
            continue
        if field == "context_length" and value == -1 and engine == "vllm":
            raise InputError(
                "-1 (vLLM's auto-fit to memory) is not modelled by kvtop: give a length in tokens", field=flag
            )
        hint = f", or {special[1]}" if special else ""
        raise InputError(f"must be at least 1{hint} (got {value})", field=flag)
    for field in _FRACTIONS:
        value = values.get(field)
        if isinstance(value, float) and not 0 < value <= 1:
            flag = spelled.get(field) or _engine_spelling(engine, field)
            raise InputError(f"must be in (0, 1] (got {value:g})", field=flag)


def check_parallel(settings: LaunchSettings) -> None:
    """Raise InputError when --ep or --dcp do not fit the ranks of the final (merged) settings.

    SGLang's expert-parallel group lives inside the TP group (tp % ep == 0); vLLM has no EP
    size: `--enable-expert-parallel` spreads experts over all tp × dp ranks (`effective_ep`).
    Decode context parallel splits the TP group: dcp | tp.
    """
    ep = settings.effective_ep
    if settings.engine == "vllm" and ep not in (1, settings.tp * settings.dp):
        raise InputError(
            f"vLLM has no expert-parallel size: --enable-expert-parallel spreads experts over all"
            f" tp × dp = {settings.tp * settings.dp} ranks (got {ep})",
            field="--ep",
        )
    if settings.engine == "sglang" and ep > 1 and settings.tp % ep:
        raise InputError(
            f"expert parallel size {ep} must divide tp {settings.tp} (SGLang's EP group lives inside the TP group)",
            field="--ep",
        )
    if settings.dcp > 1 and settings.tp % settings.dcp:
        raise InputError(
            f"decode context parallel size {settings.dcp} must divide tp {settings.tp}", field="--dcp"
        )


def _convert(field: str, kind: type, raw: str | bool, spelling: str) -> object:
    if kind is bool:
        if isinstance(raw, bool):
            return raw
        return raw.lower() not in ("0", "false", "no", "off")
    if isinstance(raw, bool):
        raise InputError("needs a value", field=spelling)
    try:
        if kind is int:
            return int(raw)
        if kind is float:
            value = float(raw)
            return value
    except ValueError:
        raise InputError(f"expected a number, got {raw!r}", field=spelling) from None
    if field == "kv_cache_dtype" and raw not in KV_CACHE_DTYPES:
        raise InputError(
            f"unknown KV cache dtype {raw!r} (one of {', '.join(KV_CACHE_DTYPES)})", field=spelling
        )
    return raw


def _split(tokens: Sequence[str]) -> tuple[list[str], list[tuple[str, str | bool]]]:
    """Split argv into positionals and (flag, value) pairs; a flag without a value is True."""
    positionals: list[str] = []
    pairs: list[tuple[str, str | bool]] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token.startswith("-") and len(token) > 1 and not _is_number(token):
            if "=" in token:
                name, value = token.split("=", 1)
                pairs.append((name, value))
            elif index + 1 < len(tokens) and not (
                tokens[index + 1].startswith("-") and not _is_number(tokens[index + 1])
            ):
                pairs.append((token, tokens[index + 1]))
                index += 1
            else:
                pairs.append((token, True))
        else:
            positionals.append(token)
        index += 1
    return positionals, pairs


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def parse_flags(
    engine: EngineName, tokens: Sequence[str], *, strict: bool = False, model: str | None = None
) -> LaunchSettings:
    """Parse engine flags (any engine's spelling). `strict` rejects flags kvtop does not know."""
    positionals, pairs = _split(tokens)
    values: dict[str, object] = {"engine": engine}
    extra: dict[str, str | bool] = {}
    spelled: dict[str, str] = {}  # field -> the spelling the user typed, for error messages
    for spelling, raw in pairs:
        field = _SPELLING.get(spelling)
        if field is None:
            if spelling.startswith("--no-") and _SPELLING.get("--" + spelling[5:]):
                field = _SPELLING["--" + spelling[5:]]
                raw = False
            elif strict:
                raise InputError("not an engine flag kvtop knows", field=spelling)
            else:
                extra[spelling.lstrip("-")] = raw
                continue
        values[field] = _convert(field, _FLAGS[field][1], raw, spelling)
        spelled[field] = spelling
    if strict and positionals:
        raise InputError(f"unexpected argument {positionals[0]!r}", field="command line")
    if model is not None and "model" not in values:
        values["model"] = model
    check_values(engine, values, spelled)
    values["flags"] = extra
    return LaunchSettings.model_validate(values)


def detect_engine(argv: Sequence[str]) -> tuple[EngineName, int, str | None] | None:
    """Find an SGLang/vLLM server launch in argv: (engine, index after the entry point, model)."""
    for index, token in enumerate(argv):
        base = token.rsplit("/", 1)[-1]
        nxt = argv[index + 1] if index + 1 < len(argv) else ""
        if token in ("sglang.launch_server", "sglang.srt.server"):
            return "sglang", index + 1, None
        if token.startswith("vllm.entrypoints") and ("api_server" in token or "cli" in token):
            if token.endswith("cli.main") and nxt == "serve":
                return "vllm", index + 2, _positional_model(argv[index + 2 :])
            return "vllm", index + 1, None
        if base in ("vllm", "sglang") and nxt == "serve":
            engine: EngineName = "vllm" if base == "vllm" else "sglang"
            return engine, index + 2, _positional_model(argv[index + 2 :])
    return None


def _positional_model(rest: Sequence[str]) -> str | None:
    if rest and not rest[0].startswith("-"):
        return rest[0]
    return None


def split_command(command: str) -> list[str]:
    """A launch command as argv; an unclosed quote is an InputError naming --cmd, never a traceback."""
    try:
        return shlex.split(command)
    except ValueError as err:
        raise InputError(f"cannot read the command ({err})", field="--cmd") from None


def parse_launch_command(argv: Sequence[str] | str) -> LaunchSettings | None:
    """Parse a whole launch command (a string or argv); None if it is no SGLang/vLLM server."""
    tokens = split_command(argv) if isinstance(argv, str) else list(argv)
    found = detect_engine(tokens)
    if found is None:
        return None
    engine, start, model = found
    rest = tokens[start:]
    if model is not None:
        rest = rest[1:]
    return parse_flags(engine, rest, model=model)
