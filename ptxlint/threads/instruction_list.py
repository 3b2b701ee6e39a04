"""A kernel's instructions, listed once per lint of the kernel for every rule and
analysis that walks them all: `Function.instructions` builds a new list at each call,
and a dozen rules each asked for it."""
from __future__ import annotations

from ..ir.instruction import Instruction


def instructions(facts) -> list[Instruction]:
    """`facts.function.instructions`, shared: read it, never change it."""
    return facts.derived("instructions", _listed)


def _listed(facts) -> list[Instruction]:
    return facts.function.instructions


__all__ = ["instructions"]
