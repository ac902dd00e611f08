"""Which model classes an engine registers, by release: a launch of a class it has no code for is refused.

An engine loads a model by the class name in config.json's `architectures`: vLLM from its registry
(vllm/model_executor/models/registry.py), SGLang from each model file's `EntryClass`, LMDeploy's PyTorch
engine from its `MODULE_MAP`. A class it does not register goes to its Transformers backend where it has one
(vLLM, SGLang: only where the installed transformers has the class and it is backend-compatible), else the
engine stops before it sizes anything. kvtop can size such a model (it reads the config), so without this
check it would plan a launch the engine refuses.

Each engine package states its lists (`kvtop/domain/engines/<engine>/architectures.py`) as `RegistryRange`s:
the releases a list was read at (both ends read), the classes, and where it was read. A release no range
covers is "not checked" (nothing is guessed between two reads); a plan that names no release takes the newest
range and says so. docs/engines/architectures.md says how the lists were read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol

from pydantic import BaseModel, ConfigDict

from kvtop.domain.engines.versions import ResolvedVersion, parse_release

if TYPE_CHECKING:
    from kvtop.domain.launch import LaunchSettings
    from kvtop.domain.model import ModelSpec
    from kvtop.domain.tower_spec import TowerSplit

ArchitectureState = Literal["registered", "transformers_backend", "custom_code", "refused", "not_checked"]
"""registered: the engine has its own class; transformers_backend: served by its Transformers backend (kvtop
sizes the engine's own layout: said, not checked); custom_code: the config's `auto_map` names remote code
that the engine may load (not checked); refused: the engine stops at start; not_checked: no list kvtop read
covers the release."""


def names(text: str) -> frozenset[str]:
    """The class names of a whitespace-separated block (the lists are long: one name per word)."""
    return frozenset(text.split())


@dataclass(frozen=True)
class RegistryRange:
    """The classes an engine registers over releases `first` … `last` (both read, and each between)."""

    first: str
    last: str
    registered: frozenset[str]
    source: str  # where the list was read (file, release)
    # classes it does not register that its Transformers backend takes (transformers' own class, backend-
    # compatible), with the transformers release its wheel installs; empty where it has no such fallback
    transformers_backend: frozenset[str] = frozenset()
    # classes transformers has but refuses as not backend-compatible (where the engine words them apart)
    transformers_incompatible: frozenset[str] = frozenset()
    transformers: str = ""
    dropped: Mapping[str, str] = field(default_factory=dict)  # class → the engine's word on its removal
    # classes it serves only through remote code (`auto_map`) whose published modeling class its Transformers
    # backend refuses, → which published file says so (the engine words the refusal)
    remote_code_refused: Mapping[str, str] = field(default_factory=dict)

    def covers(self, version: ResolvedVersion) -> bool:
        release, first, last = version.release, parse_release(self.first), parse_release(self.last)
        return release is not None and first is not None and last is not None and first <= release <= last


class ArchitectureCheck(BaseModel):
    """What an engine release does with a model's class, and the engine's own words where it refuses."""

    model_config = ConfigDict(frozen=True)

    state: ArchitectureState
    architecture: str
    message: str  # one line: what the engine does, at which release
    source: str  # the engine code (and release) the list was read from
    engine_words: str = ""  # a refusal's error as the engine words it (its start: a list may follow)

    @property
    def refused(self) -> bool:
        return self.state == "refused"


# The engine's own error for an unregistered class (its words, unquoted), given the class and the range read.
Wording = Callable[[str, RegistryRange], str]


@dataclass(frozen=True)
class RegistryTable:
    """One engine's lists by release, and how it words a refusal (`wording`)."""

    engine_name: str
    ranges: tuple[RegistryRange, ...]  # in release order
    wording: Wording
    not_read: str = ""  # why no list was read (an engine with no ranges)

    def range_for(self, version: ResolvedVersion) -> RegistryRange | None:
        """The range covering `version`; a release nobody stated takes the newest range."""
        if not self.ranges:
            return None
        if version.release is None:
            return self.ranges[-1]
        return next((found for found in self.ranges if found.covers(version)), None)

    def check_class(
        self, architecture: str, version: ResolvedVersion, *, custom_code: bool
    ) -> ArchitectureCheck:
        """The engine release's verdict on `architecture` (config.json's `architectures[0]`)."""
        found = self.range_for(version)
        name = self.engine_name
        if not architecture[:1].isupper():  # no `architectures` in config.json: its model_type stands in
            return ArchitectureCheck(state="not_checked", architecture=architecture, source="",
                                     message=f"config.json names no architecture class: whether {name} serves it "
                                     "is not checked")  # fmt: skip
        if found is None:
            read = ", ".join(
                f"{r.first}" if r.first == r.last else f"{r.first}–{r.last}" for r in self.ranges
            )
            if len(self.ranges) > 3:  # read at every release of a span (LMDeploy's tags)
                read = f"each release {self.ranges[0].first}–{self.ranges[-1].last}"
            why = f"kvtop read its registry at {read} only" if read else self.not_read
            return ArchitectureCheck(state="not_checked", architecture=architecture, source="",
                                     message=f"whether {name} {version.label} registers {architecture} is not "
                                     f"checked: {why}")  # fmt: skip
        at = (
            version.label
            if version.release is not None
            else f"{found.last} (no release stated: the newest read)"
        )
        if architecture in found.registered:
            return ArchitectureCheck(state="registered", architecture=architecture, source=found.source,
                                     message=f"{name} {at} registers {architecture}")  # fmt: skip
        if architecture in found.transformers_backend:
            return ArchitectureCheck(
                state="transformers_backend", architecture=architecture, source=found.source,
                message=f"{name} {at} has no class of its own for {architecture}: it serves it through its "
                f"Transformers backend (transformers {found.transformers}); kvtop sizes it as its own class would",
            )  # fmt: skip
        # A class transformers has is judged by transformers' own class, whatever `auto_map` names: SGLang's
        # resolve_transformers_arch reads `getattr(transformers, arch)` first and turns to the auto_map's
        # AutoModel only where transformers has none (0.5.6.post2, 0.5.23), so remote code does not rescue a
        # class transformers has but refuses (tiiuae/falcon-7b-instruct's FalconForCausalLM).
        if (
            custom_code
            and architecture not in found.dropped
            and architecture not in found.remote_code_refused
            and architecture not in found.transformers_incompatible
        ):
            return ArchitectureCheck(
                state="custom_code", architecture=architecture, source=found.source,
                message=f"{name} {at} registers no {architecture}; the config's auto_map names remote code, which "
                "it may load with --trust-remote-code (not checked)",
            )  # fmt: skip
        words = self.wording(architecture, found)
        with_transformers = (
            f" (with transformers {found.transformers}, as its wheel installs)" if found.transformers else ""
        )
        remote = found.remote_code_refused.get(architecture, "") if custom_code else ""
        why = f"; the config's auto_map remote code does not rescue it: {remote}" if remote else ""
        return ArchitectureCheck(state="refused", architecture=architecture, source=found.source, engine_words=words,
                                 message=f"{name} {at} has no model class for {architecture}: {words!r}"
                                 f"{with_transformers}{why}")  # fmt: skip


class EngineArchitectures(Protocol):
    """An engine's verdict on a launch's model class (each package's `architectures` module), and how its own
    tower code shards a vision tower's parts engines disagree on (`TOWER_SPLIT`, read by the weights book)."""

    TOWER_SPLIT: TowerSplit

    def check(
        self, model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion
    ) -> ArchitectureCheck: ...
