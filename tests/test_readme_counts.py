"""The counts README.md's prose quotes are the generated documents' and the code's, not a copy that rots: the
registry sweep's (docs/fidelity_registry.md's first lines), the multimodal classes' (docs/multimodal.md's count line)
and the unified-memory host's assumed share (calibration/host_memory.py, as docs/calibration.md says it)."""

from __future__ import annotations

import re
from pathlib import Path

from kvtop.domain.calibration.host_memory import (
    HOST_AVAILABLE_SHARE,
    HOST_AVAILABLE_SHARE_ERROR,
    HOST_HELD_SHARE,
    HOST_HELD_SHARE_ERROR,
)

REPO = Path(__file__).resolve().parents[1]


def _flat(path: Path) -> str:
    """The file's text with its line wrapping undone (README wraps its prose at 120 columns)."""
    return re.sub(r"\s+", " ", path.read_text(encoding="utf-8"))


README = _flat(REPO / "README.md")


def test_registry_counts_are_the_sweeps() -> None:
    doc = (REPO / "docs" / "fidelity_registry.md").read_text(encoding="utf-8")
    classes = {engine: (release, total, equal, not_modelled) for engine, release, total, equal, not_modelled in
               re.findall(r"\*\*(\w+) ([\d.]+)\*\* \((\d+) classes\): (\d+) equal, (\d+) not modelled", doc)}  # fmt: skip
    configs = {engine: (equal, built) for engine, equal, built in
               re.findall(r"\*\*(\w+) [\d.]+\*\* \(\d+ configs\): (\d+) of (\d+) equal", doc)}  # fmt: skip
    assert set(classes) == set(configs) == {"vllm", "sglang"}
    v, s = classes["vllm"], classes["sglang"]
    assert (
        f"of vLLM {v[0]}'s {v[1]} classes {v[2]} equal and {v[3]} not modelled ({_other(doc, 'vllm')}); of SGLang "
        f"{s[0]}'s {s[1]}, {s[2]} equal and {s[3]} not modelled ({_other(doc, 'sglang')}; each class by name in "
        f"its table); of every real config at hand, {configs['vllm'][0]} of {configs['vllm'][1]} equal under vLLM "
        f"and {configs['sglang'][0]} of {configs['sglang'][1]} under SGLang"
    ) in README


#: the registry's outcome as README's prose words it (the rest as the registry does)
_README_OUTCOME = {"equal (language model and tower row); a tower part not modelled": "equal but for a tower part "
                   "neither side holds"}  # fmt: skip


def _other(doc: str, engine: str) -> str:
    """The classes neither equal nor not modelled, counted by outcome as the registry's count line gives them:
    'the other 13: 9 both refuse, …' (the counts must add up to the class total)."""
    line = re.search(
        rf"^- \*\*{engine} [\d.]+\*\* \((\d+) classes\): \d+ equal, \d+ not modelled, (.+)$", doc, re.M
    )
    assert line is not None
    outcomes = re.findall(r"(\d+) ([^,]+)(?:, |$)", line.group(2))
    head = re.search(rf"\*\*{engine} [\d.]+\*\* \(\d+ classes\): (\d+) equal, (\d+) not modelled", doc)
    assert head is not None
    other = sum(int(n) for n, _ in outcomes)
    assert other + int(head.group(1)) + int(head.group(2)) == int(line.group(1))
    return f"the other {other}: " + ", ".join(
        f"{n} {_README_OUTCOME.get(what, what)}" for n, what in outcomes
    )


def test_multimodal_counts_are_the_generated_lists() -> None:
    doc = (REPO / "docs" / "multimodal.md").read_text(encoding="utf-8")
    count_line = r"^(\d+) classes: (\d+) not modelled, (\d+) tower not modelled, (\d+) tower planned\.$"
    found = re.search(count_line, doc, re.M)
    assert found is not None
    total, refused, tower_not, planned = found.groups()
    assert (
        f"lists the {total} multimodal classes: {planned} towers planned, {tower_not} named not modelled beside a "
        f"planned language model, {refused} not modelled"
    ) in README


def test_unified_host_share_is_the_codes() -> None:
    said = f"{HOST_HELD_SHARE * 100:.2f} % of the total ± {HOST_HELD_SHARE_ERROR * 100:.2f} %"
    assert said in README
    calibration = _flat(REPO / "docs" / "calibration.md")
    assert f"{HOST_HELD_SHARE * 100:.2f} % ± {HOST_HELD_SHARE_ERROR * 100:.2f} %" in calibration
    assert f"{HOST_AVAILABLE_SHARE * 100:.2f} % ± {HOST_AVAILABLE_SHARE_ERROR * 100:.2f} %" in calibration
