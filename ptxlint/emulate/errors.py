"""The one exception of the emulator: an instruction or launch it cannot run."""
from __future__ import annotations

from ..source import Span


class EmulationError(Exception):
    """Raised for an opcode, operand form or launch the emulator does not support (or a
    run past its steps, time or memory: `limits.LimitExceeded`). Never raised for a
    defect of the kernel itself: those are recorded as events in the observations."""

    def __init__(self, message: str, span: Span | None = None):
        super().__init__(message)
        self.message = message
        self.span = span

    def __str__(self) -> str:
        if self.span is None:
            return self.message
        return f"{self.span.line}:{self.span.col}: {self.message}"


def unsupported(what: str, span: Span | None) -> EmulationError:
    return EmulationError(f"'{what}' is not supported by the emulator", span)
