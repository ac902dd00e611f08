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


def _same(word: str) -> str:
    return word


def accepted_methods(eras: Eras[tuple[str, ...]], version_text: str | None) -> tuple[tuple[str, ...], str | None]:
    """The methods the stated release accepts and where that list comes from; unstated (None, or no release
    kvtop can read), every era's methods in order and no source."""
    if version_text is not None and parse_release(version_text) is not None:
        era = eras.era(ResolvedVersion(text=version_text))
        return era.value, era.source
    return tuple(dict.fromkeys(method for era in eras for method in era.value)), None


def check_method(method: str | None, eras: Eras[tuple[str, ...]], version_text: str | None, *, flag: str,
                 fold: Callable[[str], str] = _same) -> None:  # fmt: skip
    """Raise an InputError naming `flag` when `method` is not one the release accepts (`fold`: how the engine
    compares spellings; exact unless it says otherwise)."""
    if method is None:
        return
    accepted, source = accepted_methods(eras, version_text)
    if fold(method) in {fold(name) for name in accepted}:
        return
    where = (f"release {version_text}: {source}" if source is not None
             else "no release kvtop read takes it; --engine-version gives one release's list")  # fmt: skip
    if not accepted:
        raise InputError(f"this release has no speculative decoding (got {method[:40]!r}; {where})", field=flag)
    raise InputError(f"must be one of {', '.join(accepted)} (got {method[:40]!r}; {where})", field=flag)
