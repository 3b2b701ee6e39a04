"""Syntax trees -> IR. The only module that reads grammar output.

`parse_module(text, path)` returns the `Module` and the diagnostics of the
front end: syntax errors (recovering at the next statement), unknown opcodes
and modifiers, wrong operand counts, undeclared registers, undefined labels and
symbols, unbalanced braces. It never raises on bad input.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..diagnostics import Diagnostic, Severity
from ..gcpause import collector_paused
from ..parse.grammar import Leaf, Node, SyntaxProblem, parse_statement
from ..parse.lexer import TOKEN_RE, Statement, blank_comments, split_statements, token_offsets
from ..source import SourceFile, Span
from .instruction import DebugLoc, Guard, Instruction
from .module import Function, Label, ListDirective, Module, Param, Pragma, ScopeMarker, Variable
from .operands import (Address, Bracketed, Expression, Immediate, Negated, Operand, ParenList,
                       PredicatePair, Register, Sink, Symbol, Vector, is_special_register)
from .registry import check_opcode, resolve
from .traits import Branch
from .types import lookup

PARSE_ERROR = "parse-error"
KNOWN_SPACES = {".reg": "reg", ".shared": "shared", ".global": "global", ".local": "local",
                ".const": "const", ".param": "param", ".tex": "tex", ".sreg": "sreg"}
LINKAGES = {".visible": "visible", ".extern": "extern", ".weak": "weak", ".common": "common"}
# Names PTX predefines for use as operands.
PREDEFINED_SYMBOLS = frozenset({"WARP_SZ"})
_SINK = Sink()
_new_tuple = tuple.__new__


@dataclass
class ParseResult:
    module: Module
    diagnostics: list[Diagnostic]
    source: SourceFile
    skipped: tuple[Function, ...] = ()  # functions whose bodies were not built (`skip`)

    @property
    def ok(self) -> bool:
        return not any(d.severity is Severity.ERROR for d in self.diagnostics)


def parse_module(text: str, path: str = "<input>", *,
                 lexed: tuple[str, list[Statement]] | None = None,
                 skip: frozenset[int] = frozenset()) -> ParseResult:
    """`lexed`: the comment-blanked text (`blank_comments`) and its statements, when the
    caller has them already. `skip`: offsets of the `{` of
    function bodies to pass over: those functions keep their headers and get empty bodies
    (`lint_parallel` builds each kernel's body in one worker only)."""
    # Parsing allocates hundreds of thousands of small acyclic objects (`gcpause.py`)
    with collector_paused():
        source = SourceFile(path, text)
        builder = _ModuleBuilder(source)
        builder.skip = skip
        try:
            if lexed is None:
                builder.code = blank_comments(text)
                builder.run(split_statements(builder.code))
            else:
                builder.code = lexed[0]
                builder.run(lexed[1])
        except RecursionError:  # pathological nesting in a constant expression
            builder.error_at_offset(0, "input nests too deeply to parse")
    result = ParseResult(builder.module, builder.diagnostics, source, tuple(builder.skipped))
    # pyparsing's exceptions (for statement shapes seen the first time) keep the frames
    # that called it, this function's among them, until the collector finds them: what
    # the builder holds (every statement's tokens) is let go now
    builder.__dict__.clear()
    return result


# `.loc file line [col] [, function_name name, inlined_at file line col]` in decimal
# (a leading 0 would be octal: those take the grammar's path)
_DEC = r"(0|[1-9][0-9]*)"
_LOC_LINE = re.compile(rf"\.loc\s+{_DEC}\s+{_DEC}(?:\s+{_DEC})?"
                       r"(?:\s*,\s*function_name\s+([A-Za-z_$][A-Za-z0-9_$]*)"
                       rf"\s*,\s*inlined_at\s+{_DEC}\s+{_DEC}\s+{_DEC})?")


def _int(text: str) -> int:
    t = text.rstrip("U")
    if t[:2] in ("0x", "0X"):
        return int(t[2:], 16)
    if t[:2] in ("0b", "0B"):
        return int(t[2:], 2)
    if len(t) > 1 and t[0] == "0":
        return int(t, 8)  # PTX: a leading 0 means octal
    return int(t)


def _float(text: str) -> float:
    import struct
    if text[:2] in ("0f", "0F"):
        return struct.unpack(">f", bytes.fromhex(text[2:]))[0]
    if text[:2] in ("0d", "0D"):
        return struct.unpack(">d", bytes.fromhex(text[2:]))[0]
    return float(text)


_CONST_TOKEN = re.compile(r"0[xX][0-9A-Fa-f]+U?|0[bB][01]+U?|[0-9]+U?|<<|>>|[-+*/%()&|^~ ]")


def _evaluate(text: str) -> int | None:
    """The value of an integer constant expression without symbols, else None.
    Evaluated on Python ints after checking every token, so nothing but arithmetic
    runs (integer division floors, as Python does)."""
    pieces = _CONST_TOKEN.findall(text)
    if "".join(pieces) != text:
        return None
    out = []
    for p in pieces:
        if p[0].isdigit():
            out.append(str(_int(p)))
        elif p == "/":
            out.append("//")
        else:
            out.append(p)
    try:
        value = eval("".join(out), {"__builtins__": {}})  # noqa: S307 - tokens checked above
    except (SyntaxError, ZeroDivisionError, ValueError, TypeError, OverflowError,
            RecursionError, MemoryError):  # (RecursionError, MemoryError: deep nesting)
        return None
    return value if isinstance(value, int) else None


# The newest PTX ISA major version ptxlint reads (a newer minor version still parses:
# NVRTC 13.5 writes `.version 9.5`); targets: `sm_90a`, `compute_100f`, and the options.
MAX_PTX_MAJOR = 9
_TARGET_WORD = re.compile(r"(?:sm|compute)_[0-9]+[af]?|texmode_unified|texmode_independent"
                          r"|debug|map_f64_to_f32")
MAX_PARSE_ERRORS = 100
EXCERPT_CHARS = 200


def excerpt(line: str, col: int) -> dict:
    """`details` of a parse error: its line, or EXCERPT_CHARS of it around the 1-based
    column `col` with `excerpt_col`, the column the excerpt starts at."""
    if len(line) <= EXCERPT_CHARS:
        return {"excerpt": line}
    start = max(0, min(col - 1 - EXCERPT_CHARS // 2, len(line) - EXCERPT_CHARS))
    return {"excerpt": line[start:start + EXCERPT_CHARS], "excerpt_col": start + 1}


def _shown(text: str, limit: int = 60) -> str:
    """A token as a message quotes it: a pathological one (megabytes long) cut short."""
    return text if len(text) <= limit else text[:limit - 3] + "..."


_PUNCT = frozenset("{}()[],;:<>=@!|+-*/%~&^?") | {"<<", ">>", "&&", "||", "==", "!=", "<=", ">="}


class Token:
    """One token of a statement, with its file offset and line (made on demand:
    only diagnostics and a few declarations need positions)."""

    __slots__ = ("text", "start", "line")

    def __init__(self, text: str, start: int, line: int):
        self.text = text
        self.start = start
        self.line = line

    @property
    def kind(self) -> str:
        t = self.text
        if t[0] == '"':
            return "string" if len(t) > 1 and t[-1] == '"' else "unclosed"
        if t[0] == "." and len(t) > 1:
            return "dot"
        if t[0].isalpha() or t[0] in "_$":
            return "word"
        if t[0] == "%":
            return "reg"
        if t[0].isdigit():
            return "number"
        return "punct" if t in _PUNCT else "bad"


class Toks:
    """The tokens of one statement as `Token`s, positions computed lazily."""

    __slots__ = ("st", "builder", "_offsets")

    def __init__(self, st: Statement, builder: "_ModuleBuilder"):
        self.st = st
        self.builder = builder
        self._offsets: list[int] | None = None

    def __len__(self) -> int:
        return len(self.st.texts)

    def offsets(self) -> list[int]:
        if self._offsets is None:
            st = self.st
            found = token_offsets(self.builder.code, st.start, st.end)
            # a synthesised ';' (missing-semicolon recovery) sits at the end
            found += [st.end] * (len(st.texts) - len(found))
            self._offsets = found
        return self._offsets

    def __getitem__(self, i: int) -> Token:
        if i < 0:
            i += len(self.st.texts)
        if i == 0:
            return Token(self.st.texts[0], self.st.start, self.st.line)
        start = self.offsets()[i]
        return Token(self.st.texts[i], start, self.builder.source.position(start)[0])


_insn_builders: dict[int, object] = {}  # id(shape tree) -> its compiled builder


def _compile_insn(node: Node):
    """A straight-line builder for one instruction shape. The shape's tree is fixed,
    so what `operand()` would decide per node is decided once here; registers and
    immediates (most operands) become a dictionary lookup with a slow-path fallback.
    The code depends only on the kinds of the operands (token positions and nodes are
    bound per shape), so shapes of the same kinds share one compiled code object."""
    env: dict = {"NODE": node}
    kinds = []
    for i, op in enumerate(node.items[2]):
        env[f"N{i}"] = op
        if isinstance(op, Leaf) and op.kind == "reg":
            kinds.append("reg")
            env[f"P{i}"] = op.pos
        elif isinstance(op, Node) and op.tag == "imm":
            kinds.append("neg" if len(op.items) == 2 else "imm")
            env[f"P{i}"] = op.items[-1].pos
        else:
            kinds.append("other")
    code = _insn_code.get(tuple(kinds))
    if code is None:
        code = _insn_code[tuple(kinds)] = compile(_insn_source(kinds), "<insn builder>",
                                                  "exec")
    exec(code, env)  # noqa: S102 - code generated from the grammar's own tree
    return env["build"]


_insn_code: dict[tuple[str, ...], object] = {}  # operand kinds -> `_insn_source` compiled


def _insn_source(kinds: list[str]) -> str:
    lines = ["def build(b, tokens, texts):",
             "    checked = b.opcode_of(NODE, tokens, texts)",
             "    if checked is None: return",
             "    uses = len(b.symbol_uses)",
             "    regs = b.registers"]
    names = []
    for i, kind in enumerate(kinds):
        name = f"o{i}"
        names.append(name)
        if kind == "reg":
            lines.append(f"    {name} = regs.get(texts[P{i}]) or b.register(N{i}, tokens, texts)")
        elif kind in ("imm", "neg"):
            spelled = f'"-" + texts[P{i}]' if kind == "neg" else f"texts[P{i}]"
            lines.append(f"    {name} = b.immediates.get({spelled}) or b.operand(N{i}, tokens, texts)")
        else:
            lines.append(f"    {name} = b.operand(N{i}, tokens, texts)")
        lines.append(f"    if {name} is None: return")
    operands = "(" + "".join(n + ", " for n in names) + ")"
    lines.append(f"    b.finish_insn(NODE, tokens, texts, checked, {operands}, uses)")
    return "\n".join(lines)


class _Scope:
    """Register declarations of one `{ }` level: explicit names and `%r<N>` ranges."""

    __slots__ = ("suffix", "names", "ranges")

    def __init__(self, suffix: str):
        self.suffix = suffix
        self.names: set[str] = set()
        self.ranges: dict[str, int] = {}

    def declares(self, name: str) -> bool:
        if name in self.names:
            return True
        prefix = name.rstrip("0123456789")  # `%r<N>` declares %r0 .. %r(N-1)
        count = self.ranges.get(prefix)
        if count is None or len(prefix) == len(name):
            return False
        digits = name[len(prefix):]
        return (digits == "0" or digits[0] != "0") and int(digits) < count


class _ModuleBuilder:
    def __init__(self, source: SourceFile):
        self.source = source
        self.module = Module(path=source.path, source=source, special_registers=set())
        self.diagnostics: list[Diagnostic] = []
        self.function: Function | None = None  # the function whose body we are in
        self.pending: Function | None = None  # a header waiting for its `{`
        self.scopes: list[_Scope] = []
        self.scope_counter = 0
        self.code = source.text  # comment-blanked text (see lexer.blank_comments)
        self.handlers = {name[3:]: getattr(self, name) for name in dir(self)
                         if name.startswith("on_")}
        self.immediates: dict[str, Immediate] = {}
        self.addresses: dict[tuple, Address] = {}
        self.open_braces: list[Token] = []
        self.loc: DebugLoc | None = None
        self.locs: dict[tuple, DebugLoc] = {}  # `.loc` text -> its (shared) DebugLoc
        self.saved_registers: list[dict[str, Register]] = []
        self.not_registers: set[str] = set()  # words known not to name a register
        self.registers: dict[str, Register] = {}
        self.register_pool: dict[tuple[str, str], Register] = {}  # `register`
        # (name, statement tokens, token index, function, is a branch target)
        self.symbol_uses: list[tuple[str, Toks, int, Function | None, bool]] = []
        self.last_label: Label | None = None
        self.function_labels: dict[int, dict[str, int]] = {}
        self.skip: frozenset[int] = frozenset()  # `parse_module`'s `skip`
        self.skipped: list[Function] = []
        self.skipping = 0  # braces open inside a body being passed over
        self.error_count = 0  # parse errors found (`add_error`)
        self.first_unshown: Span | None = None

    # ---- diagnostics ---------------------------------------------------------------
    def _span(self, first: Token, last: Token | None = None) -> Span:
        last = last or first
        starts = self.source.line_starts
        end = last.start + len(last.text)
        end_line = last.line + last.text.count("\n")
        end_col = end - starts[end_line - 1] + 1
        return Span(first.start, end, first.line, first.start - starts[first.line - 1] + 1,
                    end_line, end_col)

    def error(self, token: Token, message: str, last: Token | None = None,
              after: bool = False) -> None:
        span = self._span(token, last)
        if after:  # point just past the token (a missing ';')
            span = Span(span.end, span.end, span.end_line, span.end_col, span.end_line,
                        span.end_col)
        self.add_error(message, span, self.function)

    def error_at_offset(self, offset: int, message: str) -> None:
        self.add_error(message, self.source.span(offset, offset), None)

    def add_error(self, message: str, span: Span, fn: Function | None) -> None:
        """A parse error, with an excerpt of its line. A file gets at most
        MAX_PARSE_ERRORS of them (then `finish_errors` adds one that counts the rest),
        and an excerpt at most EXCERPT_CHARS around the column: a 10 MB line full of
        errors would otherwise be copied once per error."""
        self.error_count += 1
        message = _shown(message, 300)
        if self.error_count > MAX_PARSE_ERRORS:
            self.first_unshown = self.first_unshown or span
            return
        details = excerpt(self.source.line_text(span.line), span.col)
        self.diagnostics.append(Diagnostic(PARSE_ERROR, Severity.ERROR, message,
                                           self.source.path, span,
                                           kernel=fn.name if fn else None, details=details))

    def finish_errors(self) -> None:
        hidden = self.error_count - MAX_PARSE_ERRORS
        if hidden > 0:
            self.diagnostics.append(Diagnostic(
                PARSE_ERROR, Severity.ERROR,
                f"{hidden} more parse error{'s' * (hidden > 1)} not shown "
                f"(the first {MAX_PARSE_ERRORS} are)", self.source.path, self.first_unshown,
                details={"hidden": hidden}))

    # ---- driver ----------------------------------------------------------------------
    def statement_span(self, st: Statement) -> Span:
        start, end, line, col = st.start, st.end, st.line, st.col
        if self.code.find("\n", start, end) < 0:  # (a tuple without Span's Python `__new__`)
            return _new_tuple(Span, (start, end, line, col, line, col + end - start))
        return self.source.span(start, end)

    def run(self, statements: list[Statement]) -> None:
        for st in statements:
            if self.skipping:
                if st.kind == "open":
                    self.skipping += 1
                elif st.kind == "close":
                    self.skipping -= 1
                    if not self.skipping:
                        self.close_brace(Token("}", st.start, st.line))
                continue
            if st.kind == "open":
                self.open_brace(Token("{", st.start, st.line))
            elif st.kind == "close":
                self.close_brace(Token("}", st.start, st.line))
            elif st.kind == "section":
                self.module.sections.append(self.source.text[st.start:st.end])
                if not st.texts[0].endswith("}"):  # the lexer ran to the end of the file
                    self.error(Token(".section", st.start, st.line),
                               "unterminated '.section': expected '}' before end of file")
            elif st.kind == "loc":
                self.loc_line(st)
            else:
                self.statement(st)
        if self.open_braces:
            self.error(self.open_braces[0], "unclosed '{': expected '}' before end of file")
            if self.function:
                self.end_function()
        if self.pending:
            self.add_function(self.pending)
        self.check_symbols()
        self.check_header()
        self.finish_errors()

    def loc_line(self, st: Statement) -> None:
        """A `.loc` line as the lexer keeps it (whole): nvcc's spelling is read
        directly, anything else goes through the tokens and the grammar."""
        text = st.texts[0]
        hit = self.locs.get(text)
        if hit is None:
            m = _LOC_LINE.fullmatch(text)
            if m is None:
                self.statement(st._replace(kind="stmt", texts=TOKEN_RE.findall(text)))
                return
            f, line, col, name, a, b, c = m.groups()
            inlined = None if a is None else DebugLoc(int(a), int(b), int(c))
            hit = self.locs[text] = DebugLoc(int(f), int(line), int(col or 0), inlined, name)
        self.loc = hit

    def statement(self, st: Statement) -> None:
        texts = st.texts
        if texts[0] == ".loc":  # a third of the statements nvcc writes: mostly repeats
            hit = self.locs.get(tuple(texts))
            if hit is not None:
                self.loc = hit
                return
        try:
            tree = parse_statement(texts, st.kind)
            tokens = Toks(st, self)
            if isinstance(tree, SyntaxProblem):
                self.syntax_error(st, tokens, tree)
                return
            self.handlers[tree.tag](tree, tokens, st.texts)
        except RecursionError:  # brackets nested past what the parser's recursion allows
            self.too_deep(st)

    def too_deep(self, st: Statement) -> None:
        """The error at the first bracket of the statement's deepest nesting."""
        depth, deepest, at = 0, 0, 0
        for i, text in enumerate(st.texts):
            if text in ("(", "[", "{"):
                depth += 1
                if depth > deepest:
                    deepest, at = depth, i
            elif text in (")", "]", "}"):
                depth -= 1
        tokens = Toks(st, self)
        self.error(tokens[at], f"brackets nested {deepest} deep: too deep to parse")

    def syntax_error(self, st: Statement, tokens: Toks, problem: SyntaxProblem) -> None:
        split = self.missing_semicolon(tokens, problem.index)
        if split:
            last = tokens[split - 1]
            self.error(last, "expected ';' at end of statement", after=True)
            head_end = last.start + len(last.text)
            head = Statement(st.kind, st.texts[:split] + [";"], st.start, head_end, st.line,
                             st.col)
            if not isinstance(parse_statement(head.texts, head.kind), SyntaxProblem):
                self.statement(head)
            rest = tokens[split]
            line_start = self.source.line_starts[rest.line - 1]
            self.statement(Statement("stmt", st.texts[split:], rest.start, st.end, rest.line,
                                     rest.start - line_start + 1))
            return
        if problem.index >= len(tokens):
            last = tokens[-1]
            self.error(last, f"{problem.message} after '{_shown(last.text)}'", after=True)
            return
        bad = tokens[problem.index]
        if bad.kind == "bad":
            self.error(bad, f"unexpected character '{_shown(bad.text)}'")
        elif bad.kind == "unclosed":
            self.error(bad, "unterminated string")
        else:
            self.error(bad, f"{problem.message}, found '{_shown(bad.text)}'")

    def missing_semicolon(self, tokens: Toks, index: int) -> int | None:
        """Where a statement that failed to parse runs into the next line's
        instruction or directive, the index of that line's first token."""
        for i in range(1, min(index + 1, len(tokens))):
            tok = tokens[i]
            if tok.line > tokens[i - 1].line and tokens[i - 1].text not in ",({[|+-":
                if tok.kind == "dot" or tok.text == "@" or (
                        tok.kind == "word" and resolve(tok.text) is not None):
                    return i
        return None

    # ---- braces and functions --------------------------------------------------------
    def open_brace(self, tok: Token) -> None:
        self.open_braces.append(tok)
        if self.pending is not None:
            self.function, self.pending = self.pending, None
            self.function.body = []
            self.scopes = [_Scope("")]
            # `.reg` parameters and return values are registers of the body, whatever
            # their names (`.func (.reg .b32 r) f(.reg .b64 p)` reads `p`, writes `r`)
            self.scopes[0].names.update(p.name for p in (*self.function.params,
                                                         *self.function.returns)
                                        if p.space == "reg")
            self.registers = {}
            self.saved_registers = []
            if tok.start in self.skip:
                self.skipping = 1
                self.skipped.append(self.function)
            return
        if self.function is None:
            self.error(tok, "'{' outside a function body")
            return
        self.scope_counter += 1
        self.scopes.append(_Scope(f"@{self.scope_counter}"))
        self.saved_registers.append(self.registers)
        self.registers = {}  # names may resolve differently inside
        self.not_registers = set()
        self.function.body.append(ScopeMarker(True, self._span(tok)))

    def close_brace(self, tok: Token) -> None:
        if not self.open_braces:
            self.error(tok, "unmatched '}'")
            return
        self.open_braces.pop()
        if self.function is None:
            return
        if len(self.scopes) > 1:
            self.scopes.pop()
            self.registers = self.saved_registers.pop()
            self.not_registers = set()
            self.function.body.append(ScopeMarker(False, self._span(tok)))
            return
        self.end_function()

    def end_function(self) -> None:
        fn = self.function
        assert fn is not None
        self.add_function(fn)
        self.check_labels(fn)
        self.function = None
        self.scopes = []
        self.last_label = None

    def add_function(self, fn: Function) -> None:
        fn.module = self.module
        self.module.functions.append(fn)
        self.module.items.append(fn)

    def on_header(self, node: Node, tokens: list[Token], texts: list[str]) -> None:
        linkage, kind, rets, name, params, perfs, semi = node.items
        if self.function is not None:
            self.error(tokens[0], "function header inside a function body")
            return
        if self.pending is not None:
            self.add_function(self.pending)
        fn = Function(name=texts[name.pos], kind=texts[kind.pos][1:],
                      linkage=tuple(texts[x.pos][1:] for x in linkage),
                      span=self._span(tokens[name.pos]))
        fn.returns = [p for p in (self.param(x, tokens, texts) for x in rets or ()) if p]
        fn.params = [p for p in (self.param(x, tokens, texts) for x in params or ()) if p]
        for perf in perfs:
            fn.directives[texts[perf.items[0].pos][1:]] = tuple(
                _int(texts[x.pos]) for x in perf.items[1])
        if semi is not None:
            self.add_function(fn)  # a prototype: no body
        else:
            self.pending = fn

    def param(self, node: Node, tokens: list[Token], texts: list[str]) -> Param | None:
        var = self.variable(node.items[0], node.items[1], None, tokens, texts, cls=Param)
        return var if isinstance(var, Param) else None

    # ---- declarations -----------------------------------------------------------------
    def on_decl(self, node: Node, tokens: list[Token], texts: list[str]) -> None:
        qualifiers, items = node.items
        for item in items:
            declarator, init = item.items
            var = self.variable(qualifiers, declarator, init, tokens, texts)
            if var is None:
                continue
            if self.function is not None:
                self.function.body.append(var)
                if var.space == "reg":
                    self.declare_register(var)
            elif var.space == "reg":
                self.error(tokens[0], "'.reg' declarations are only allowed inside a function")
            else:
                self.module.variables.append(var)
                self.module.items.append(var)

    def variable(self, qualifiers, declarator: Node, init, tokens: list[Token],
                 texts: list[str], cls=Variable) -> Variable | None:
        space = space_mod = None
        dtype = None
        vector, align, linkage, attributes = 1, None, [], []
        ptr_space = ptr_align = None
        in_ptr = False
        for q in qualifiers:
            if isinstance(q, Node):
                if q.tag == "align":
                    value = _int(texts[q.items[0].pos])
                    if in_ptr:
                        ptr_align = value
                    else:
                        align = value
                else:
                    attributes.append("attribute(" + ", ".join(texts[x.pos] for x in q.items) + ")")
                continue
            text = texts[q.pos]
            base = text.split("::", 1)[0]
            if text == ".ptr":
                in_ptr = True
                attributes.append("ptr")
            elif in_ptr and base in KNOWN_SPACES:
                ptr_space = base[1:]
            elif base in KNOWN_SPACES:
                space, space_mod = KNOWN_SPACES[base], text[1:]
            elif text in LINKAGES:
                linkage.append(LINKAGES[text])
            elif text in (".v2", ".v4", ".v8"):
                vector = int(text[2:])
            elif lookup(text) is not None:
                dtype = lookup(text)
            else:
                self.error(tokens[q.pos], f"unknown qualifier '{_shown(text)}' in declaration")
                return None
        name_leaf, count, dims = declarator.items
        name_tok = tokens[name_leaf.pos]
        if cls is Param:
            space = space or "param"
        if space is None:
            self.error(tokens[0], "declaration without a state space "
                       "(.reg .shared .global .local .const .param .tex)")
            return None
        if dtype is None:
            self.error(name_tok, f"declaration of '{_shown(name_tok.text)}' has no type")
            return None
        dim_values: list[int | None] = []
        for d in dims:
            if d is None:
                dim_values.append(None)
            elif isinstance(d, Leaf):
                dim_values.append(_int(texts[d.pos]))
            else:
                dim_values.append(self.const_int(d, tokens, texts))
        initializer = None
        if init is not None:
            initializer = " ".join(texts[init.items[0].pos:init.items[1].pos])
        kwargs = dict(name=name_tok.text, space=space, type=dtype, vector=vector,
                      dims=tuple(dim_values), align=align, linkage=tuple(linkage),
                      initializer=initializer, attributes=tuple(attributes),
                      span=self._span(name_tok),
                      space_mod=space_mod if space_mod != space else None,
                      range_count=_int(texts[count.pos]) if count is not None else None)
        if cls is Param:
            kwargs.update(ptr_space=ptr_space, ptr_align=ptr_align)
        return cls(**kwargs)

    def const_int(self, node: Node, tokens: list[Token], texts: list[str]) -> int | None:
        text = " ".join(texts[node.items[0].pos:node.items[1].pos])
        value = _evaluate(text)
        if value is not None:
            return value
        self.error(tokens[node.items[0].pos], f"cannot evaluate array size '{_shown(text)}'")
        return None

    def declare_register(self, var: Variable) -> None:
        # a new declaration may shadow a name resolved before
        if var.range_count is None:
            self.registers.pop(var.name, None)
        else:
            self.registers.clear()
        self.not_registers.clear()
        scope = self.scopes[-1]
        if var.range_count is not None:
            scope.ranges[var.name] = var.range_count
        else:
            scope.names.add(var.name)

    # ---- directives ----------------------------------------------------------------------
    def on_version(self, node, tokens, texts):
        version = texts[node.items[0].pos]
        major, _, minor = version.partition(".")
        if not (major.isdigit() and minor.isdigit() and 1 <= int(major) <= MAX_PTX_MAJOR):
            self.error(tokens[node.items[0].pos], f"unsupported .version {_shown(version)} "
                       f"(PTX ISA 1.0 to {MAX_PTX_MAJOR}.x is known)")
        self.module.version = version

    def on_target(self, node, tokens, texts):
        self.module.targets = tuple(texts[x.pos] for x in node.items)
        self.module.target_span = self._span(tokens[node.items[0].pos],
                                             tokens[node.items[-1].pos])
        for x in node.items:
            if not _TARGET_WORD.fullmatch(texts[x.pos]):
                self.error(tokens[x.pos], f"unknown .target '{_shown(texts[x.pos])}' "
                           "(expected sm_XX, compute_XX or a target option such as debug)")

    def check_header(self) -> None:
        """ptxas rejects a module without `.version` and `.target` (their values are
        checked where they are read)."""
        missing = [d for d, have in ((".version", self.module.version),
                                     (".target", self.module.targets)) if not have]
        if missing:
            self.error_at_offset(0, f"missing {' and '.join(missing)} directive"
                                 f"{'s' * (len(missing) > 1)} at the start of the file")

    def on_address_size(self, node, tokens, texts):
        self.module.address_size = _int(texts[node.items[0].pos])

    def on_file(self, node, tokens, texts):
        index, name = node.items[0], node.items[1]
        self.module.files[_int(texts[index.pos])] = texts[name.pos][1:-1]

    def on_loc(self, node, tokens, texts):
        key = tuple(texts)
        hit = self.locs.get(key)
        if hit is None:
            hit = self.locs[key] = self.debug_loc(node, texts)
        self.loc = hit

    def debug_loc(self, node, texts) -> DebugLoc:
        f, line, col, *extra = node.items
        function_name, inlined = None, None
        for e in extra:
            if e.tag == "function_name":
                function_name = texts[e.items[0].pos]
            else:
                a, b, c = (_int(texts[x.pos]) for x in e.items)
                inlined = DebugLoc(a, b, c)
        return DebugLoc(_int(texts[f.pos]), _int(texts[line.pos]),
                        _int(texts[col.pos]) if col is not None else 0, inlined, function_name)

    def on_pragma(self, node, tokens, texts):
        pragma = Pragma(tuple(texts[x.pos] for x in node.items), self._span(tokens[0]))
        if self.function is not None:
            self.function.body.append(pragma)
        else:
            self.module.items.append(pragma)

    def on_alias(self, node, tokens, texts):
        self.module.aliases.append((texts[node.items[0].pos], texts[node.items[1].pos]))

    def on_list(self, node, tokens, texts):
        kind = texts[node.items[0].pos][1:]
        items = tuple(texts[x.pos] for x in node.items[1:] if isinstance(x, Leaf)
                      and x.kind == "word")
        directive = ListDirective(kind, items, " ".join(texts), self._span(tokens[0]))
        if self.function is None:
            self.error(tokens[0], f"'.{kind}' outside a function body")
            return
        if self.last_label is None or self.function.body[-1] is not self.last_label:
            self.error(tokens[0], f"'.{kind}' must follow a label")
            return
        self.last_label.directive = directive
        self.function.body.append(directive)
        if kind != "callprototype":
            for x in node.items[1:]:
                self.symbol_uses.append((texts[x.pos], tokens, x.pos, self.function,
                                         kind == "branchtargets"))

    def on_label(self, node, tokens, texts):
        if self.function is None:
            self.error(tokens[0], "label outside a function body")
            return
        label = Label(texts[0], self._span(tokens[0]))
        self.function.body.append(label)
        self.last_label = label

    # ---- instructions --------------------------------------------------------------------
    def on_insn(self, node: Node, tokens: Toks, texts: list[str]) -> None:
        build = _insn_builders.get(id(node))
        if build is None:
            build = _insn_builders[id(node)] = _compile_insn(node)
        build(self, tokens, texts)

    def finish_insn(self, node: Node, tokens: Toks, texts: list[str], checked,
                    operands: tuple, uses_before: int) -> None:
        """Arity, guard and registration of an instruction whose operands are built."""
        cls, opcode, mods = checked
        lo, hi = cls.arity
        if len(operands) < lo or (hi is not None and len(operands) > hi):
            want = str(lo) if lo == hi else (f"at least {lo}" if hi is None else f"{lo} to {hi}")
            self.error(tokens[node.items[1].pos],
                       f"'{opcode}' takes {want} operand{'s' * (want != '1')}, "
                       f"found {len(operands)}",
                       last=tokens[-2] if len(tokens) > 1 else None)
            return
        guard = None
        guard_node = node.items[0]
        if guard_node is not None:
            reg = self.register(guard_node.items[-1], tokens, texts)
            if reg is None:
                return
            guard = Guard(reg, len(guard_node.items) == 2)
        insn = cls(opcode, mods, guard, operands, self.statement_span(tokens.st), self.loc)
        self.function.body.append(insn)
        if uses_before < len(self.symbol_uses) and isinstance(insn, Branch):
            targets = insn.targets  # branch targets must be labels
            for i in range(uses_before, len(self.symbol_uses)):
                name, toks, index, fn, _ = self.symbol_uses[i]
                if name in targets:
                    self.symbol_uses[i] = (name, toks, index, fn, True)

    def opcode_of(self, node: Node, tokens: Toks, texts: list[str]):
        """(class, opcode, modifiers), or None after reporting why not."""
        pos = node.items[1].pos
        if self.function is None:
            self.error(tokens[pos], f"instruction '{_shown(texts[pos])}' outside a function body")
            return None
        checked = check_opcode(texts[pos])
        if isinstance(checked, str):
            self.error(tokens[pos], checked)
            return None
        return checked

    def operand(self, node, tokens: list[Token], texts: list[str]) -> Operand | None:
        if isinstance(node, Leaf):
            kind = node.kind
            if kind == "reg":
                return self.register(node, tokens, texts)
            if kind == "word":
                if self.is_register_name(texts[node.pos]):
                    return self.register(node, tokens, texts)
                self.symbol_uses.append((texts[node.pos], tokens, node.pos, self.function, False))
                return Symbol(texts[node.pos])
            if kind == "sink":
                return _SINK
            raise AssertionError(kind)
        tag = node.tag
        items = node.items
        if tag == "imm":
            neg = len(items) == 2
            text = texts[items[-1].pos]
            spelled = "-" + text if neg else text
            hit = self.immediates.get(spelled)
            if hit is None:
                try:
                    value = _float(text) if items[-1].kind == "float" else _int(text)
                except ValueError:
                    self.error(tokens[items[-1].pos], f"malformed number '{_shown(text)}'")
                    return None
                hit = self.immediates[spelled] = Immediate(-value if neg else value, spelled)
            return hit
        if tag == "vec":
            elems = tuple(self.operand(x, tokens, texts) for x in items)
            return None if None in elems else Vector(elems)
        if tag == "addr":
            return self.address(items, tokens, texts)
        if tag in ("brk", "paren"):
            parts = tuple(self.operand(x, tokens, texts) for x in items)
            if None in parts:
                return None
            return Bracketed(parts) if tag == "brk" else ParenList(parts)
        if tag == "not":
            reg = self.register(items[0], tokens, texts)
            return None if reg is None else Negated(reg)
        if tag == "pair":
            a, b = (self.operand(x, tokens, texts) for x in items)
            return None if a is None or b is None else PredicatePair(a, b)
        if tag == "symoff":
            self.symbol_uses.append((texts[items[0].pos], tokens, items[0].pos, self.function,
                                     False))
            return Expression("".join(texts[items[0].pos:items[-1].pos + 1]))
        if tag == "expr":
            text = " ".join(texts[items[0].pos:items[1].pos])
            value = _evaluate(text)
            return Expression(text) if value is None else Immediate(value, text)
        raise AssertionError(tag)

    def address(self, items: list, tokens: list[Token], texts: list[str]) -> Address | None:
        base = None
        rest = items
        if items and items[0].kind in ("reg", "word"):
            first = items[0]
            if first.kind == "reg" or self.is_register_name(texts[first.pos]):
                base = self.register(first, tokens, texts)
                if base is None:
                    return None
            else:
                base = Symbol(texts[first.pos])
                self.symbol_uses.append((base.name, tokens, first.pos, self.function, False))
            rest = items[1:]
        sign, offset = 1, 0
        for leaf in rest:
            kind = leaf.kind
            if kind == "minus":
                sign = -sign
            elif kind == "plus":
                sign = 1
            elif kind == "int":
                offset += sign * _int(texts[leaf.pos])
                sign = 1
        key = (base, offset)
        hit = self.addresses.get(key)
        if hit is None:
            hit = self.addresses[key] = Address(base, offset)
        return hit

    def is_register_name(self, name: str) -> bool:
        """PTX lets `.reg .f16 low;` name a register without a '%'."""
        if name in self.registers:
            return True
        if name in self.not_registers:
            return False
        found = any(scope.declares(name) for scope in self.scopes)
        if not found:
            self.not_registers.add(name)
        return found

    def register(self, leaf: Leaf, tokens: list[Token], texts: list[str]) -> Register | None:
        name = texts[leaf.pos]
        hit = self.registers.get(name)
        if hit is not None:
            return hit
        base = name.split(".", 1)[0]
        key = None
        if is_special_register(name):
            key = name
            self.module.special_registers.add(name)
        else:
            # `%r2.h1` (video selector) and `%v.x` (vector element) are parts of `%r2`/`%v`
            for scope in reversed(self.scopes):
                if scope.declares(base):
                    key = base + scope.suffix
                    break
        if key is None:
            self.error(tokens[leaf.pos], f"register '{_shown(name)}' is not declared")
            return None
        # one object per (name, key) in the module: each function names %r1 again
        reg = self.register_pool.get((name, key))
        if reg is None:
            reg = self.register_pool[(name, key)] = Register(name, key)
        self.registers[name] = reg
        return reg

    # ---- whole-function and whole-module checks --------------------------------------------
    def check_labels(self, fn: Function) -> None:
        labels = fn.labels
        seen: set[str] = set()
        for s in fn.body or ():
            if isinstance(s, Label):
                if s.name in seen:
                    self.add_error(f"label '{s.name}' is defined twice", s.span, fn)
                seen.add(s.name)
        self.function_labels[id(fn)] = labels

    def check_symbols(self) -> None:
        module_names = {v.name for v in self.module.variables}
        module_names |= {f.name for f in self.module.functions}
        module_names |= {a for pair in self.module.aliases for a in pair}
        local_names: dict[int, set[str]] = {}
        for name, toks, index, fn, is_target in self.symbol_uses:
            labels = self.function_labels.get(id(fn), {})
            if name in labels:
                continue
            tok = toks[index]
            if is_target:
                self.add_error(f"label '{_shown(name)}' is used but never defined",
                               self._span(tok), fn)
                continue
            if name in module_names or name in PREDEFINED_SYMBOLS:
                continue
            if fn is not None:
                if id(fn) not in local_names:
                    local_names[id(fn)] = {v.name for v in fn.params + fn.returns + fn.variables}
                if name in local_names[id(fn)]:
                    continue
            self.add_error(f"'{_shown(name)}' is not declared", self._span(tok), fn)
