"""The data shipped inside the package: model presets, demo scenarios and palettes.

They live at the top of the repository (`examples/models`, `examples/scenarios`, `themes/`), where
a person finds and edits them. `kvtop/_bundled/examples` and `kvtop/_bundled/themes` are symbolic
links to those folders, so the same files are package data in every way kvtop runs: from a
checkout (`PYTHONPATH=.`), from an editable install, and from a wheel (setuptools copies the files
the links reach; pyproject's package-data `_bundled/**/*`). They are read through
`importlib.resources`, imported only when a command first needs one of them.
"""

from __future__ import annotations

from pathlib import Path


def bundled_dir(*parts: str) -> Path:
    """The shipped folder `parts` (e.g. 'examples', 'scenarios'), with links resolved.

    kvtop is installed as plain files (pip never installs it zipped), so the resource is a
    real directory; resolving the links makes messages name `examples/…` in a checkout.
    """
    from importlib.resources import files

    folder = files("kvtop") / "_bundled"
    for part in parts:
        folder = folder / part
    return Path(str(folder)).resolve()
