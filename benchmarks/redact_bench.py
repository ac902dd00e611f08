"""Redaction time on adversarial arguments of 256 KiB, 512 KiB and 1 MiB: linear input, linear time.

Each shape is built to defeat a backtracking pattern or a rescanning loop (a run of '-a', one long
word before an '@', thousands of secret flags, unclosed escaped quotes, nested brackets under a
secret key). The time should double when the input doubles. Reported, not asserted.
Run: python benchmarks/redact_bench.py [path/to/another/redact.py]   (the argument compares an older module)
"""

from __future__ import annotations

import importlib.util
import sys
import time
from collections.abc import Callable
from types import ModuleType

KIB = 1 << 10
SHAPES: dict[str, Callable[[int], str]] = {
    "dashes (-a-a-a…)": lambda n: "-a" * (n // 2),
    "one long word, then user:pass@": lambda n: "a" * n + " x:y@z",
    "secret flags without values": lambda n: "--api-key " * (n // 10),
    "secret flag pairs": lambda n: "--api-key v " * (n // 12),
    "unclosed escaped quotes": lambda n: '{"api_key": "' + '\\"' * (n // 2),
    "query pairs (token=token=…)": lambda n: "token=" * (n // 6),
    "at signs": lambda n: "@" * n,
    "user-info pairs (a:b@a:b@…)": lambda n: "a:b@" * (n // 4),
    "open brackets under a secret key": lambda n: '{"auth": ' + "[" * n,
    "words with user-info": lambda n: "u:p@h " * (n // 6),
    "quoted keys ('token': '…)": lambda n: "'token': '" * (n // 10),
}


def load(path: str | None) -> ModuleType:
    if path is None:
        from kvtop.domain import redact

        return redact
    spec = importlib.util.spec_from_file_location("other_redact", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    module = load(sys.argv[1] if len(sys.argv) > 1 else None)
    sizes = (256 * KIB, 512 * KIB, 1024 * KIB)
    print(f"{'shape':<36}" + "".join(f"{f'{size // KIB} KiB':>12}" for size in sizes))
    for name, build in SHAPES.items():
        cells = []
        for size in sizes:
            text = build(size)
            start = time.perf_counter()
            module.redact_argv(["vllm", "serve", text])
            cells.append(f"{(time.perf_counter() - start) * 1000:>9.0f} ms")
        print(f"{name:<36}" + "".join(cells), flush=True)


if __name__ == "__main__":
    main()
