"""The widening a plan takes where its launch falls outside what its engine's corpus covers as a whole.

A term's held-out error is measured by leaving one source out: a thread, a repository at one release. Its siblings
stay, so the error measures interpolation: the GPU model, the release and the kind of model are nearly always held
by another source. A launch on a GPU model no record of the engine ran (a B300, its CUDA total assumed), at a
release newer than any record's, or of an architecture class no record had (MLA with MoE, a vision-language model)
extrapolates, and blind plans of such launches missed their intervals more often (#27: 108 of 123 held-out starts
held, the misses mostly of these three kinds). `benchmarks/calibration/groups.py` measures it: each GPU model, each
architecture class left out of the corpus whole, each release band judged by the records of older bands alone, and
every left-out record planned blind with fits and an interval scale that never saw its group. The extra half-width
its interval needed to hold the log's figure (as independent errors add, beside the terms' errors together), as a
share of the plan's figure, is the group's miss; the 90th percentile of them (each source as one) per engine and
kind of group is the fraction committed here (`Extrapolation`, each engine's calibration module's `EXTRAPOLATION`,
written by `benchmarks/calibration/run.py --write`). A plan inside every group the corpus covers takes no widening.
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict

from kvtop.domain.engines.versions import Release, ResolvedVersion
from kvtop.domain.gpus import gpu_model_key
from kvtop.domain.model import ModelSpec
from kvtop.domain.wording import with_article


def architecture_class(model: ModelSpec | None) -> str:
    """The kind of model a plan's terms are fitted across, in words: what its attention keeps and whether experts or
    an encoder run beside it. '' where no model was read."""
    if model is None:
        return ""
    if model.state is not None:
        return "state-space hybrid"
    if model.mla is not None or model.compressed is not None:
        return "MLA with MoE" if model.moe is not None else "MLA"
    if model.multimodal or model.vision is not None or model.tower is not None:
        return "vision-language with MoE" if model.moe is not None else "vision-language"
    return "MoE" if model.moe is not None else "dense"


def release_band(release: Release | None, depth: int) -> tuple[int, ...] | None:
    """The release's band: its first `depth` numbers ((0, 11) for vLLM 0.11.2 at depth 2); None: no release stated."""
    return tuple(release[:depth]) if release is not None else None


def band_words(band: tuple[int, ...]) -> str:
    return ".".join(str(part) for part in band)


class Extrapolation(BaseModel):
    """What one engine's corpus covers (the GPU models, the newest release band, the architecture classes of its
    records) and the share of a plan's figure its interval widens by outside each (`groups.py`'s measure)."""

    model_config = ConfigDict(frozen=True)

    engine: str
    gpus: tuple[str, ...]  # gpu_model_key of its records' GPUs
    band_depth: int  # how many numbers of a release make its band (2: 0.11; 3: 0.5.9)
    newest_band: tuple[int, ...] | None  # the newest band a record ran (None: no release stated)
    classes: tuple[str, ...]  # `architecture_class` of its records' models
    gpu_fraction: float  # the extra half-width, as a share of the plan's figure, a GPU model left out needed
    version_fraction: float  # the same where every record of the band and newer was left out
    class_fraction: float  # the same where an architecture class was left out
    records: int  # the left-out plans it was measured on (every kind together)
    sources: int

    def widening(self, model: ModelSpec | None, gpu_name: str | None, version: ResolvedVersion, *,
                 gpu_terms_open: bool = True) -> ExtrapolationWidening | None:  # fmt: skip
        """Where a plan of this launch lies outside the corpus, why and by how much; None: inside every group. A GPU
        model no record ran widens nothing where what the GPU decides is measured (`gpu_terms_open` False: CUDA's
        total, the context and the runtime measured, only the weights book's error left)."""
        found: list[tuple[str, float]] = []
        gpu = gpu_model_key(gpu_name) if gpu_name else ""
        if gpu and gpu not in self.gpus and gpu_terms_open:
            found.append((f"no record on {with_article(gpu)}", self.gpu_fraction))
        band = release_band(version.release, self.band_depth)
        if band is not None and self.newest_band is not None and band > self.newest_band:
            found.append((f"no record at {band_words(band)} (newest {band_words(self.newest_band)})",
                          self.version_fraction))  # fmt: skip
        kind = architecture_class(model)
        if kind and kind not in self.classes:
            found.append((f"no record of {with_article(kind)} model", self.class_fraction))
        if not found:
            return None
        return ExtrapolationWidening(reasons=tuple(why for why, _ in found), fraction=max(share for _, share in found),
                                     records=self.records, sources=self.sources)  # fmt: skip


class ExtrapolationWidening(BaseModel):
    """A plan's widening for lying outside its engine's corpus: why (each group it is outside), and the share of its
    figure the interval widens by (the largest of those groups' measured shares: the groups overlap)."""

    model_config = ConfigDict(frozen=True)

    reasons: tuple[str, ...]
    fraction: float
    records: int
    sources: int

    @property
    def words(self) -> str:
        """'no record on a B300; interval widened by ± 6.1 %', as the plan's `outside the corpus:` words say it; where
        the corpus's blind plans held with such a group left out, that it takes no widening (said, not silent)."""
        if self.fraction <= 0:
            them = "them" if len(self.reasons) > 1 else "it"
            return (f"{'; '.join(self.reasons)}; the interval is not widened for {them}: plans held when such records "
                    f"were left out")  # fmt: skip
        return f"{'; '.join(self.reasons)}; interval widened by ± {self.fraction * 100:.1f} %"

    @property
    def basis(self) -> str:
        return (f"calibrated: the 90th percentile of the extra half-width blind plans needed where their GPU model, "
                f"release band or architecture class was left out of the corpus ({self.records} plans, "
                f"{self.sources} sources; benchmarks/calibration/groups.py)")  # fmt: skip

    def bytes_for(self, central_bytes: int) -> int:
        """The half-width it adds at a plan's figure of `central_bytes` (a KV budget)."""
        return round(self.fraction * max(central_bytes, 0))

    @staticmethod
    def widen(central: int, end: int, extra: int, *, upward: bool) -> int:
        """One end of an interval around `central` with `extra` added as an independent error (the root of squares)."""
        half = math.hypot(abs(end - central), extra)
        return round(central + half) if upward else max(round(central - half), 0)
