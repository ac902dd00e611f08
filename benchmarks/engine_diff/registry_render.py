"""docs/fidelity_registry.md: every class of the engines' registries, and the held-out measure over every real
config at hand, from the registry sweep's cached engine figures and kvtop's side recomputed.

    python benchmarks/engine_diff/registry_render.py          # rewrite the doc (seconds; no engine runs)

tests/test_fidelity_registry.py fails when the doc no longer matches the kvtop it runs with.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.engine_diff.engines import ENGINES
from benchmarks.engine_diff.registry_configs import (
    REGISTRY_DATA,
    ConfigFile,
    config_for_class,
    default_configs,
    planned_classes,
    real_configs,
    variant_configs,
)
from benchmarks.engine_diff.registry_judge import (
    BOTH_REFUSE,
    DIFFERENT,
    EQUAL,
    NOT_BUILT,
    PART_NOT_MODELLED,
    TOWER_NOT_MODELLED,
    Judged,
    judge,
    one_line,
)
from benchmarks.engine_diff.registry_sweep import load_rows
from benchmarks.engine_diff.run import relative_paths
from benchmarks.engine_diff.venvs import REPO
from kvtop.domain.errors import KvtopError
from kvtop.domain.model_config import model_from_config

DOC = REPO / "docs" / "fidelity_registry.md"
SWEPT = ("vllm", "sglang")
VERSIONS = {engine: ENGINES[engine].versions[0] for engine in SWEPT}
TARGET = 0.95


def judged() -> dict[str, list[Judged]]:
    return {e: [judge(e, VERSIONS[e], row) for row in load_rows(e, VERSIONS[e])] for e in SWEPT}


def _config_outcome(rows: list[Judged]) -> tuple[str, str]:
    """One config's outcome over its TPs: equal where every layout is (or both refuse it); else the first other
    (one that is not TOWER_NOT_MODELLED / PART_NOT_MODELLED before one that is: a difference in the language model
    says more)."""
    built = [r for r in rows if r.verdict != NOT_BUILT]
    if not built:
        return NOT_BUILT, rows[0].detail if rows else ""
    others = sorted((r for r in built if r.verdict not in (EQUAL, BOTH_REFUSE)),
                    key=lambda r: r.verdict in (TOWER_NOT_MODELLED, PART_NOT_MODELLED))  # fmt: skip
    other = others[0] if others else None
    if other is not None:
        return other.verdict, f"TP{other.tp}: {other.detail}"
    if all(r.verdict == BOTH_REFUSE for r in built):
        return BOTH_REFUSE, built[0].detail
    return EQUAL, "; ".join(sorted({r.detail for r in built if r.detail}))


def held_out(rows: list[Judged]) -> tuple[dict[str, tuple[str, str]], str]:
    """config -> (outcome, detail) over the real configs, and the measure's line: the share over checkpoints' own
    configs, the reconstructed ones counted beside it."""
    by_config: dict[str, list[Judged]] = {}
    for row in rows:
        if row.real:
            by_config.setdefault(row.config, []).append(row)
    outcomes = {c: _config_outcome(r) for c, r in sorted(by_config.items())}
    rebuilt = {c for c, r in by_config.items() if r[0].reconstructed}
    counts = Counter(o for c, (o, _) in outcomes.items() if c not in rebuilt)
    judged_n = sum(n for o, n in counts.items() if o not in (NOT_BUILT, BOTH_REFUSE))
    share = counts[EQUAL] / judged_n if judged_n else 0.0
    read = sum(1 for c, (o, d) in outcomes.items() if c not in rebuilt and o == DIFFERENT and "— reading A" in d)
    beside = Counter(outcomes[c][0] for c in rebuilt)
    line = (f"{counts[EQUAL]} of {judged_n} equal at TP 1 and 2 ({share:.1%}; target {TARGET:.0%}); "
            + ", ".join(f"{n} {o}" for o, n in sorted(counts.items()) if o != EQUAL)
            + f" ({read} of the different with a reading of docs/fidelity.md); beside the share, "
            + f"{len(rebuilt)} reconstructed: " + ", ".join(f"{n} {o}" for o, n in sorted(beside.items())))  # fmt: skip
    towers = [c for c, (o, _) in outcomes.items() if o in (TOWER_NOT_MODELLED, PART_NOT_MODELLED)]
    if towers:
        line += f". Tower, or a part of it, not modelled (not counted equal): {', '.join(f'`{c}`' for c in towers)}"
    return outcomes, line


def _class_cell(rows: list[Judged]) -> str:
    if not rows:
        return "not run"
    outcome, detail = _config_outcome(rows)
    return outcome if not detail else f"{outcome}: {one_line(detail, 140)}"


def _kvtop_column(kind: str, config: ConfigFile | None) -> str:
    """The kvtop column: coverage's verdict, except a generic class whose judged config the plan reads through an
    entry (its model_type's or its text section's): what the plan does, "generic: read as <entry> by <field>"
    (ModelSpec.unchecked_class, the note the plan prints), e.g. HfMoondream's config read by the moondream3 entry."""
    if kind != "generic" or config is None:
        return kind
    try:
        unchecked = model_from_config(json.loads(config.path.read_text())).unchecked_class
    except KvtopError:
        return kind
    if unchecked is None:
        return kind
    return f"generic: read as {unchecked.read_as} by {unchecked.chosen_by.field}"


def class_table(results: dict[str, list[Judged]]) -> tuple[list[str], dict[str, Counter[str]]]:
    chosen = config_for_class(real_configs() + default_configs())
    variants: dict[str, list[str]] = {}
    for variant in variant_configs():  # a class's second composed config, judged with its first
        variants.setdefault(variant.architecture, []).append(variant.name)
    kinds = {name: (kind, why) for e in SWEPT for name, kind, why in planned_classes(e)}
    lines = ["| class | kvtop | config | vLLM 0.33.0 | SGLang 0.5.23 |", "|---|---|---|---|---|"]
    counts: dict[str, Counter[str]] = {e: Counter() for e in SWEPT}
    registered = {e: {name for name, _, _ in planned_classes(e)} for e in SWEPT}
    no_config_file = REGISTRY_DATA / "no_config.json"
    no_config = json.loads(no_config_file.read_text()) if no_config_file.exists() else {}
    for name in sorted(kinds):
        kind, why = kinds[name]
        config = chosen.get(name)
        cells = []
        for engine in SWEPT:
            if name not in registered[engine]:
                cells.append("—")
                continue
            if kind == "not_modelled":
                cell = f"not modelled: {one_line(why, 100)}"
                counts[engine]["not modelled"] += 1
            elif config is None:
                cell = f"no config at hand: {one_line(no_config.get(name, ''), 100)}"
                counts[engine]["no config"] += 1
            else:
                names = {config.name, *variants.get(name, ())}
                rows = [r for r in results[engine] if r.config in names]
                cell = _class_cell(rows)
                counts[engine][cell.split(":", 1)[0]] += 1
            cells.append(cell.replace("|", "/"))
        source = "—" if config is None else ("default: " if not config.real else "") + f"`{config.name}`"
        source += "".join(f", `{v}`" for v in variants.get(name, ()) if config is not None)
        lines.append(f"| {name} | {_kvtop_column(kind, config)} | {source} | {cells[0]} | {cells[1]} |")
    return lines, counts


HEAD = """# Fidelity of the engines' registries: every class, and every real config at hand

Generated by `python benchmarks/engine_diff/registry_render.py` from the registry sweep's engine figures in
`tests/data/engine_diff/registry/` (`benchmarks/engine_diff/registry_sweep.py`: each engine's own model class
built on the meta device from the config, one forked process per case, KV auto, sm90 (a class vLLM builds on
Blackwell only on sm100, one it builds on one attention backend only with that `--attention-backend`:
registry_sweep.CLASS_GPUS, BACKEND_FLAGS), context 32,768 or the model's positions); kvtop's side is recomputed,
and `tests/test_fidelity_registry.py` fails when this file no longer matches the kvtop it runs with. Do not edit by hand.

Compared per layout (TP 1 and TP 2, each rank 0): the language model's parameter bytes per rank (kvtop's tower
row against the engine's towers where kvtop's book holds one); vLLM's KV cache spec of each layer (kind, layers,
bytes per layer per token; a Mamba layer's state bytes per request); SGLang's cell (KV bytes per token of the
rank). A difference names the first one in bytes, and the reading of docs/fidelity.md (A…) where one applies.
A speculative draft's config (an Eagle-3 head) that the engine builds as a class is judged as a draft: the class's
parameter bytes and cell against kvtop's draft weights and draft KV per token, planned beside the draft's target
(`--speculative-algorithm EAGLE3 --draft-model`, registry_configs.DRAFT_TARGETS); where the engine refuses it as a
served model, kvtop's refusal of it as a served model agrees.
Outcomes: equal; equal (language model); tower not modelled (the language model equal, but the engine's build
holds towers that kvtop's book does not and its plan names "not modelled": the plan's weights per rank are short by
them, so not counted equal); equal (language model and tower row); a tower part not modelled (both equal,
kvtop's tower row against the engine's tower bytes, but kvtop's plan names a part of the tower "not modelled" that
neither side holds: compared on neither side, so not counted equal); different (a tower kvtop neither holds nor
names is one); kvtop refuses (its reason);
engine refuses (kvtop plans a launch the engine refuses); both refuse (agreement); engine could not build (the
harness could not run its class: error, one line).
The kvtop column: entry (an entry of kvtop's lists the class: its reading is the one checked here); wrapper (its
language model is read through its text section by an entry, its towers by tower data); not_modelled (refused, or a
part named "not modelled", with the reason); generic (no entry lists the class; "generic: read as <entry> by <field>"
where the plan reads the judged config through that entry). An operator's plan of a generic class says which reading
it got: where its model_type or its text section's names an entry, "class … has no architecture
entry of its own: read as <entry> by its <field>; not checked against the engines' model code" (plan --json:
`unchecked_class`); else "generic reading: no architecture entry for '…'; assumed …" where its fields are a standard
decoder's, or a refusal naming the field that stops it. An "equal" for a generic class holds for the config it was
built from, not for the class.
"""


def render() -> str:
    results = judged()
    out = [HEAD]
    out.append("## The held-out measure: every real config at hand\n")
    out.append("Every real `config.json` under `tests/data` (deduplicated by content), at TP 1 and TP 2. A config "
               "is equal where every layout the engine built is (or both refuse it); the share is over the configs "
               "the engine built (less those both refuse), checkpoints' own files only: a reconstructed config "
               "(rebuilt from a checkpoint's published figures, `*.RECONSTRUCTED.json` or `recon--*`) is judged "
               "and listed, not counted in the share.\n")  # fmt: skip
    tables = {}
    for engine in SWEPT:
        outcomes, line = held_out(results[engine])
        tables[engine] = outcomes
        out.append(f"- **{engine} {VERSIONS[engine]}** ({len(outcomes)} configs): {line}")
    out.append("")
    lines, counts = class_table(results)
    out.append("## Every class of the registries\n")
    for engine in SWEPT:
        total = sum(counts[engine].values())
        parts = ", ".join(f"{n} {k}" for k, n in sorted(counts[engine].items(), key=lambda kv: -kv[1]))
        out.append(f"- **{engine} {VERSIONS[engine]}** ({total} classes): {parts}")
    out += ["", *lines, ""]
    out.append("## Real configs that are not equal (or equal only through a harness reading)\n")
    out += ["| config | engine | outcome |", "|---|---|---|"]
    for engine in SWEPT:
        for config, (outcome, detail) in tables[engine].items():
            if outcome != EQUAL or detail:
                text = outcome if not detail else f"{outcome}: {one_line(detail, 200)}"
                out.append(f"| `{config}` | {engine} | {text.replace('|', '/')} |")
    out.append("")
    return relative_paths("\n".join(out))  # a committed file names no path of the machine that made it


def main() -> int:
    DOC.write_text(render())
    print(f"wrote {DOC.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

