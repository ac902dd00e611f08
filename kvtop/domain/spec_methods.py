"""Refuse a speculative method the engine's release does not accept, naming the flag and the accepted values.

Each engine's package keeps the methods each of its releases accepts as `Eras` (read from its code, with the
source); this module only checks a value against them. With a release stated (`--engine-version`) the check
is that release's list; with none, the union of every era kvtop read, so a launch of an older release is never
refused for a method it had.
"""

from __future__ import annotations

from collections.abc import Callable

from kvtop.domain.engines.versions import Eras, ResolvedVersion, parse_release
from kvtop.domain.errors import InputError
from kvtop.domain.redact import quoted


def _same(word: str) -> str:
    return word


def accepted_methods(eras: Eras[tuple[str, ...]], version_text: str | None) -> tuple[tuple[str, ...], str | None]:
    """The methods the stated release accepts and where that list comes from; unstated (None, or no release
    kvtop can read), every era's methods in order and no source."""
    if version_text is not None and parse_release(version_text) is not None:
        era = eras.era(ResolvedVersion(text=version_text))
        return era.value, era.source
    return tuple(dict.fromkeys(method for era in eras for method in era.value)), None


#: the fewest `*_word` names that the refusal writes as one group beside the bare word ('mtp and 27 *_mtp')
GROUPED_FROM = 3


def compact(names: tuple[str, ...]) -> str:
    """The accepted names on one line: where a name is also the last `_word` of at least `GROUPED_FROM` others
    (vLLM's `mtp` and its 27 `<model>_mtp` at v0.33.0, which SpeculativeConfig runs as "mtp"), that family is one
    group at its first member's place; the rest as they are (LMDeploy's `deepseek_mtp`, with no bare `mtp`)."""
    members = {name: sum(1 for each in names if each.endswith("_" + name)) for name in names}
    families = {name for name, count in members.items() if count >= GROUPED_FROM}
    words: list[str] = []
    for name in names:
        family = next((word for word in families if name == word or name.endswith("_" + word)), None)
        word = name if family is None else f"{family} and {members[family]} *_{family}"
        if word not in words:
            words.append(word)
    return ", ".join(words)


def check_method(method: str | None, eras: Eras[tuple[str, ...]], version_text: str | None, *, flag: str,
                 fold: Callable[[str], str] = _same) -> None:  # fmt: skip
    """Raise an InputError naming `flag` when `method` is not one the release accepts (`fold`: how the engine
    compares spellings; exact unless it says otherwise)."""
    if method is None:
        return
    accepted, source = accepted_methods(eras, version_text)
    if fold(method) in {fold(name) for name in accepted}:
        return
    # the release's source as the error's `source`: `kvtop plan` prints it after the words, the planner leaves it out
    # (plan_errors.field_error), so its line is the field, the names, the method typed and the release
    got = f"got {quoted(method)}; " + (f"release {version_text}" if source is not None else "no release kvtop read takes it")
    if not accepted:
        raise InputError(f"this release has no speculative decoding ({got})", field=flag, source=source)
    raise InputError(f"must be one of {compact(accepted)} ({got})", field=flag, source=source)
