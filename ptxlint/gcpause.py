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
from collections.abc import Callable, Iterator

# Kernels' instructions linted between two sweeps (`kernel_sweeps`): each leaves about
# 7 KB of reference cycles, so some 100 MB wait for a sweep at most, and a sweep costs
# about 10 us an instruction (0.15 s for 15,000)
SWEEP_AFTER_INSTRUCTIONS = 15_000


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@contextlib.contextmanager
def kernel_sweeps() -> Iterator[Callable[[int, int], None]]:
    """Inside a pause, over a module's kernels: `sweep(n, left)` after each kernel of `n`
    instructions collects once SWEEP_AFTER_INSTRUCTIONS of them were linted since the
    last sweep, unless the kernels `left` to lint have fewer than half as many (the
    memory would not grow much more: the CUB corpus, 18,400, is not swept). A kernel's
    analysis leaves reference cycles (the rule context and the facts, the analyses
    built on them): paused for a whole 1M-line module, they held 2.8 GB. What lives when the sweeps start (the parsed module), and what survives
    each sweep, is frozen (`gc.freeze`), so a sweep scans only what the kernels since
    the last one made; everything is unfrozen on the way out. Nothing is swept when the
    collector runs (it collects on its own) or when something else froze objects."""
    active = not gc.isenabled() and gc.get_freeze_count() == 0
    pending = 0

    def sweep(instructions: int, left: int) -> None:
        nonlocal pending
        pending += instructions
        if active and pending >= SWEEP_AFTER_INSTRUCTIONS \
                and 2 * left >= SWEEP_AFTER_INSTRUCTIONS:
            gc.collect()
            gc.freeze()
            pending = 0

    if active:
        gc.freeze()
    try:
        yield sweep
    finally:
        if active:
            gc.unfreeze()


__all__ = ["collector_paused", "kernel_sweeps", "SWEEP_AFTER_INSTRUCTIONS"]
