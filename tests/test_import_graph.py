"""kvtop's import graph has no circle, and no shared module names an engine package.

The graph is grimp's (the library import-linter uses): module-level and function-level imports count, and
the last test counts `if TYPE_CHECKING:` imports too. Built without grimp's cache, which is keyed by
modification time (a `git stash` round trip within one second served stale imports). A circle is listed as
a path through its modules, so the failure says which import to move. The plugin seam is the registries':
shared code reaches an engine package only by its id, through `kvtop.domain.engines.catalogue`/`registry`
and `kvtop.sources.engines.registry`.
"""

from __future__ import annotations

import grimp
import pytest

from kvtop.domain.engines.catalogue import ENGINE_IDS

ENGINE_PACKAGES = ("kvtop.domain.engines", "kvtop.sources.engines")


def _circles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            if i < len(edges[node]):
                work.append((node, i + 1))
                nxt = edges[node][i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return found


def _cycle_in(graph: grimp.ImportGraph, component: list[str]) -> str:
    """One circle through the component's first module, as 'a -> b -> a'."""
    members = set(component)
    start = component[0]
    path = [start]
    seen = {start}
    while True:
        nxt = sorted(graph.find_modules_directly_imported_by(path[-1]) & members)
        back = [m for m in nxt if m in seen]
        if back:
            loop = path[path.index(back[0]) :] + [back[0]]
            return " -> ".join(loop)
        path.append(nxt[0])
        seen.add(nxt[0])


@pytest.fixture(scope="module")
def runtime_graph() -> grimp.ImportGraph:
    return grimp.build_graph(
        "kvtop", include_external_packages=False, exclude_type_checking_imports=True, cache_dir=None
    )


def test_no_runtime_import_circle(runtime_graph: grimp.ImportGraph) -> None:
    circles = _circles(runtime_graph)
    assert not circles, "import circles (module- or function-level):\n" + "\n".join(
        f"{len(c)} modules: {_cycle_in(runtime_graph, c)}" for c in circles
    )


def _engine_packages(graph: grimp.ImportGraph) -> set[str]:
    """Every engine's packages: the subpackages of `kvtop.domain.engines` and `kvtop.sources.engines` (their
    plain modules — the registries, the catalogue, the protocols, the shared values — are shared code)."""
    return {child for root in ENGINE_PACKAGES for child in graph.find_children(root) if graph.find_children(child)}


def _package_of(module: str, packages: set[str]) -> str | None:
    return next((p for p in packages if module == p or module.startswith(p + ".")), None)


def test_only_an_engine_package_imports_an_engine_package() -> None:
    """Shared code reaches an engine only through a registry, by id: no static import names one.

    An engine package may import its own modules; its `sources` half may import its domain half."""
    full = grimp.build_graph(
        "kvtop", include_external_packages=False, exclude_type_checking_imports=False, cache_dir=None
    )
    packages = _engine_packages(full)
    engines = {p.rsplit(".", 1)[1] for p in packages}
    assert engines == set(ENGINE_IDS) and len(packages) == 2 * len(ENGINE_IDS)  # each engine: domain + sources
    wrong = []
    for module in sorted(full.modules):
        mine = _package_of(module, packages)
        for imported in sorted(full.find_modules_directly_imported_by(module)):
            theirs = _package_of(imported, packages)
            if theirs is None or theirs == mine:
                continue
            if mine is None or mine.rsplit(".", 1)[1] != theirs.rsplit(".", 1)[1]:
                wrong.append(f"{module} -> {imported}")
    assert not wrong, "modules outside an engine's packages import it by name:\n" + "\n".join(wrong)


def test_no_import_circle_through_annotations() -> None:
    """Counting `if TYPE_CHECKING:` imports too, the graph has no circle: every annotation points down (the
    values and the protocols sit below the modules that look an engine up by id)."""
    graph = grimp.build_graph(
        "kvtop", include_external_packages=False, exclude_type_checking_imports=False, cache_dir=None
    )
    circles = _circles(graph)
    assert not circles, "import circles counting TYPE_CHECKING imports:\n" + "\n".join(
        f"{len(c)} modules: {_cycle_in(graph, c)}" for c in circles
    )
