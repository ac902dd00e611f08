"""Fit kvtop's pre-load terms on the corpus, judge every record blind, and write docs/calibration.md.

    python benchmarks/calibration/run.py            # print the summary, check the committed fits and doc
    python benchmarks/calibration/run.py --write    # rewrite the fitted constants and docs/calibration.md

The fitted constants live in each engine's package (`kvtop/domain/engines/<engine>/calibration.py`
FITS and INTERVAL_SCALE), the CUDA totals in `kvtop/domain/calibration/gpu_totals.py` and the weights book's error in
`kvtop/domain/calibration/weights.py`, the assumed context's error in `kvtop/domain/calibration/features.py`, one
process's CUDA context (engine-neutral) in `kvtop/domain/calibration/cuda_context.py`, the most a desktop sharing
the card held beyond Linux in `kvtop/domain/calibration/host_memory.py` (benchmarks/calibration/desktop.py),
each between `# BEGIN FITTED` and `# END FITTED`.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benchmarks.calibration.corpus import load_all  # noqa: E402
from benchmarks.calibration.groups import extrapolations, groups_section  # noqa: E402
from benchmarks.calibration.judgement import Judgement, engine_scale, judge_corpus  # noqa: E402
from benchmarks.calibration.report import render  # noqa: E402
from kvtop.domain.calibration.coverage import IntervalScale  # noqa: E402
from kvtop.domain.calibration.extrapolation import Extrapolation  # noqa: E402
from kvtop.domain.calibration.features import ASSUMED_CONTEXT_ERROR_KEY  # noqa: E402
from kvtop.domain.calibration.linear import LinearTerm  # noqa: E402
from kvtop.domain.calibration.plan_fits import (  # noqa: E402
    desktop_given_back_bytes,
    desktop_held_bytes,
    desktop_profile_bytes,
)
from kvtop.domain.calibration.unified_start import UNIFIED_START_KEY  # noqa: E402
from kvtop.domain.calibration.weights import BUILT_ERROR_KEY, LOADED_ERROR_KEY  # noqa: E402
from kvtop.domain.wording import MIB  # noqa: E402

DOC = ROOT / "docs" / "calibration.md"
DOMAIN = ROOT / "kvtop" / "domain"
BLOCK = re.compile(r"(# BEGIN FITTED[^\n]*\n).*?(\n# END FITTED)", re.S)


def _literal(fits: dict[str, LinearTerm], name: str, shared_error: str | None = None) -> str:
    """The fits as the dict `name`; with `shared_error`, the error most of them share (each GPU model's CUDA total:
    the one pooled error, `evaluate.cuda_total_fits`) is written once, as that constant, and named where a fit's
    error (or its novel error) is it, not repeated as a figure."""
    lines = [f"{name}: dict[str, LinearTerm] = {{"]
    shared = Counter(fit.error_bytes for fit in fits.values()).most_common(1)[0][0] if shared_error and fits else None
    if shared_error and shared is not None:
        lines.insert(0, f"{shared_error} = {shared}  # the error the fits below share (named where theirs is it)")

    def error(value: int) -> str:
        return shared_error if shared_error and value == shared else str(value)

    for key in sorted(fits):
        fit = fits[key]
        lines.append(f"    {key!r}: LinearTerm(")
        lines.append(f"        key={key!r}, features={fit.features!r},")
        lines.append(f"        coefficients={fit.coefficients!r}, error_bytes={error(fit.error_bytes)}, "
                     f"records={fit.records},")  # fmt: skip
        lines.append(f"        sources={fit.sources}, gpus={fit.gpus!r},")
        unseen = f", unseen_error_bytes={fit.unseen_error_bytes}" if fit.unseen_error_bytes else ""
        lines.append(f"        novel_error_bytes={error(fit.novel_error_bytes)}, "
                     f"feature_sources={fit.feature_sources!r}{unseen},")  # fmt: skip
        if fit.group_errors:
            lines.append(f"        group_errors={fit.group_errors!r},")
        if fit.span_bytes is not None:
            lines.append(f"        span_bytes={fit.span_bytes!r},")
        lines.append("    ),")
    lines.append("}  # fmt: skip")
    return "\n".join(lines)


def _scale_literal(scale: IntervalScale | None) -> str:
    if scale is None:
        return "INTERVAL_SCALE: IntervalScale | None = None"
    return (f"INTERVAL_SCALE: IntervalScale | None = IntervalScale(\n    engine={scale.engine!r}, factor={scale.factor!r}, "
            f"records={scale.records}, sources={scale.sources},{' weights_logged=True,' if scale.weights_logged else ''}\n)")


def _extrapolation_literal(found: Extrapolation | None) -> str:
    if found is None:
        return "EXTRAPOLATION: Extrapolation | None = None"
    fields = ", ".join(f"{name}={value!r}" for name, value in found.model_dump().items())
    return f"EXTRAPOLATION: Extrapolation | None = Extrapolation(\n    {fields},\n)  # fmt: skip"


def fitted_blocks(judgement: Judgement) -> dict[Path, str]:
    """Each file's fitted block, as --write would write it: the fits on every record, and each engine's interval
    scale from the plans' coverage scores (the larger of the blind and logged-weights ones), and what its corpus covers
    with the widening outside it (groups.py's leave-one-group-out)."""
    fits, scores = judgement.fits, judgement.scores
    blocks: dict[Path, str] = {}
    outside = extrapolations(judgement.corpus, list(judgement.groups))
    for engine in judgement.corpus:
        scale = engine_scale(engine, scores)
        mine = {key: fit for key, fit in fits.items() if key.startswith(f"{engine}.")}
        blocks[DOMAIN / "engines" / engine / "calibration.py"] = (
            f"{_literal(mine, 'FITS')}\n{_scale_literal(scale)}\n{_extrapolation_literal(outside.get(engine))}"
        )
    totals = {key: fit for key, fit in fits.items() if key.startswith("cuda_total.")}
    blocks[DOMAIN / "calibration" / "gpu_totals.py"] = _literal(totals, "CUDA_TOTAL_FITS", "CUDA_TOTAL_ERROR_BYTES")
    contexts = {key: fit for key, fit in fits.items() if key.startswith("cuda_context.")}
    blocks[DOMAIN / "calibration" / "cuda_context.py"] = _literal(contexts, "CUDA_CONTEXT_FITS")
    assumed = fits[ASSUMED_CONTEXT_ERROR_KEY]
    blocks[DOMAIN / "calibration" / "features.py"] = (
        f"ASSUMED_CONTEXT_ERROR_GIB = {assumed.coefficients[0]!r}\nASSUMED_CONTEXT_RECORDS = {assumed.records}\n"
        f"ASSUMED_CONTEXT_SOURCES = {assumed.sources}"
    )
    loaded, built = fits[LOADED_ERROR_KEY], fits[BUILT_ERROR_KEY]
    blocks[DOMAIN / "calibration" / "weights.py"] = (
        f"WEIGHTS_RELATIVE_ERROR = {loaded.coefficients[0]!r}\nWEIGHTS_RECORDS = {loaded.records}\n"
        f"BUILT_WEIGHTS_RELATIVE_ERROR = {built.coefficients[0]!r}\n"
        f"BUILT_WEIGHTS_RECORDS = {built.records}"
    )
    desktop, span = desktop_held_bytes(fits), desktop_profile_bytes(fits)  # as the judgement's folds fit theirs
    back = desktop_given_back_bytes(fits)
    blocks[DOMAIN / "calibration" / "host_memory.py"] = (f"DESKTOP_HELD_BYTES = {desktop}  # {desktop // MIB} MiB\n"
                                                         f"DESKTOP_PROFILE_BYTES = {span}  # {span // MIB} MiB\n"
                                                         f"DESKTOP_GIVEN_BACK_BYTES = {back}  # {back // MIB} MiB")
    blocks[DOMAIN / "calibration" / "unified_start.py"] = _unified_literal(fits.get(UNIFIED_START_KEY))
    return blocks


def _unified_literal(fit: LinearTerm | None) -> str:
    """unified_start.py's committed block: the span of what unified-memory starts left beyond their plans (0s: none
    measured)."""
    half, records = (fit.error_bytes, fit.records) if fit is not None else (0, 0)
    return f"UNIFIED_START_ERROR_BYTES = {half}  # {half // MIB} MiB\nUNIFIED_START_RECORDS = {records}"


def render_doc(judgement: Judgement) -> str:
    """docs/calibration.md as the corpus gives it: the fits, the blind plans (each with fits and an interval scale
    that left its source out) and the scores the scales come from."""
    j = judgement
    doc = render(j.corpus, j.fits, j.logged, j.blind, j.scores)
    head, corpus_heading, rest = doc.partition("## The corpus")
    return f"{head}{groups_section(j.corpus, list(j.groups))}\n{corpus_heading}{rest}"


def stale(blocks: dict[Path, str]) -> list[Path]:
    """Files whose committed block differs from the fit's."""
    out = []
    for path, block in blocks.items():
        found = BLOCK.search(path.read_text())
        if found is None or path.read_text()[found.end(1) : found.start(2)] != block:
            out.append(path)
    return out


def write(blocks: dict[Path, str]) -> None:
    for path, block in blocks.items():
        text = path.read_text()
        path.write_text(BLOCK.sub(lambda m, block=block: m.group(1) + block + m.group(2), text, count=1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help="rewrite the fitted constants and docs/calibration.md")
    args = parser.parse_args()
    judgement = judge_corpus(load_all())
    blocks = fitted_blocks(judgement)
    if args.write:
        write(blocks)
    doc = render_doc(judgement)
    if args.write:
        DOC.write_text(doc)
    print(doc.split("## The corpus")[0])
    problems = [f"{path.relative_to(ROOT)} holds fits the corpus does not give" for path in stale(blocks)]
    if DOC.read_text() != doc:
        problems.append("docs/calibration.md is not what the corpus gives")
    for problem in problems:
        print(f"STALE: {problem} (run with --write)")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
