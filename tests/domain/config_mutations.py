"""Hypothesis strategies that mutate the real configs: wrong types, deletions, overflows, unicode,
truncation, huge values, flipped bytes. Shared by the fuzz test and `benchmarks/fuzz_configs.py`.

A mutated config is a `Planted`: the bytes of config.json (and of a sibling hf_quant_config.json
where the real model has one), plus the list of mutations for the failure message. Mutations
prefer the fields kvtop reads (the schema's field names) but may touch any key at any depth.
"""

from __future__ import annotations

import io
import json
import signal
import traceback
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from kvtop.domain.config_schema import OuterConfig, RopeScaling, TextConfig, VisionConfig
from kvtop.domain.quant_schema import CompressedWeights, ModeloptQuant, QuantizationConfig
from tests.conftest import CONFIGS

CONFIG_FILES = sorted(p for p in CONFIGS.glob("*.json") if "hf_quant_config" not in p.name)
REAL: dict[str, Any] = {p.name: json.loads(p.read_text()) for p in CONFIG_FILES}
REAL_QUANT: dict[str, Any] = {
    p.name: json.loads(p.with_name(p.stem + ".hf_quant_config.json").read_text())
    for p in CONFIG_FILES
    if p.with_name(p.stem + ".hf_quant_config.json").is_file()
}
READ_KEYS = sorted(
    {
        alias
        for model in (OuterConfig, TextConfig, VisionConfig, RopeScaling, QuantizationConfig, ModeloptQuant)
        for name, info in model.model_fields.items()
        for alias in (name, *(getattr(info.validation_alias, "choices", None) or ()))
        if isinstance(alias, str)
    }
    | set(CompressedWeights.model_fields)
    | {"quantization"}
)

UNICODE = st.text(alphabet=st.characters(codec="utf-8"), max_size=12) | st.sampled_from(
    [
        "模型",
        "🦙",
        "\x00",
        "\u202e",
        "１２８",
        "٣٢",
        "ｆｐ８",
        "NaN",
        "Infinity",
        "1e309",
        "-0",
        "0x20",
        " 32 ",
        "",
    ]
)
NUMBERS = (
    st.sampled_from(
        [0, -1, 1, 2, 3, 7, -(2**63), 2**63, 2**64 + 1, 10**30, 10**400, 2**31 - 1, 1 << 20, 1 << 40]
    )
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.integers()
)
SCALARS = NUMBERS | UNICODE | st.booleans() | st.none()
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(UNICODE, inner, max_size=4),
    max_leaves=8,
)
HUGE = st.sampled_from(
    [
        lambda: "x" * 1_000_000,
        lambda: ["sliding_attention"] * 200_000,
        lambda: list(range(100_000)),
        lambda: {f"k{i}": i for i in range(50_000)},
        lambda: json.loads("[" * 30 + "1" + "]" * 30),
    ]
).map(lambda make: make())  # built per draw: a later mutation may edit it in place


@dataclass(frozen=True)
class Planted:
    name: str  # the real config it came from
    config: bytes
    quant: bytes | None
    mutations: tuple[str, ...]

    def write(self, folder: Path) -> Path:
        """config.json (and hf_quant_config.json beside it) in `folder`; the config's path."""
        path = folder / "config.json"
        path.write_bytes(self.config)
        sibling = folder / "hf_quant_config.json"
        if self.quant is not None:
            sibling.write_bytes(self.quant)
        elif sibling.exists():
            sibling.unlink()
        return path


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in items:
        if isinstance(node, list) and key > 3:
            break  # a list's first items stand for the rest (exclusion lists run to thousands)
        out.append((*prefix, key))
        out.extend(_paths(child, (*prefix, key)))
    return out


def _parent(doc: Any, path: tuple[Any, ...]) -> Any:
    for key in path[:-1]:
        doc = doc[key]
    return doc


@st.composite
def _mutate(draw: st.DrawFn, doc: Any) -> tuple[Any, str]:
    """One mutation of `doc` (in place where it can be): returns the new document and what was done."""
    paths = _paths(doc)
    read = [p for p in paths if isinstance(p[-1], str) and p[-1] in READ_KEYS]
    if not paths:
        return draw(VALUES), "replaced the whole document"
    path = draw(st.sampled_from(read)) if read and draw(st.booleans()) else draw(st.sampled_from(paths))
    parent, key = _parent(doc, path), path[-1]
    where = ".".join(map(str, path))
    kind = draw(st.sampled_from(["type", "delete", "number", "unicode", "huge", "rename", "wrap"]))
    if kind == "delete":
        del parent[key]
    elif kind == "number":
        parent[key] = draw(NUMBERS)
    elif kind == "unicode":
        parent[key] = draw(UNICODE)
    elif kind == "huge":
        parent[key] = draw(HUGE)
    elif kind == "rename" and isinstance(parent, dict):
        parent[draw(UNICODE)] = parent.pop(key)
    elif kind == "wrap":  # a list or an object where a scalar was: the 'not subscriptable' family
        parent[key] = draw(st.sampled_from([[parent[key]], {"0": parent[key]}, [parent[key]] * 2]))
    else:
        kind, parent[key] = "type", draw(VALUES)
    return doc, f"{kind} at {where}"


def _dumps(doc: Any) -> bytes:
    try:
        return json.dumps(doc, ensure_ascii=False).encode("utf-8", "surrogatepass")
    except ValueError:  # an integer beyond str()'s digit limit: write it anyway, as a file could hold it
        return b'{"hidden_size": ' + b"9" * 5000 + b"}"


@st.composite
def _bytes_level(draw: st.DrawFn, raw: bytes) -> tuple[bytes, str]:
    kind = draw(st.sampled_from(["truncate", "flip", "insert"]))
    at = draw(st.integers(0, max(0, len(raw) - 1)))
    if kind == "truncate":
        return raw[:at], f"truncated at byte {at}"
    if kind == "flip":
        return raw[:at] + bytes([raw[at] ^ draw(st.integers(1, 255))]) + raw[at + 1 :], f"flipped byte {at}"
    junk = draw(st.binary(max_size=8) | st.sampled_from([b"NaN", b"-Infinity", b"\xff\xfe", b"]]]", b'"\\u']))
    return raw[:at] + junk + raw[at:], f"inserted {junk!r} at byte {at}"


@st.composite
def planted_configs(draw: st.DrawFn, *, max_mutations: int = 4) -> Planted:
    """A real config (and its hf_quant_config) with 1..max_mutations field mutations, sometimes byte-level damage."""
    name = draw(st.sampled_from(sorted(REAL)))
    doc = json.loads(json.dumps(REAL[name]))
    quant = json.loads(json.dumps(REAL_QUANT[name])) if name in REAL_QUANT else None
    done: list[str] = []
    for _ in range(draw(st.integers(1, max_mutations))):
        if quant is not None and draw(st.integers(0, 3)) == 0:
            quant, what = draw(_mutate(quant))
            done.append(f"hf_quant_config: {what}")
        else:
            doc, what = draw(_mutate(doc))
            done.append(what)
    raw = _dumps(doc)
    if draw(st.integers(0, 4)) == 0:
        raw, what = draw(_bytes_level(raw))
        done.append(what)
    return Planted(name, raw, _dumps(quant) if quant is not None else None, tuple(done))


class Outcome(str, Enum):
    PLANNED = "planned"  # exit 0 and a JSON plan
    CLEAN_ERROR = "clean error"  # exit 2 and one line "kvtop: error: …"
    TRACEBACK = "traceback"  # an exception escaped, or the exit was neither of the above
    HANG = "hang"  # still running at the watchdog


def plan_in_process(path: Path, *, watchdog_s: int = 10) -> tuple[Outcome, str]:
    """`kvtop plan --model PATH --json` through the CLI's own `main`, in this process (fast).

    SIGALRM stands watchdog: a run still going after `watchdog_s` is a hang (main thread only).
    """
    from kvtop.cli import main

    out, err = io.StringIO(), io.StringIO()

    def alarm(signum: int, frame: Any) -> None:
        raise _Hang

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(watchdog_s)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            code = main(["plan", "--model", str(path), "--json"])
    except _Hang:
        return Outcome.HANG, f"still running after {watchdog_s} s"
    except BaseException:  # noqa: BLE001 - what escapes main is exactly what is being counted
        return Outcome.TRACEBACK, traceback.format_exc()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return classify(code, out.getvalue(), err.getvalue())


def classify(code: int, stdout: str, stderr: str) -> tuple[Outcome, str]:
    """The outcome of one run from its exit code and output."""
    if code == 0:
        try:
            plan = json.loads(stdout)
        except ValueError:
            return Outcome.TRACEBACK, f"exit 0 without a JSON plan: {stdout[:300]!r}"
        if not isinstance(plan, dict) or "token_capacity" not in plan:
            return Outcome.TRACEBACK, f"exit 0 without a plan: {stdout[:300]!r}"
        return Outcome.PLANNED, ""
    lines = stderr.splitlines()
    if code == 2 and len(lines) == 1 and lines[0].startswith("kvtop: error: ") and "Traceback" not in stderr:
        return Outcome.CLEAN_ERROR, lines[0]
    return Outcome.TRACEBACK, f"exit {code}: {stderr[-2000:]}"


class _Hang(BaseException):
    """Raised by the watchdog's SIGALRM (a BaseException, so no `except Exception` swallows it)."""
