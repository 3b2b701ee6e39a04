"""One table: opcode -> instruction class. Opcodes may be dotted (`cp.async`,
`mbarrier.arrive`); a full opcode resolves by its longest registered prefix."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .instruction import Instruction

REGISTRY: dict[str, type["Instruction"]] = {}
_resolved: dict[str, tuple[type["Instruction"], str, tuple[str, ...]] | None] = {}
_checked: dict[str, tuple | str] = {}


def register(opcode: str, cls: type["Instruction"]) -> None:
    if opcode in REGISTRY and REGISTRY[opcode] is not cls:
        raise ValueError(f"opcode {opcode!r} registered twice "
                         f"({REGISTRY[opcode].__name__}, {cls.__name__})")
    REGISTRY[opcode] = cls
    _resolved.clear()
    _checked.clear()


def resolve(full_opcode: str) -> tuple[type["Instruction"], str, tuple[str, ...]] | None:
    """`ld.global.v4.f32` -> (Ld, "ld", ("global", "v4", "f32")); None if unknown."""
    hit = _resolved.get(full_opcode, False)
    if hit is not False:
        return hit
    _load_instruction_modules()
    parts = full_opcode.split(".")
    found = None
    for k in range(len(parts), 0, -1):
        cls = REGISTRY.get(".".join(parts[:k]))
        if cls is not None:
            found = (cls, ".".join(parts[:k]), tuple(parts[k:]))
            break
    _resolved[full_opcode] = found
    return found


_loaded = False


def _load_instruction_modules() -> None:
    """Import every module of `ir/instructions` once so their classes register."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    import importlib
    import pkgutil

    from . import instructions

    for info in pkgutil.iter_modules(instructions.__path__):
        importlib.import_module(f"{instructions.__name__}.{info.name}")


def check_opcode(full_opcode: str) -> tuple | str:
    """`resolve`, plus the modifier check: the triple, or the message saying why
    the opcode is not valid PTX. Cached: a module repeats its opcodes a lot."""
    hit = _checked.get(full_opcode)
    if hit is None:
        found = resolve(full_opcode)
        if found is None:
            hit = f"unknown instruction '{full_opcode}'"
        else:
            cls, opcode, mods = found
            allowed = cls.allowed_mods
            bad = [m for m in mods if allowed is not None and m not in allowed]
            hit = f"'{opcode}' does not take the modifier '.{bad[0]}'" if bad else \
                cls.modifier_problem(opcode, mods) or found
        _checked[full_opcode] = hit
    return hit


def all_opcodes() -> list[str]:
    _load_instruction_modules()
    return sorted(REGISTRY)
