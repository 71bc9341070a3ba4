"""The layout is a contract: the import-linter layers (pyproject.toml, run by `make test` as
`lint-imports`), no import cycle between any two modules, and every app saying what it owns
and what it may import."""

import importlib
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

from devserver import layers

ROOT = Path(__file__).resolve().parents[1]
APPS = [
    "config",
    "accounts",
    "handler_groups",
    "notifications",
    "queueing",
    "ticketing",
    "sla",
    "routing",
    "demo",
    "workflow",
    "insight",
    "console",
]


def _graph():
    return grimp.build_graph(*APPS, cache_dir=None, exclude_type_checking_imports=True)


def _cycles(graph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    modules = sorted(m for m in graph.modules if ".migrations" not in m)
    edges = {m: sorted(graph.find_modules_directly_imported_by(m) & set(modules)) for m in modules}
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = 0
    for start in modules:
        if start in index:
            continue
        work = [(start, iter(edges[start]))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(edges[child])))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
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
    return found


def test_the_layers_contract_holds():
    result = subprocess.run(
        [str(Path(sys.executable).with_name("lint-imports")), "--no-cache"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout


def test_every_module_is_in_a_layer():
    assert layers.unlayered(*layers.contract()) == []


def test_a_module_in_no_layer_is_found():
    roots, entries = layers.contract()
    assert "workflow.services" in layers.modules(roots)
    assert layers.unlayered(roots, [e for e in entries if e != "workflow"]) == [
        m for m in layers.modules(roots) if m == "workflow" or m.startswith("workflow.")
    ]


def test_no_import_cycle_between_modules():
    assert _cycles(_graph()) == []


def test_the_cycle_finder_finds_a_cycle():
    class Graph:
        modules = {"a", "b", "c", "d"}

        def find_modules_directly_imported_by(self, module):
            return {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}[module]

    assert _cycles(Graph()) == [["a", "b", "c"]]


@pytest.mark.parametrize("app", [a for a in APPS if a != "config"])
def test_every_app_says_what_it_owns_and_what_it_may_import(app):
    doc = importlib.import_module(app).__doc__ or ""
    assert "May import" in doc, f"{app}/__init__.py needs a docstring naming its imports"


def test_handler_groups_and_notifications_import_nothing_above_them():
    graph = _graph()
    for low in ("handler_groups", "notifications"):
        for high in ("ticketing", "sla", "routing", "console"):
            assert not graph.chain_exists(importer=low, imported=high, as_packages=True), (
                low,
                high,
            )
