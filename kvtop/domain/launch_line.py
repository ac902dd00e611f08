"""A whole launch command read into `LaunchSettings`: which engine's server it starts (its entry point), its flags
(`launch.parse_flags`), the environment it sets and the container image it runs (the release its tag names)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kvtop.domain.engines.catalogue import ENGINE_IDS, EngineId
from kvtop.domain.engines.versions import LATEST
from kvtop.domain.launch import LaunchSettings, engine_flags, parse_flags, release_names
from kvtop.domain.launch_tokens import container_image, env_assignments, split_command


def detect_engine(argv: Sequence[str]) -> tuple[EngineId, int, str | None] | None:
    """Find an engine's server launch in argv: (engine, index after the entry point, model)."""
    for engine in ENGINE_IDS:
        found = engine_flags(engine).find_launch(argv)
        if found is not None:
            return engine, found[0], found[1]
    return None


def parse_launch_command(argv: Sequence[str] | str) -> LaunchSettings | None:
    """Parse a whole launch command (a string or argv); None if it launches no engine kvtop models."""
    tokens = split_command(argv) if isinstance(argv, str) else list(argv)
    found = detect_engine(tokens)
    if found is None:
        return None
    engine, start, model = found
    rest = tokens[start:]
    if model is not None:
        rest = rest[1:]
    settings = parse_flags(engine, rest, model=model, engine_line=True)
    return with_image(with_environment(settings, env_assignments(tokens[:start])), container_image(tokens[:start]))


def with_environment(settings: LaunchSettings, env: Mapping[str, str]) -> LaunchSettings:
    """The settings with the environment the launch set (`VLLM_MXFP4_USE_MARLIN=1`), as the engine's rules read it:
    only the names its rules read are kept (in `flags`, by name); the rest may be secrets and are dropped."""
    read = {name: value for name, value in env.items() if name in engine_flags(settings.engine).env_read}
    return settings.model_copy(update={"flags": {**read, **settings.flags}}) if read else settings


def with_image(settings: LaunchSettings, image: str | None) -> LaunchSettings:
    """The settings with the image the launch runs, and the release its tag names (an image of the engine's own
    `release_images`, tagged with a release the engine names: 'v0.11.0' -> '0.11.0') where no version is set."""
    imaged = settings.model_copy(update={"image": image}) if image else settings
    release = imaged.image_release
    named = release is not None and release.lower() != LATEST and release_names(settings.engine).names_one(release)
    return imaged.model_copy(update={"engine_version": release}) if named and settings.engine_version is None else imaged
