"""A launch command as tokens: the text split into argv, argv into positionals and (flag, value) pairs, one
raw value made the type its field takes. Lexical only: which field a flag sets, and whether its value is one
the engine accepts, is `launch.py`'s (`parse_flags`); this module knows no engine and no field.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping, Sequence

from kvtop.domain.errors import InputError

MAX_COMMAND_CHARS = 64 * 1024  # a launch command longer than this is not a launch command
# The words a switch's value is false by (any case): argparse's bool readers and the engines' env switches
FALSE_WORDS = frozenset({"0", "false", "no", "off"})


def false_word(text: str) -> bool:
    """Whether `text` is one of `FALSE_WORDS` (as typed: no space stripped)."""
    return text.lower() in FALSE_WORDS


def switch_in(flags: Mapping[str, object], spelling: str) -> tuple[bool, str] | None:
    """A switch argparse spells with and without `no-` (BooleanOptionalAction), read from a launch's flags: False
    with `--no-spelling` or `--spelling` at a false word (`FALSE_WORDS`, as `LLM(x=False)` writes it), True with
    `--spelling` otherwise, each with the flag that gave it; None where neither (the engine's default). The one
    reading `span.flag_switch` and the tower switch (load_casts.py) share."""
    if flags.get(f"no-{spelling}") not in (None, False):
        return False, f"--no-{spelling}"
    stated = flags.get(spelling)
    if stated is None:
        return None
    return stated is True or not false_word(str(stated)), f"--{spelling}"


def positional_model(rest: Sequence[str]) -> str | None:
    """The model named right after `… serve`, if the next token is not a flag."""
    if rest and not rest[0].startswith("-"):
        return rest[0]
    return None


def split_command(command: str) -> list[str]:
    """A launch command as argv: backslash continuations joined; an unclosed quote or an absurd length
    is an InputError naming --cmd, never a traceback (and never minutes in `shlex`)."""
    if len(command) > MAX_COMMAND_CHARS:
        raise InputError(
            f"a launch command of {len(command):,} characters (at most {MAX_COMMAND_CHARS:,})", field="--cmd"
        )
    joined = command.replace("\\\r\n", " ").replace("\\\n", " ")
    try:
        return shlex.split(joined)
    except ValueError as err:
        raise InputError(f"cannot read the command ({err})", field="--cmd") from None


_ENV_ASSIGNMENT = re.compile(r"([A-Z_][A-Z0-9_]{0,80})=(.{0,400})", re.DOTALL)


def env_assignments(tokens: Sequence[str]) -> dict[str, str]:
    """`NAME=VALUE` tokens before a command (`VLLM_MXFP4_USE_MARLIN=1 vllm serve …`, `env NAME=VALUE …`): the
    environment the launch line sets, upper-case names only (a flag never is one)."""
    found = (_ENV_ASSIGNMENT.fullmatch(token) for token in tokens)
    return {match.group(1): match.group(2) for match in found if match is not None}


CONTAINER_RUNTIMES = frozenset({"docker", "podman", "nerdctl"})
# `[registry/]namespace/name[:tag][@digest]`: a path-like word with a "/", not a host path ("/data:/data" starts with
# "/", "./x" with "."), as `docker run` takes its image
_IMAGE = re.compile(r"[a-z0-9][a-z0-9._-]*(?::[0-9]+)?(?:/[a-z0-9._-]+)+(?::[A-Za-z0-9_][A-Za-z0-9._-]{0,127})?(?:@sha256:[0-9a-f]{64})?")


def container_image(before: Sequence[str]) -> str | None:
    """The image a container runtime runs (`docker run … IMAGE` before the engine's entry point): the last
    image-shaped word before the entry point, where the line runs docker, podman or nerdctl; None otherwise. A
    volume (`-v hf:/root/.cache`) is before the image, so the last such word is the image."""
    if not any(token.rsplit("/", 1)[-1] in CONTAINER_RUNTIMES for token in before):
        return None
    return next((token for token in reversed(before) if not token.startswith("-") and _IMAGE.fullmatch(token)), None)


def image_repository_and_tag(image: str) -> tuple[str, str | None]:
    """An image reference split as `docker run` reads it, `[registry[:port]/]repository[:tag][@digest]`: (the name
    before the tag, registry included; the tag, or None where only a digest or nothing names it). The one parser of
    an image's tag: 'vllm/vllm-openai:v0.11.0' -> ('vllm/vllm-openai', 'v0.11.0'); 'host:5000/x' -> ('host:5000/x',
    None), a registry's port is no tag."""
    name = image.split("@", 1)[0]
    repository, colon, tag = name.rpartition(":")
    return (repository, tag) if colon and "/" not in tag else (name, None)


def image_of(image: str, repositories: frozenset[str]) -> bool:
    """Whether `image` is one of `repositories` from any registry (`docker.io/vllm/vllm-openai` is
    `vllm/vllm-openai`), whatever its tag or digest."""
    repository = image_repository_and_tag(image)[0]
    return any(repository == known or repository.endswith("/" + known) for known in repositories)


def image_release(image: str, repositories: frozenset[str]) -> str | None:
    """The tag of `image`, less a leading 'v', where its repository (less a registry) is one of `repositories`:
    ('vllm/vllm-openai:v0.11.0', {'vllm/vllm-openai'}) -> '0.11.0'; None for another repository, a digest alone or no
    tag (whether the engine names such a release is launch.py's to ask)."""
    tag = image_repository_and_tag(image)[1]
    if tag is None or not image_of(image, repositories):
        return None
    return tag[1:] if tag[:1] in "vV" else tag


def split_tokens(
    tokens: Sequence[str], takes_list: Callable[[str], bool] | None = None
) -> tuple[list[int], list[tuple[str, str | bool]]]:
    """Split argv into positionals (their positions in `tokens`: a word may also be a flag's value elsewhere) and
    (flag, value) pairs; a flag without a value is True. A flag `takes_list` names (argparse's nargs="+") takes
    every value up to the next flag, joined by spaces."""
    positionals: list[int] = []
    pairs: list[tuple[str, str | bool]] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token.startswith("-") and len(token) > 1 and not is_number(token):
            if "=" in token:
                name, value = token.split("=", 1)
                pairs.append((name, value))
            elif index + 1 < len(tokens) and not (
                tokens[index + 1].startswith("-") and not is_number(tokens[index + 1])
            ):
                values = [tokens[index + 1]]
                index += 1
                while (takes_list is not None and takes_list(token) and index + 1 < len(tokens)
                       and not (tokens[index + 1].startswith("-") and not is_number(tokens[index + 1]))):
                    values.append(tokens[index + 1])
                    index += 1
                pairs.append((token, " ".join(values)))
            else:
                pairs.append((token, True))
        else:
            positionals.append(index)
        index += 1
    return positionals, pairs


def is_number(token: str) -> bool:
    """Whether a token that starts with "-" is a number (`-1`), so a value and not a flag."""
    if len(token) > 40:
        return False
    try:
        float(token)
    except ValueError:
        return False
    return True


def typed_value(kind: type, raw: str | bool, spelling: str) -> object:
    """`raw` as `kind` (a bare flag is True), or an InputError naming the flag as typed. A count the engine reads
    otherwise (vLLM's '32K') or kvtop's own written size ('20GiB') is read before this (`launch.parse_flags`)."""
    if kind is bool:
        if isinstance(raw, bool):
            return raw
        return not false_word(raw)
    if isinstance(raw, bool):
        raise InputError("needs a value", field=spelling)
    if kind is str:
        return raw
    text = raw.strip()
    if len(text) > 40:
        raise InputError(f"expected a number, got {len(text):,} characters", field=spelling)
    try:
        return int(text) if kind is int else float(text)
    except ValueError:
        raise InputError(
            f"expected {'a whole number' if kind is int else 'a number'}, got {raw!r}", field=spelling
        ) from None
