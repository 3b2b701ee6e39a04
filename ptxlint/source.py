"""Source text and positions: 1-based line/column spans over one file."""
from __future__ import annotations

import bisect
import re
from functools import cached_property
from typing import NamedTuple

_NEWLINE = re.compile("\n")


class Span(NamedTuple):
    """A region of a source file; lines and columns are 1-based, offsets 0-based.
    (A named tuple: one is made per instruction, and tuples are cheap to make.)"""

    start: int
    end: int
    line: int
    col: int
    end_line: int
    end_col: int

    def __str__(self) -> str:  # type: ignore[override]
        return f"{self.line}:{self.col}"


class SourceFile:
    """The text of one PTX (or CUDA) file and the offset -> line/col mapping."""

    def __init__(self, path: str, text: str):
        self.path = path
        self.text = text

    @cached_property
    def line_starts(self) -> list[int]:
        return [0, *(m.end() for m in _NEWLINE.finditer(self.text))]

    def position(self, offset: int) -> tuple[int, int]:
        """(line, col), both 1-based, of a 0-based offset."""
        index = bisect.bisect_right(self.line_starts, offset) - 1
        return index + 1, offset - self.line_starts[index] + 1

    def span(self, start: int, end: int) -> Span:
        line, col = self.position(start)
        end_line, end_col = self.position(max(start, end))
        return Span(start, end, line, col, end_line, end_col)

    def line_text(self, line: int) -> str:
        """The text of a 1-based line without its newline ('' past the end)."""
        starts = self.line_starts
        if not 1 <= line <= len(starts):
            return ""
        begin = starts[line - 1]
        stop = starts[line] - 1 if line < len(starts) else len(self.text)
        return self.text[begin:stop].rstrip("\r")
