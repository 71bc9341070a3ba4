"""`make check`: every module of the layered packages is in a layer of the import contract.

import-linter checks the imports between the layers pyproject.toml lists, and says nothing of a
module that no layer names: a new module beside them would escape the contract unseen. This
lists every module of the contract's root packages (migrations aside: they are frozen history)
and fails, naming each, for any that is neither under a layer's entry nor a package that only
holds layered modules.

    python -m devserver.layers
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def contract() -> tuple[list[str], list[str]]:
    """The contract's root packages and every entry of its layers."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (layers,) = [c for c in config["contracts"] if c["id"] == "layers"]
    entries = []
    for layer in layers["layers"]:
        for part in layer.replace("|", ":").split(":"):
            entries.append(part.strip())
    return config["root_packages"], entries


def modules(root_packages: list[str]) -> list[str]:
    """Every module (dotted name) of the root packages, migrations aside."""
    found = []
    for package in root_packages:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if "migrations" in parts:
                continue
            if parts[-1] == "__init__":
                parts.pop()
            found.append(".".join(parts))
    return found


def unlayered(root_packages: list[str], entries: list[str]) -> list[str]:
    """Modules under no entry; a package counts as layered when an entry is inside it."""

    def under(module: str, entry: str) -> bool:
        return module == entry or module.startswith(entry + ".")

    return [
        module
        for module in modules(root_packages)
        if not any(under(module, e) for e in entries) and not any(under(e, module) for e in entries)
    ]


def main() -> int:
    missing = unlayered(*contract())
    for module in missing:
        print(f"{module}: in no layer of pyproject.toml's import contract", file=sys.stderr)
    if missing:
        return 1
    print(f"layers: every module is in a layer ({len(modules(contract()[0]))} modules)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
