"""Statements and their tokens.

Comments are blanked first (same length, so offsets and columns stay true). Most
lines a compiler emits hold exactly one statement, so a line that ends in its only
`;` (or is a label, or a `.loc`-style line directive) becomes a statement with one
`findall`; anything else goes through a small state machine over tokens that groups
them into statements ending at `;`, a brace, a label's `:`, or the end of the line for
`.version .target .address_size .file .loc`. Braces inside a statement (vector
operands, initialisers) stay in it. `.section` blocks are kept as raw text.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple

# Alternatives are tried in order; which can match depends only on the first character
# (registers before a lone '%', complete strings before unterminated ones, the number
# forms in this order), so the commonest tokens come first: registers, punctuation.
TOKEN_RE = re.compile(r"""
 %[A-Za-z0-9_$]+(?:\.[A-Za-z0-9_]+)?
|<<|>>|&&|\|\||==|!=|<=|>=|[{}()\[\],;:<>=@!|+\-*/%~&^?]
|[A-Za-z_$][A-Za-z0-9_$]*(?:\.[A-Za-z0-9_$]+(?:::[A-Za-z0-9_]+)*)*
|\.[A-Za-z_][A-Za-z0-9_$]*(?:::[A-Za-z0-9_]+)*
|0[fF][0-9A-Fa-f]{8}(?![0-9A-Za-z_])|0[dD][0-9A-Fa-f]{16}(?![0-9A-Za-z_])
|[0-9]+\.[0-9]*(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+
|0[xX][0-9A-Fa-f]+U?|0[bB][01]+U?|[0-9]+U?
|"(?:[^"\\\n]|\\.)*"
|"[^"\n]*
|\S
""", re.VERBOSE)
_COMMENT_RE = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|/\*(?:.|\n)*?(?:\*/|$)|@@DWARF[^\n]*')
_NOT_NEWLINE = re.compile(r"[^\n]")
_LABEL_RE = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*\s*:")
_LABEL_PREFIX_RE = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*\s*:(?!:)")

# Directives that end at the end of their line rather than at a ';'.
LINE_DIRECTIVES = frozenset({".version", ".target", ".address_size", ".file", ".loc"})
_LINE_PREFIXES = tuple(LINE_DIRECTIVES)
HEADER_WORDS = frozenset({".entry", ".func"})
_BLANKS = (" ", "\t")


class Statement(NamedTuple):
    """Tokens that the grammar parses as one unit. `kind` is "stmt", "open"/"close"
    for braces, "label" for `name:`, "section" for a debug section (raw text), "loc"
    for a `.loc` line alone on its line (raw text: a third of what nvcc writes, mostly
    repeats, which the builder looks up before tokenizing).
    `start`/`end` are file offsets, `line`/`col` the 1-based position of `start`."""

    kind: str
    texts: list[str]
    start: int
    end: int
    line: int
    col: int


def blank_comments(text: str) -> str:
    """The text with comments replaced by spaces (newlines kept).

    `_COMMENT_RE.sub` would do, but the regex engine steps through every character
    (7 ms for a 2 MB module); `str.find` jumps to the next character a match can start
    with (`"`, `/`, `@@`), where the same expression is tried, so the matches are the
    ones `sub` would find."""
    if "/" not in text and "@@" not in text:
        return text
    find, match = text.find, _COMMENT_RE.match
    parts: list[str] = []
    kept = 0  # text[:kept] is in parts
    big = len(text) + 1
    # the next '"', '/' and '@@' (big: none)
    quote, slash, ats = (i if i >= 0 else big for i in (find('"'), find("/"), find("@@")))
    while True:
        at = min(quote, slash, ats)
        if at == big:
            break
        m = match(text, at)
        if m is None:
            resume = at + 1
        else:
            s = m.group()
            if s[0] != '"':
                parts.append(text[kept:at])
                parts.append(" " * len(s) if "\n" not in s else _NOT_NEWLINE.sub(" ", s))
                kept = m.end()
            resume = m.end()
        if quote < resume:
            quote = find('"', resume)
            quote = quote if quote >= 0 else big
        if slash < resume:
            slash = find("/", resume)
            slash = slash if slash >= 0 else big
        if ats < resume:
            ats = find("@@", resume)
            ats = ats if ats >= 0 else big
    parts.append(text[kept:])
    return "".join(parts)


def operand_offsets(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """(start, end) file offsets of each operand of the instruction `text[start:end]`:
    what follows its guard and opcode, split at the commas outside brackets and braces
    (diagnostics point at the operand they are about)."""
    code = blank_comments(text[start:end])
    tokens = [(m.start() + start, m.end() + start, m.group()) for m in TOKEN_RE.finditer(code)]
    first = 0
    if tokens and tokens[0][2] == "@":
        first = 3 if len(tokens) > 2 and tokens[1][2] == "!" else 2
    out: list[tuple[int, int]] = []
    depth, begin, stop = 0, None, 0
    for a, b, t in tokens[first + 1:]:  # past the opcode
        if t in _OPENING:
            depth += 1
        elif t in _CLOSING:
            depth -= 1
        elif depth == 0 and t in (",", ";"):
            if begin is not None:
                out.append((begin, stop))
            begin = None
            continue
        if begin is None:
            begin = a
        stop = b
    if begin is not None:
        out.append((begin, stop))
    return out


_OPENING, _CLOSING = frozenset("([{"), frozenset(")]}")
_FLAT_BRACES = re.compile(r"[^{}]*(?:\{[^{}]*\}[^{}]*)*")


def _inner_braces(s: str) -> bool:
    """Whether the braces of a one-statement line are all inside the statement (vector
    operands, initialisers: one level, balanced), none opening a scope or a body."""
    return s[0] != "{" and ".entry" not in s and ".func" not in s and \
        _FLAT_BRACES.fullmatch(s) is not None


def token_offsets(code: str, start: int, end: int) -> list[int]:
    """File offsets of the tokens of `code[start:end]` (for error positions)."""
    return [m.start() for m in TOKEN_RE.finditer(code, start, end)]


def split_statements(code: str) -> Iterator[Statement]:
    """Statements of comment-blanked text (see `blank_comments`), as they come:
    a million-line module is never held as a list of statements."""
    return _Splitter(code).run()


class _Splitter:
    def __init__(self, code: str):
        self.code = code
        self.out: list[Statement] = []
        self.cur: list[str] = []
        self.cur_start = self.cur_line = self.cur_col = 0
        self.cur_end = 0
        self.inner = 0  # braces open inside the current statement
        self.line_directive = False

    def run(self) -> Iterator[Statement]:
        code, out = self.code, self.out
        findall = TOKEN_RE.findall
        make = tuple.__new__  # `Statement(...)` without its Python-level __new__: one a line
        pos, skip_to = 0, -1
        for lineno, line in enumerate(code.split("\n"), 1):
            if len(out) >= 512:
                yield from out
                out.clear()
            start = pos
            pos += len(line) + 1
            s = line.strip()
            if not s or start < skip_to:
                continue
            col = len(line) - len(line.lstrip()) + 1
            lead = start + col - 1
            if not self.cur:
                last = s[-1]
                if (last == ";" and s.count(";") == 1 and '"' not in s
                        and ("{" not in s and "}" not in s or _inner_braces(s))
                        and (":" not in s or not _LABEL_PREFIX_RE.match(s))):
                    out.append(make(Statement, ("stmt", findall(s), lead, lead + len(s),
                                                lineno, col)))
                    continue
                if s.startswith(_LINE_PREFIXES) and "{" not in s and "}" not in s \
                        and ";" not in s:
                    if s.startswith(".loc") and s[4:5] in _BLANKS:
                        out.append(make(Statement, ("loc", [s], lead, lead + len(s), lineno,
                                                    col)))
                        continue
                    texts = findall(s)
                    if texts[0] in LINE_DIRECTIVES:
                        out.append(make(Statement, ("stmt", texts, lead, lead + len(s),
                                                    lineno, col)))
                        continue
                if last == ":" and _LABEL_RE.fullmatch(s):
                    out.append(make(Statement, ("label", findall(s), lead, lead + len(s),
                                                lineno, col)))
                    continue
                if s.startswith(".section"):
                    skip_to = self.section(lead, lineno, col)
                    continue
                if s == "{" or s == "}":
                    out.append(make(Statement, ("open" if s == "{" else "close", [s], lead,
                                                lead + 1, lineno, col)))
                    continue
            self.slow_line(line, start, lineno)
            if self.line_directive and self.cur:
                self.flush()
        if self.cur:
            self.flush()
        yield from out

    def flush(self, kind: str = "stmt") -> None:
        self.out.append(Statement(kind, self.cur, self.cur_start, self.cur_end, self.cur_line,
                                  self.cur_col))
        self.cur = []
        self.inner = 0
        self.line_directive = False

    def section(self, lead: int, lineno: int, col: int) -> int:
        """Record `.section name { ... }` verbatim; the offset just past it."""
        code = self.code
        brace = code.find("{", lead)
        close = code.find("}", brace) if brace >= 0 else -1
        end = len(code) if close < 0 else close + 1
        self.out.append(Statement("section", [code[lead:end]], lead, end, lineno, col))
        return end

    def slow_line(self, line: str, line_start: int, lineno: int) -> None:
        for m in TOKEN_RE.finditer(line):
            text = m.group()
            start = line_start + m.start()
            if not self.cur:
                if text == "{" or text == "}":
                    self.out.append(Statement("open" if text == "{" else "close", [text], start,
                                              start + 1, lineno, m.start() + 1))
                    continue
                self.cur_start, self.cur_line, self.cur_col = start, lineno, m.start() + 1
                self.line_directive = text in LINE_DIRECTIVES
            if text == "{":
                if self.inner == 0 and any(t in HEADER_WORDS for t in self.cur[:6]):
                    self.flush()  # a function header; the brace opens its body
                    self.out.append(Statement("open", [text], start, start + 1, lineno,
                                              m.start() + 1))
                    continue
                self.inner += 1
            elif text == "}":
                if self.inner == 0:  # closes a scope while a statement is open: no ';'
                    self.flush()
                    self.out.append(Statement("close", [text], start, start + 1, lineno,
                                              m.start() + 1))
                    continue
                self.inner -= 1
            self.cur.append(text)
            self.cur_end = start + len(text)
            if text == ";" and self.inner == 0:
                self.flush()
            elif text == ":" and len(self.cur) == 2 and _LABEL_RE.fullmatch(self.cur[0] + ":") \
                    and line[m.end():m.end() + 1] != ":":  # `a::b` is no label (`_LABEL_PREFIX_RE`)
                self.flush("label")
