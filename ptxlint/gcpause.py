"""`collector_paused()`: no cyclic garbage collection inside, the one pause every phase
uses (parsing, the analysis, a whole lint, a CLI run).

Parsing and the fixpoint allocate hundreds of thousands of small acyclic objects while
the parsed module (a large, long-lived object graph) sits in memory: the collector
would rescan that graph, and the domains' interning tables, again and again (a quarter
of the parse time, a sixth of the CUB corpus's lint time). Nested pauses are free; the
garbage cycles a phase leaves (a few thousand objects per kernel) wait for the first
collection after the outermost pause.
"""
from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


__all__ = ["collector_paused"]
