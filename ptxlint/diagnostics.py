"""Diagnostics: plain frozen values produced by the parser and the rules."""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from .demangle import demangle
from .source import Span


class Severity(enum.IntEnum):
    NOTE = 0
    WARNING = 1
    ERROR = 2

    def __str__(self) -> str:
        return self.name.lower()


class Certainty(enum.Enum):
    DEFINITE = "definite"  # holds for every execution the abstract state covers
    POSSIBLE = "possible"  # holds for some execution the state covers

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class CudaLocation:
    """Where a PTX line came from, per its `.loc` directive."""

    file: str
    line: int
    column: int = 0


@dataclass(frozen=True, slots=True)
class Related:
    """A secondary location in the same file: the other instruction of a pair (the
    other access of a race), with what happens there."""

    span: Span
    label: str

    @property
    def line(self) -> int:
        return self.span.line


@dataclass(frozen=True)
class Diagnostic:
    rule: str
    severity: Severity
    message: str
    file: str
    span: Span | None
    kernel: str | None = None
    certainty: Certainty = Certainty.DEFINITE
    label: str | None = None
    notes: tuple[str, ...] = ()
    help: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    cuda: CudaLocation | None = None
    related: tuple[Related, ...] = ()
    # When findings of one rule, one kind of message and one CUDA line were made one
    # (`grouping.group`): every finding of the group as it was made, this one's own
    # first; empty for a finding that stands alone.
    instances: tuple[Diagnostic, ...] = ()

    @property
    def line(self) -> int:
        return self.span.line if self.span else 0

    @property
    def column(self) -> int:
        return self.span.col if self.span else 0

    @property
    def count(self) -> int:
        """How many instructions the finding is about (1 unless grouped)."""
        return len(self.instances) or 1

    def expanded(self) -> tuple[Diagnostic, ...]:
        """The findings this diagnostic stands for, each as the rule made it."""
        return self.instances or (self,)

    def sort_key(self) -> tuple:
        return (self.file, self.line, self.column, self.rule, self.message)

    def to_json(self) -> dict[str, Any]:
        """The stable JSON shape (docs/json-format.md)."""
        span = self.span
        return {
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "end_line": span.end_line if span else 0,
            "end_column": span.end_col if span else 0,
            "severity": str(self.severity),
            "certainty": str(self.certainty),
            "rule": self.rule,
            "kernel": self.kernel,
            "kernel_demangled": demangle(self.kernel) if self.kernel else None,
            "message": self.message,
            "cuda_file": self.cuda.file if self.cuda else None,
            "cuda_line": self.cuda.line if self.cuda else None,
            "details": dict(self.details),
            "count": self.count,
        }
