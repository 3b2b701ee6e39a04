"""The package's layers: data flows one way (docs/analysis.md, "Layers").

Every import of every module under `ptxlint/` (read with `ast`, imports inside functions
and under `TYPE_CHECKING` included) must go to a module of a lower layer, or stay in its
own group. On top of that: a rule reads facts, so `ptxlint/rules/` imports nothing of
`interp/` but `interp.facts`, never `analysis` or `emulate` (it asks lint's services,
`RuleContext.reanalyze` and `RuleContext.replay`); a rule module imports no other rule
module, only the shared helper modules; the transfer functions are the fixpoint's own;
and the pricing kernels use ptxlint only through its public API. A failure names the
file and line of each offending import.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "ptxlint"

# (group, rank, module prefixes): a module belongs to the group of its longest matching
# prefix and may import modules of a lower rank, or of its own group. Groups of equal
# rank are beside each other: neither imports the other (interp / emulate,
# threads / analysis, hook / lsp).
LAYERS: list[tuple[str, int, tuple[str, ...]]] = [
    # small utility modules: plain values and helpers every layer may use
    ("base", 0, ("ptxlint", "ptxlint.source", "ptxlint.diagnostics", "ptxlint.deadline",
                 "ptxlint.arch", "ptxlint.demangle", "ptxlint.debuginfo", "ptxlint.suppress",
                 "ptxlint.grouping", "ptxlint.gcpause", "ptxlint.workers")),
    ("parse", 1, ("ptxlint.parse",)),
    ("ir", 2, ("ptxlint.ir",)),
    ("cfg", 3, ("ptxlint.cfg",)),
    ("domains", 4, ("ptxlint.domains",)),
    ("launch", 5, ("ptxlint.launch",)),  # LaunchConfig -> the initial abstract state
    ("interp", 6, ("ptxlint.interp",)),  # the fixpoint, with interp/transfer/
    ("emulate", 6, ("ptxlint.emulate",)),  # the concrete interpreter, beside it
    ("threads", 7, ("ptxlint.threads",)),  # per-thread questions on the final facts
    ("analysis", 7, ("ptxlint.analysis",)),  # the one door into interp/, for lint
    ("rules", 8, ("ptxlint.rules",)),
    # one lint() and its services (re-analysis, `replay`), launches, the incremental linter
    ("lint", 9, ("ptxlint.lint", "ptxlint.launches", "ptxlint.replay", "ptxlint.incremental")),
    ("report", 10, ("ptxlint.report",)),
    ("config", 11, ("ptxlint.config",)),  # settings files -> LintOptions, for front ends
    ("hook", 12, ("ptxlint.hook",)),
    ("lsp", 12, ("ptxlint.lsp",)),
    ("cli", 13, ("ptxlint.cli",)),  # `ptxlint lsp` starts the language server
    ("main", 14, ("ptxlint.__main__",)),
]
# what a rule may import of the layers below besides the ranks: facts, not the fixpoint
# or the analysis that runs it, nor the emulator (lint's services run those)
RULES_FORBIDDEN = ("ptxlint.interp", "ptxlint.analysis", "ptxlint.emulate")
RULES_ALLOWED_INTERP = ("ptxlint.interp.facts",)
# the transfer functions serve the fixpoint only
TRANSFER = "ptxlint.interp.transfer"
# the pricing kernels' door into ptxlint
PUBLIC_API = ("ptxlint", "ptxlint.hook", "ptxlint.emulate", "ptxlint.emulate.api",
              "ptxlint.report")
# development trees the package never imports
OUTSIDE = ("differential", "tests", "benchmarks", "pricing_kernels")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _exists(module: str) -> bool:
    p = ROOT.joinpath(*module.split("."))
    return p.with_suffix(".py").is_file() or (p / "__init__.py").is_file()


def imports(path: Path, name: str | None = None) -> list[tuple[str, int]]:
    """(module imported, line) for every import in the file, functions included; a
    `from pkg import sub` of a submodule counts as importing the submodule. `name`: the
    module the file is read as (by default its place in the tree)."""
    name = name or module_name(path)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for a in node.names:
                sub = f"{target}.{a.name}"
                out.append((sub if _exists(sub) else target, node.lineno))
    return out


def within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def layer_of(module: str) -> tuple[str, int] | None:
    best = None
    for group, rank, prefixes in LAYERS:
        for p in prefixes:
            if (p == "ptxlint" and module == "ptxlint") or (p != "ptxlint" and within(module, p)):
                if best is None or len(p) > best[0]:
                    best = (len(p), group, rank)
    return None if best is None else best[1:]


def is_rule_module(path: Path) -> bool:
    """A module that registers a rule (`class X(Rule, id=...)`); the others under
    rules/ are shared helpers (base, sites, wording, memory_sites...)."""
    tree = ast.parse(path.read_text())
    return any(isinstance(n, ast.ClassDef) and any(k.arg == "id" for k in n.keywords)
               for n in tree.body)


def package_files() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def where(path: Path, line: int) -> str:
    return f"{path.relative_to(ROOT)}:{line}"


def test_every_module_has_a_layer():
    missing = [str(p.relative_to(ROOT)) for p in package_files()
               if layer_of(module_name(p)) is None]
    assert not missing, f"give these modules a layer in tests/test_layers.py: {missing}"


def test_imports_go_down():
    bad = []
    for path in package_files():
        src = module_name(path)
        mine = layer_of(src)
        if mine is None:
            continue
        for target, line in imports(path):
            if any(within(target, o) for o in OUTSIDE):
                bad.append(f"{where(path, line)}: imports {target} (outside the package)")
                continue
            if not within(target, "ptxlint"):
                continue
            theirs = layer_of(target)
            if theirs is None or theirs[0] == mine[0]:
                continue
            if theirs[1] >= mine[1]:
                bad.append(f"{where(path, line)}: {src} ({mine[0]}) imports {target} "
                           f"({theirs[0]}): {mine[0]} may import only lower layers")
    assert not bad, "imports against the layers:\n" + "\n".join(bad)


def test_rules_read_facts():
    bad = []
    for path in sorted((PACKAGE / "rules").glob("*.py")):
        for target, line in imports(path):
            if any(within(target, f) for f in RULES_FORBIDDEN) and \
                    not any(within(target, a) for a in RULES_ALLOWED_INTERP):
                bad.append(f"{where(path, line)}: imports {target}: a rule reads `Facts` "
                           "(ptxlint.interp.facts) and asks lint's services "
                           "(rc.reanalyze, rc.replay)")
    assert not bad, "\n".join(bad)


def test_no_rule_imports_another_rule():
    rules = {module_name(p) for p in (PACKAGE / "rules").glob("*.py") if is_rule_module(p)}
    bad = []
    for path in sorted((PACKAGE / "rules").glob("*.py")):
        for target, line in imports(path):
            if target in rules and target != module_name(path):
                bad.append(f"{where(path, line)}: imports the rule module {target}: move "
                           "what it shares to a helper module under rules/")
    assert not bad, "\n".join(bad)


def test_transfer_functions_serve_the_fixpoint_only():
    bad = []
    for path in package_files():
        src = module_name(path)
        if within(src, "ptxlint.interp"):
            continue
        for target, line in imports(path):
            if within(target, TRANSFER):
                bad.append(f"{where(path, line)}: imports {target} (interp/transfer/ is the "
                           "fixpoint's own)")
    assert not bad, "\n".join(bad)


def test_pricing_kernels_use_the_public_api():
    bad = []
    for path in sorted((ROOT / "pricing_kernels").rglob("*.py")):
        for target, line in imports(path):
            if within(target, "ptxlint") and not (
                    target in PUBLIC_API or within(target, "ptxlint.report")):
                bad.append(f"{where(path, line)}: imports {target}; the public API is "
                           f"{', '.join(PUBLIC_API)} and ptxlint.report.*")
    assert not bad, "\n".join(bad)


def test_the_walk_finds_imports_inside_functions(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("from .base import RuleContext\n\n\n"
                     "def f():\n    from ..analysis import analyze\n")
    found = imports(probe, "ptxlint.rules.probe")
    assert found == [("ptxlint.rules.base", 1), ("ptxlint.analysis", 5)]
    assert layer_of("ptxlint.analysis") == ("analysis", 7)
