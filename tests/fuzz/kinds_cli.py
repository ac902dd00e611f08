"""Fuzzed inputs that enter through files and flags, each run as the command a person would type:

- `log`: a real engine log (all four engines' cases), mangled, through `kvtop explain LOG --model …`,
  with the log's own engine, another one (`--engine` mismatch) or none, sometimes with flags or `--cmd`;
- `flags`: each engine's launch flags, spelled as its flags package spells them, through `kvtop plan`
  directly and as `--cmd '<launch command>'` (wrong types, 10**30, NaN, unicode digits, empty values,
  duplicated flags, quotes and backslashes), TensorRT-LLM's options YAML among them;
- `scenario`: examples/scenarios/*.json mutated, through `kvtop snapshot --demo FILE --json`;
- `checkpoint`: a checkpoint folder whose safetensors headers are mutated, through `kvtop plan --model DIR`.
"""

from __future__ import annotations

import json
import shlex
import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from kvtop.domain.engines.registry import ENGINE_IDS, engine_flags
from kvtop.domain.launch import FIELD_TYPES, KVTOP_SPELLINGS
from kvtop.sources.scenario import Scenario
from tests.data_paths import CASES, CONFIGS
from tests.fuzz.atoms import NUMBER_TEXT, UNICODE, damage_bytes, dumps, mutate_document
from tests.fuzz.runner import Outcome, clear, run_cli
from tests.fuzz.text import mangled_text

ROOT = Path(__file__).resolve().parents[2]
PRESETS = (
    "llama-3.1-8b",
    "llama-3-70b",
    "qwen3-235b-a22b",
    "deepseek-v3",
    "gpt-oss-120b",
    "qwen3-next-80b-a3b",
)


@dataclass(frozen=True)
class CliInput:
    """Files to write into a folder and the argv that reads them (`{dir}` stands for the folder)."""

    kind: str
    argv: tuple[str, ...]
    files: tuple[tuple[str, bytes], ...] = ()
    done: tuple[str, ...] = ()
    findings_codes: tuple[int, ...] = ()
    json_key: str | None = None
    json_out: bool = True

    def write(self, folder: Path) -> list[str]:
        """Write the files (clearing what an earlier input left) and return the argv for this folder."""
        clear(folder)
        for name, data in self.files:
            path = folder / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        return [token.replace("{dir}", str(folder)) for token in self.argv]

    def run(self, folder: Path, watchdog_s: int = 10) -> tuple[Outcome, str]:
        argv = self.write(folder)
        return run_cli(
            argv,
            watchdog_s=watchdog_s,
            findings_codes=self.findings_codes,
            json_key=self.json_key,
            json_out=self.json_out,
        )

    def describe(self) -> str:
        return f"{self.kind}: kvtop {shlex.join(self.argv)[:300]} | {'; '.join(self.done)[:400]}"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """What hypothesis shows of a failing example: what was done, not the megabytes it made."""
        printer.text(self.describe())


# --- engine logs through `kvtop explain` ------------------------------------------------------------


def _case_model(case_dir: Path) -> str:
    config = (json.loads((case_dir / "case.json").read_text()).get("config") or "").split(" ")[0]
    return str(CONFIGS / config) if config and (CONFIGS / config).is_file() else "llama-3.1-8b"


LOG_CASES = sorted(p.parent for p in CASES.glob("*/*/engine.log") if p.read_text().strip())
LOG_TEXT = {case: (case / "engine.log").read_text() for case in LOG_CASES}
LOG_MODEL = {case: _case_model(case) for case in LOG_CASES}
LOG_POOL = sorted({line for text in LOG_TEXT.values() for line in text.splitlines() if line.strip()})


@st.composite
def logs(draw: st.DrawFn) -> CliInput:
    """A real log mangled, explained with the case's model (or the log's own), engine right or wrong."""
    case = draw(st.sampled_from(LOG_CASES))
    raw, done = draw(mangled_text(LOG_TEXT[case], LOG_POOL))
    engine = case.parent.name
    argv = ["explain", "{dir}/engine.log"]
    model = draw(st.sampled_from(["case", "case", "case", "case", "preset", "none"]))
    if model != "none":
        argv += ["--model", LOG_MODEL[case] if model == "case" else draw(st.sampled_from(PRESETS))]
    given = draw(st.sampled_from(["own", "own", "own", "other", "none"]))
    if given != "none":
        argv += [
            "--engine",
            engine if given == "own" else draw(st.sampled_from([e for e in ENGINE_IDS if e != engine])),
        ]
    if draw(st.integers(0, 4)) == 0:
        argv += draw(engine_flag_tokens(engine))
    if draw(st.integers(0, 6)) == 0:
        argv += ["--cmd", draw(launch_command(engine))]
    if draw(st.integers(0, 5)) == 0:
        argv += draw(memory_flags())
    json_out = draw(st.integers(0, 3)) > 0
    return CliInput(
        "log",
        tuple(argv + (["--json"] if json_out else [])),
        (("engine.log", raw),),
        (f"{case.parent.name}/{case.name}", *done),
        json_key="verdict" if json_out else None,
        json_out=json_out,
    )


# --- engine flags through `kvtop plan` --------------------------------------------------------------


def _good_value(engine: str, field_name: str) -> st.SearchStrategy[str]:
    flags = engine_flags(engine)  # type: ignore[arg-type]
    kind = FIELD_TYPES[field_name]
    if field_name == "kv_cache_dtype":
        return st.sampled_from(flags.kv_cache_dtypes)
    if field_name in flags.choices:
        return st.sampled_from(flags.choices[field_name])
    if kind is int:
        return st.sampled_from(["1", "2", "4", "8", "16", "64", "4096", "32768"])
    if kind is float:
        return st.sampled_from(["0.5", "0.8", "0.9", "0.95", "1", "0.05"])
    if field_name == "kv_cache_memory_bytes":
        return st.sampled_from(["20G", "8GiB", "1073741824", "512M"])
    return st.sampled_from(["bf16", "fp8", "auto", "meta-llama/Llama-3.1-8B", "x"])


BAD_VALUE = (
    NUMBER_TEXT
    | UNICODE
    | st.sampled_from(
        ["", "'", '"', "\\", "a b", "--", "True", "None", "[1]", "{}", "1 2", "$(echo 1)", "1;2", "\\\n"]
    )
)


@st.composite
def engine_flag_tokens(draw: st.DrawFn, engine: str) -> list[str]:
    """0..6 flags as `engine` spells them, with good values, bad values, no values, or twice."""
    flags = engine_flags(engine)  # type: ignore[arg-type]
    spellings = {**KVTOP_SPELLINGS, **flags.spellings}
    others = sorted({s for e in ENGINE_IDS for s in engine_flags(e).spellings} - set(spellings))
    tokens: list[str] = []
    for _ in range(draw(st.integers(0, 6))):
        pick = draw(st.integers(0, 9))
        if pick <= 6:
            flag = draw(st.sampled_from(sorted(spellings)))
            name = spellings[flag]
        elif pick == 7 and flags.passthrough:
            flag, name = draw(st.sampled_from(sorted(flags.passthrough))), ""
        elif pick == 8 and others:
            flag, name = draw(st.sampled_from(others)), ""
        else:
            flag, name = (
                draw(
                    st.sampled_from(
                        ["--", "-", "--=", "---tp", "--tp=", "-x", "--no-tp", "--enable-dp-attention=no"]
                    )
                ),
                "",
            )
        kind = FIELD_TYPES.get(name)
        how = draw(st.sampled_from(["good", "good", "bad", "none", "equals", "twice"]))
        value = draw(_good_value(engine, name)) if name and how != "bad" else draw(BAD_VALUE)
        if kind is bool and how in ("good", "twice"):
            tokens += [flag] * (2 if how == "twice" else 1)
        elif how == "none":
            tokens.append(flag)
        elif how == "equals":
            tokens.append(f"{flag}={value}")
        else:
            tokens += [flag, value] * (2 if how == "twice" else 1)
    return tokens


ENTRY = {
    "sglang": ["python3 -m sglang.launch_server --model-path {model}", "sglang serve {model}"],
    "vllm": ["vllm serve {model}", "python -m vllm.entrypoints.openai.api_server --model {model}"],
    "lmdeploy": ["lmdeploy serve api_server {model}"],
    "trtllm": ["trtllm-serve {model}", "trtllm-serve serve {model}"],
    "llamacpp": ["llama-server -m {model}", "/usr/lib/ollama/llama-server --model {model}"],
}


@st.composite
def launch_command(draw: st.DrawFn, engine: str) -> str:
    """The engine's launch command with fuzzed flags, quoted properly or not, continued with backslashes."""
    model = draw(
        st.sampled_from(["meta-llama/Llama-3.1-8B-Instruct", "/models/llama", "llama-3.1-8b", "'x y'", ""])
    )
    prefix = draw(st.sampled_from(ENTRY[engine])).format(model=model)
    tokens = draw(engine_flag_tokens(engine))
    how = draw(st.sampled_from(["quoted", "raw", "continued", "env"]))
    if how == "quoted":
        return f"{prefix} {shlex.join(tokens)}"
    if how == "continued":
        return prefix + "".join(f" \\\n  {token}" for token in tokens)
    if how == "env":
        return f"CUDA_VISIBLE_DEVICES=0,1 {prefix} {' '.join(tokens)}"
    return f"{prefix} {' '.join(tokens)}"


SIZE_TEXT = st.sampled_from(
    [
        "80GiB",
        "80GB",
        "141GiB",
        "0",
        "1GiB",
        "512MiB",
        "-5GiB",
        "nanGiB",
        "infGiB",
        "1e400GiB",
        "1e30GiB",
        "１２GiB",
        "80 GiB",
        "80gib",
        "GiB",
        "",
        "80",
        "9" * 400 + "GiB",
    ]
)
MEMORY_FLAGS = ("--gpu-memory", "--free-memory", "--free-after-load", "--weights-memory", "--non-kv-memory")
GPU_NAMES = st.sampled_from(
    ["H100", "H200", "A100-80GB", "B200", "L40S", "h100", "RTX 4090", "", "模型", "H" * 300]
)


@st.composite
def memory_flags(draw: st.DrawFn) -> list[str]:
    tokens: list[str] = []
    for flag in draw(st.lists(st.sampled_from(MEMORY_FLAGS), max_size=3)):
        tokens += [flag, draw(SIZE_TEXT | NUMBER_TEXT)]
    if draw(st.booleans()):
        tokens += ["--gpu", draw(GPU_NAMES | UNICODE)]
    return tokens


OPTIONS_YAML = {
    "kv_cache_config": {
        "free_gpu_memory_fraction": 0.9,
        "max_tokens": 8192,
        "dtype": "fp8",
        "enable_block_reuse": True,
    },
    "tensor_parallel_size": 2,
    "max_batch_size": 64,
    "max_num_tokens": 8192,
    "backend": "pytorch",
}


def _alias_bomb(levels: int = 8, fan: int = 10) -> bytes:
    """A YAML document of a few hundred bytes whose aliases expand to fan**levels values."""
    lines, previous = ["a: &a {x: 1, y: 1}"], "a"
    for level in range(levels):
        lines.append(f"l{level}: &l{level} {{{', '.join(f'k{j}: *{previous}' for j in range(fan))}}}")
        previous = f"l{level}"
    return ("\n".join(lines) + f"\nkv_cache_config: {{p: *{previous}}}\n").encode()


ALIAS_BOMB = _alias_bomb()
YAML_TRAPS = [
    b"a: &a [*a]\n",  # a list that holds itself
    b"a: &a {k: *a}\n",  # a mapping that holds itself
    b"[" * 5000 + b"]" * 5000,  # nested deeper than the parser's recursion
    ALIAS_BOMB,  # 10^8 values once expanded
    b"kv_cache_config: !!python/object/apply:os.system ['true']\n",
    b"\xff\xfe\x00",
    b"- 1\n- 2\n",
    b"kv_cache_config: [1, 2]\n",
    b"kv_cache_config:\n  max_tokens: .inf\n  free_gpu_memory_fraction: .nan\n",
    b"kv_cache_config:\n  max_tokens: 1e400\n  free_gpu_memory_fraction: -0.5\n",
    b"tensor_parallel_size: 100000000000000000000000000000\n",
    b"x: " + b"9" * 5000 + b"\n",
]


@st.composite
def options_yaml(draw: st.DrawFn) -> tuple[bytes, str]:
    """TensorRT-LLM's --extra_llm_api_options file: a real shape mutated, or a trap for YAML readers."""
    if draw(st.integers(0, 3)) == 0:
        trap = draw(st.sampled_from(YAML_TRAPS))
        return trap, f"options yaml trap {trap[:40]!r}"
    doc, what = draw(mutate_document(json.loads(json.dumps(OPTIONS_YAML)), ("kv_cache_config", "max_tokens")))
    return dumps(doc), f"options yaml: {what}"  # JSON is YAML


@st.composite
def flag_sets(draw: st.DrawFn) -> CliInput:
    """`kvtop plan` with fuzzed engine flags given directly, as `--cmd`, or both."""
    engine = draw(st.sampled_from(ENGINE_IDS))
    argv = ["plan"]
    files: list[tuple[str, bytes]] = []
    done: list[str] = []
    how = draw(st.sampled_from(["direct", "cmd", "both"]))
    if draw(st.integers(0, 9)) > 0:
        argv += [
            "--model",
            draw(
                st.sampled_from(PRESETS)
                | st.sampled_from([str(CONFIGS / "openai--gpt-oss-20b.json"), "a/b", "", "..", "~x/y.json"])
                | UNICODE
            ),
        ]
    if how != "cmd" or draw(st.booleans()):
        argv += ["--engine", engine]
    if how in ("cmd", "both"):
        argv += ["--cmd", draw(launch_command(engine))]
    if how in ("direct", "both"):
        argv += draw(engine_flag_tokens(engine))
    if engine == "trtllm" and draw(st.booleans()):
        data, what = draw(options_yaml())
        files.append(("options.yaml", data))
        argv += [draw(st.sampled_from(["--extra_llm_api_options", "--config"])), "{dir}/options.yaml"]
        done.append(what)
    if draw(st.integers(0, 2)) == 0:
        argv += draw(memory_flags())
    require_fit = draw(st.integers(0, 4)) == 0
    if require_fit:
        argv.append("--require-fit")
    return CliInput(
        "flags",
        tuple([*argv, "--json"]),
        tuple(files),
        tuple(done),
        findings_codes=(1,) if require_fit else (),
        json_key="token_capacity",
    )


# --- scenarios through `kvtop snapshot --demo FILE` -------------------------------------------------

SCENARIOS = {
    p.name: json.loads(p.read_text()) for p in sorted((ROOT / "examples" / "scenarios").glob("*.json"))
}


def _field_names(model: Any) -> set[str]:
    names: set[str] = set()
    for name, info in model.model_fields.items():
        names.add(name)
        for arg in getattr(info.annotation, "__args__", ()) or (info.annotation,):
            if isinstance(arg, type) and hasattr(arg, "model_fields"):
                names |= _field_names(arg)
    return names


SCENARIO_KEYS = _field_names(Scenario) | {"gpu", "engines", "command", "total", "used", "gpus", "extra_bytes"}


@st.composite
def scenarios(draw: st.DrawFn) -> CliInput:
    name = draw(st.sampled_from(sorted(SCENARIOS)))
    doc: Any = json.loads(json.dumps(SCENARIOS[name]))
    done = [name]
    for _ in range(draw(st.integers(1, 4))):
        engines = doc.get("engines") if isinstance(doc, dict) else None
        if (
            draw(st.integers(0, 5)) == 0
            and isinstance(engines, list)
            and engines
            and isinstance(engines[0], dict)
        ):
            engine = draw(st.sampled_from(ENGINE_IDS))
            engines[0]["command"] = draw(launch_command(engine))
            done.append(f"engines[0].command: a fuzzed {engine} launch")
            continue
        doc, what = draw(mutate_document(doc, SCENARIO_KEYS))
        done.append(what)
    raw = dumps(doc)
    if draw(st.integers(0, 5)) == 0:
        raw, what = draw(damage_bytes(raw))
        done.append(what)
    return CliInput(
        "scenario",
        ("snapshot", "--demo", "{dir}/scenario.json", "--json"),
        (("scenario.json", raw),),
        tuple(done),
        json_key="gpus",
    )


# --- safetensors headers through `kvtop plan --model DIR` -------------------------------------------


def _layer(i: int) -> dict[str, tuple[str, list[int]]]:
    p = f"model.layers.{i}."
    return {
        p + "self_attn.q_proj.weight": ("BF16", [4096, 4096]),
        p + "self_attn.k_proj.weight": ("BF16", [1024, 4096]),
        p + "mlp.down_proj.weight": ("BF16", [4096, 14336]),
        p + "input_layernorm.weight": ("BF16", [4096]),
    }


def _header(tensors: dict[str, tuple[str, list[int]]]) -> dict[str, Any]:
    header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, (dtype, shape) in tensors.items():
        size = 2
        for dim in shape:
            size *= dim
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    return header


HEADERS = [_header({**_layer(0), "model.embed_tokens.weight": ("BF16", [128256, 4096])}), _header(_layer(1))]
LLAMA_CONFIG = (CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json").read_bytes()


def _file(header: bytes, declared: int | None = None) -> bytes:
    """8-byte length, the header, and a few tensor bytes (the sizes never need to be real for kvtop)."""
    return struct.pack("<Q", len(header) if declared is None else declared) + header + bytes(16)


@st.composite
def checkpoints(draw: st.DrawFn) -> CliInput:
    files: list[tuple[str, bytes]] = [("ckpt/config.json", LLAMA_CONFIG)]
    done: list[str] = []
    for index, header in enumerate(HEADERS):
        doc = json.loads(json.dumps(header))
        raw_header = dumps(doc)
        if draw(st.booleans()):
            doc, what = draw(mutate_document(doc, ("dtype", "shape", "data_offsets")))
            raw_header = dumps(doc)
            done.append(f"shard {index}: {what}")
        raw = _file(raw_header)
        how = draw(st.integers(0, 6))
        if how == 0:
            raw, what = draw(damage_bytes(raw))
            done.append(f"shard {index}: {what}")
        elif how == 1:
            declared = draw(
                st.sampled_from([0, 1, 7, len(raw_header) + 1, 1 << 40, (1 << 64) - 1, 100_000_001])
            )
            raw = _file(raw_header, declared)
            done.append(f"shard {index}: header length {declared:,}")
        files.append((f"ckpt/model-0000{index + 1}-of-00002.safetensors", raw))
    if not done:
        done.append("unmutated")
    return CliInput(
        "checkpoint",
        ("plan", "--model", "{dir}/ckpt", "--json"),
        tuple(files),
        tuple(done),
        json_key="token_capacity",
    )


CLI_KINDS: dict[str, Callable[[], st.SearchStrategy[CliInput]]] = {
    "log": logs,
    "flags": flag_sets,
    "scenario": scenarios,
    "checkpoint": checkpoints,
}
