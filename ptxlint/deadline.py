"""One kernel's time budget (`--time-budget`): a `Deadline` made when the kernel's lint
starts and handed to every phase that works on it (the control-flow graph's loops, the
fixpoint and its divergence regions, the rules, their re-analyses), each of which calls
`check()` in its loops that grow with the kernel. Past the budget `check()` raises
`DeadlineExceeded`, naming the phase it interrupted, and the lint reports what it has
(`lint.lint_entry`, `analysis.incomplete`).

Checking reads the clock (`time.perf_counter`, tens of nanoseconds); a loop whose
iterations are cheaper than that calls `tick()`, which reads it every 64th time.
"""
from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import contextmanager


class DeadlineExceeded(Exception):
    """The budget ran out in `phase` ("fixpoint > divergence regions")."""

    def __init__(self, phase: str, budget: float | None):
        super().__init__(f"time budget of {budget:g} s exceeded in {phase}"
                         if budget is not None else f"stopped in {phase}")
        self.phase = phase
        self.budget = budget


class Deadline:
    """`budget` seconds from now (None: never). `phase(name)` names what runs inside it,
    nested phases read outermost first."""

    __slots__ = ("budget", "end", "_phases", "_ticks")

    def __init__(self, budget: float | None = None):
        self.budget = budget
        self.end = math.inf if budget is None else time.perf_counter() + budget
        self._phases: list[str] = []
        self._ticks = 0

    @property
    def current(self) -> str:
        return " > ".join(self._phases) or "the analysis"

    def expired(self) -> bool:
        return time.perf_counter() > self.end

    def remaining(self) -> float:
        """Seconds left (inf without a budget): a time limit for work that cannot check,
        such as an emulated run (`emulate.run_kernel(time_limit=...)`)."""
        return max(0.0, self.end - time.perf_counter())

    def check(self) -> None:
        if time.perf_counter() > self.end:
            raise DeadlineExceeded(self.current, self.budget)

    def tick(self) -> None:
        """`check()` every 64th call: for loops whose steps cost less than the clock."""
        self._ticks += 1
        if not self._ticks & 63:
            self.check()

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        self._phases.append(name)
        try:
            self.check()
            yield
        finally:
            self._phases.pop()
