"""The shortest refresh kvtop allows, for `--interval` and the config file's `interval_s` alike.

Stdlib only: the CLI's argument types read it, and `kvtop --help` loads no pydantic (tests/test_cli_startup.py).
"""

from __future__ import annotations

#: Each refresh reads NVML and every engine's endpoints, and the TUI's reader waits only this long between
#: reads, so an interval of 0.0001 s polled the engines' HTTP servers back to back (nvtop's and htop's
#: shortest delay is a tenth of a second too).
MIN_REFRESH_SECONDS = 0.1
#: Why a shorter one is refused, as both the CLI and the config file's reader say it.
REFRESH_FLOOR = f"must be at least {MIN_REFRESH_SECONDS:g} s: every refresh reads NVML and each engine's endpoints"


def below_refresh_floor(seconds: float) -> bool:
    """Whether a refresh interval is refused: shorter than the floor, or not a number (NaN compares false)."""
    return not seconds >= MIN_REFRESH_SECONDS
