"""Tokens and statements.

One regular expression tokenises the whole file; a small state machine groups
tokens into statements (ending at `;`, a brace, a label's `:`, or the end of
the line for `.version .target .address_size .file .loc`). Each statement is
then parsed by the pyparsing grammar, once per *shape* (see `grammar.py`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

TOKEN_RE = re.compile(r"""
 (?P<ws>[ \t\r\n\f\v]+|//[^\n]*|/\*(?:.|\n)*?\*/|@@DWARF[^\n]*)
|(?P<string>"(?:[^"\\\n]|\\.)*")
|(?P<float>0[fF][0-9A-Fa-f]{8}(?![0-9A-Za-z_])|0[dD][0-9A-Fa-f]{16}(?![0-9A-Za-z_])
          |[0-9]+\.[0-9]*(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+)
|(?P<int>0[xX][0-9A-Fa-f]+U?|0[bB][01]+U?|[0-9]+U?)
|(?P<reg>%[A-Za-z0-9_$]+(?:\.[A-Za-z0-9_]+)?)
|(?P<dot>\.[A-Za-z_][A-Za-z0-9_$]*(?:::[A-Za-z0-9_]+)*)
|(?P<word>[A-Za-z_$][A-Za-z0-9_$]*(?:\.[A-Za-z0-9_$]+(?:::[A-Za-z0-9_]+)*)*)
|(?P<punct><<|>>|&&|\|\||==|!=|<=|>=|[{}()\[\],;:<>=@!|+\-*/%~&^?])
|(?P<unclosed>"[^"\n]*)
|(?P<bad>.)
""", re.VERBOSE)

# Directives that end at the end of their line rather than at a ';'.
LINE_DIRECTIVES = frozenset({".version", ".target", ".address_size", ".file", ".loc"})
HEADER_WORDS = frozenset({".entry", ".func"})


@dataclass(slots=True)
class Token:
    kind: str  # string float int reg dot word punct unclosed bad
    text: str
    start: int  # offset in the file
    line: int   # 1-based


@dataclass(slots=True)
class Statement:
    """A run of tokens that the grammar parses as one unit. `kind` is
    "stmt" for ordinary statements, "open"/"close" for braces, "label" for `name:`,
    "section" for a debug section kept as raw text."""

    kind: str
    tokens: list[Token]
    problems: list[tuple[Token | int, str]] = field(default_factory=list)

    @property
    def start(self) -> int:
        return self.tokens[0].start

    @property
    def end(self) -> int:
        last = self.tokens[-1]
        return last.start + len(last.text)


def tokenize(text: str) -> list[Token]:
    """All tokens but whitespace and comments, with 1-based line numbers."""
    tokens: list[Token] = []
    append = tokens.append
    line = 1
    count = text.count
    pos = 0
    for m in TOKEN_RE.finditer(text):
        kind = m.lastgroup
        start = m.start()
        if start != pos:  # cannot happen: `bad` matches any character
            raise AssertionError("lexer gap")
        pos = m.end()
        if kind == "ws":
            nl = count("\n", start, pos)
            if nl:
                line += nl
            continue
        append(Token(kind, m.group(), start, line))  # type: ignore[arg-type]
    return tokens


def split_statements(tokens: list[Token]) -> list[Statement]:
    """Group tokens into statements; brace and separator errors are attached as
    `problems` on the statement where they occur (the parser reports them)."""
    out: list[Statement] = []
    cur: list[Token] = []
    inner = 0  # braces open inside the current statement (vectors, initialisers)
    line_end = 0  # for line directives: the line they end on
    i, n = 0, len(tokens)
    while i < n:
        tok = tokens[i]
        text = tok.text
        if cur and line_end and tok.line != line_end:
            out.append(Statement("stmt", cur))
            cur, line_end = [], 0
        if not cur:
            if text == "{" or text == "}":
                out.append(Statement("open" if text == "{" else "close", [tok]))
                i += 1
                continue
            if text == ".section":
                end = _skip_section(tokens, i)
                out.append(Statement("section", tokens[i:end]))
                i = end
                continue
            if text in LINE_DIRECTIVES:
                line_end = tok.line
        if tok.kind == "punct":
            if text == "{":
                if inner == 0 and _is_header(cur):
                    out.append(Statement("stmt", cur))
                    cur = []
                    continue  # reprocess the brace as a scope opener
                inner += 1
            elif text == "}":
                if inner == 0:
                    # a '}' closing a scope while a statement is open: its ';' is missing
                    out.append(Statement("stmt", cur))
                    cur = []
                    continue
                inner -= 1
            elif text == ";" and inner == 0:
                cur.append(tok)
                out.append(Statement("stmt", cur))
                cur, line_end = [], 0
                i += 1
                continue
            elif text == ":" and len(cur) == 1 and cur[0].kind == "word":
                cur.append(tok)
                out.append(Statement("label", cur))
                cur = []
                i += 1
                continue
        cur.append(tok)
        i += 1
    if cur:
        out.append(Statement("stmt", cur))
    return out


def _is_header(cur: list[Token]) -> bool:
    """A function header (`.visible .entry f(...)`) before its body's brace."""
    return any(t.text in HEADER_WORDS for t in cur[:6])


def _skip_section(tokens: list[Token], i: int) -> int:
    """The end of `.section .debug_* { ... }`: DWARF data kept verbatim, not parsed."""
    n = len(tokens)
    while i < n and tokens[i].text != "{":
        i += 1
    depth = 0
    while i < n:
        if tokens[i].text == "{":
            depth += 1
        elif tokens[i].text == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return n
