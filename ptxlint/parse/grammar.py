"""The PTX statement grammar (pyparsing). It knows syntax, not semantics.

Each statement arrives as its tokens joined by single spaces. Parse actions build
small `Node`s whose leaves (`Leaf`) point at token *indices*, not text, so one
parse serves every statement of the same shape: `parse_statement` caches the tree
per shape (token kinds, with punctuation, directives and keywords literal), and
`ir/build.py` reads the text of each leaf from the statement at hand. A 34k-line
module has a few hundred shapes, so pyparsing runs a few hundred times.
See docs/grammar.md for the BNF.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

import pyparsing as pp

pp.ParserElement.set_default_whitespace_chars(" ")
# No packrat memoisation: statements are short and each shape is parsed once, so its
# bookkeeping costs more than it saves (the 82 shapes of the CUB corpus: 51 ms with it,
# 29 ms without); deeply nested constant expressions stay linear (tests/test_parse_errors.py).


class Leaf:
    """A token reference: `pos` is a character offset while parsing, then the
    token's index in its statement."""

    __slots__ = ("kind", "pos")

    def __init__(self, kind: str, pos: int):
        self.kind = kind
        self.pos = pos

    def __repr__(self) -> str:
        return f"{self.kind}#{self.pos}"


class Node:
    """An interior node: `tag` names the construct, `items` its parts."""

    __slots__ = ("tag", "items")

    def __init__(self, tag: str, items: list):
        self.tag = tag
        self.items = items

    def __repr__(self) -> str:
        return f"{self.tag}{self.items!r}"


# Parse actions take all three arguments: pyparsing finds a shorter one's arity by
# calling it and reading the traceback of a TypeError, which costs every first call.
def _leaf(kind: str, expr: pp.ParserElement, name: str) -> pp.ParserElement:
    return expr.set_parse_action(lambda s, loc, toks: Leaf(kind, loc)).set_name(name)


def _node(tag: str, expr: pp.ParserElement, name: str) -> pp.ParserElement:
    return expr.set_parse_action(lambda s, loc, toks: Node(tag, list(toks))).set_name(name)


def _span(tag: str, expr: pp.ParserElement, name: str) -> pp.ParserElement:
    """A construct kept as source text: Node(tag, [first Leaf, end offset])."""
    located = pp.Located(expr)
    return located.set_parse_action(
        lambda s, loc, toks: Node(tag, [Leaf("start", toks[0]), Leaf("end", toks[2])])
    ).set_name(name)


S = pp.Suppress
L = pp.Literal
WORD_RE = r"[A-Za-z_$][A-Za-z0-9_$]*(?:\.[A-Za-z0-9_$]+(?:::[A-Za-z0-9_]+)*)*"

REG = _leaf("reg", pp.Regex(r"%[A-Za-z0-9_$]+(?:\.[A-Za-z0-9_]+)?"), "register")
WORD = _leaf("word", pp.Regex(WORD_RE), "identifier")
INT = _leaf("int", pp.Regex(r"0[xX][0-9A-Fa-f]+U?|0[bB][01]+U?|[0-9]+U?"), "integer")
FLOAT = _leaf("float", pp.Regex(
    r"0[fF][0-9A-Fa-f]{8}|0[dD][0-9A-Fa-f]{16}|[0-9]+\.[0-9]*(?:[eE][+-]?[0-9]+)?"
    r"|[0-9]+[eE][+-]?[0-9]+"), "float")
STRING = _leaf("string", pp.Regex(r'"(?:[^"\\\n]|\\.)*"'), "string")
SINK = _leaf("sink", pp.Regex(r"_(?![A-Za-z0-9_$])"), "'_'")
MINUS = _leaf("minus", L("-"), "'-'")
PLUS = _leaf("plus", L("+"), "'+'")
SEMI = S(";").set_name("';'")
COMMA = S(",")


def _dot(word: str) -> pp.ParserElement:
    """A directive keyword such as `.reg` (a whole token: `.reg` is not `.regx`)."""
    return _leaf("dot", pp.Regex(rf"\{word}(?![A-Za-z0-9_$:])"), word)


def _kw(word: str) -> pp.ParserElement:
    return S(pp.Keyword(word, ident_chars=pp.identbodychars + "$"))


DOT_ANY = _leaf("dot", pp.Regex(r"\.[A-Za-z_][A-Za-z0-9_$]*(?:::[A-Za-z0-9_]+)*"), "directive")

# ---- constant expressions (initialisers, array sizes, odd immediates) ----------
# Kept as source text (`_span`) and evaluated later (ir/build.py), so the grammar only
# has to find where an expression ends: a flat `term (op term)*`, each term a constant
# or a parenthesised expression behind unary operators. Every token is read once, so the
# parse is linear in its length and depth with any pyparsing (`infix_notation`'s eleven
# precedence levels re-parse each operand per level, exponentially so in pyparsing
# before 3.3.3).
_atom = (FLOAT | INT | _kw("generic") + S("(") + WORD + S(")") | WORD).set_name("constant")
_UNARY = pp.one_of("- ~ !").set_name("unary operator")
_BINARY = pp.one_of("* / % + - << >> < > <= >= == != & ^ | && ||").set_name("operator")
CONST_EXPR = pp.Forward().set_name("constant expression")
_term = (pp.ZeroOrMore(_UNARY) + (_atom | S("(") + CONST_EXPR + S(")"))).set_name("constant")
CONST_EXPR <<= _term + pp.ZeroOrMore(_BINARY + _term)

# ---- operands ---------------------------------------------------------------------
# An operand followed by an operator is part of a constant expression.
OPERATOR = pp.one_of("+ - * / % << >> & ^ && ||") | (L("|") + ~pp.FollowedBy(REG | SINK | WORD))
ALONE = ~pp.FollowedBy(OPERATOR)
IMM = _node("imm", pp.Opt(MINUS) + (FLOAT | INT) + ALONE, "immediate")
VECTOR = _node("vec", S("{") + pp.DelimitedList(SINK | REG | IMM | WORD) + S("}"), "vector operand")
OFFSET = (PLUS | MINUS) + pp.Opt(MINUS) + INT
ADDRESS = _node("addr", S("[") + (
    (REG | WORD) + pp.ZeroOrMore(OFFSET)
    | pp.Opt(MINUS) + INT) + S("]"), "address")
NEGATED = _node("not", S("!") + REG, "negated predicate")
PAIR = _node("pair", (VECTOR | REG | SINK | WORD) + S("|") + (REG | SINK | WORD),
             "predicate pair")
SYMBOL_OFFSET = _node("symoff", WORD + OFFSET + ALONE, "symbol+offset")
operand = pp.Forward().set_name("operand")
BRACKETED = _node("brk", S("[") + operand + pp.OneOrMore(COMMA + operand) + S("]"),
                  "bracketed operand list")
PARENS = _node("paren", S("(") + pp.Opt(pp.DelimitedList(operand)) + S(")") + ALONE,
                "argument list")
operand <<= (PAIR | VECTOR | BRACKETED | ADDRESS | PARENS | NEGATED | REG | IMM
             | SINK | SYMBOL_OFFSET | WORD + ALONE
             | _span("expr", CONST_EXPR, "constant expression")).set_name("operand")

BANG = L("!")("neg").set_parse_action(lambda s, loc, toks: Leaf("bang", -1))
GUARD = _node("guard", S("@") + pp.Opt(BANG) + (REG | WORD), "guard")
INSTRUCTION = _node("insn", pp.Opt(GUARD, default=None)
                    + _leaf("opcode", pp.Regex(WORD_RE), "opcode")
                    + pp.Group(pp.Opt(pp.DelimitedList(operand)))
                    + SEMI, "instruction")

# ---- declarations ------------------------------------------------------------------
ALIGN = _node("align", S(_dot(".align")) + INT, ".align N")
ATTRIBUTE = _node("attr", S(_dot(".attribute")) + S("(") + pp.DelimitedList(DOT_ANY) + S(")"),
                  ".attribute(...)")
QUALIFIER = (ALIGN | ATTRIBUTE | DOT_ANY).set_name("qualifier")
DIMS = pp.Group(pp.ZeroOrMore(S("[") + pp.Opt(INT | _span("expr", CONST_EXPR, "size"),
                                                   default=None) + S("]")))
DECLARATOR = _node("declarator", (REG | WORD)
                   + pp.Opt(S("<") + INT + S(">"), default=None) + DIMS, "declarator")
initializer = pp.Forward().set_name("initializer")
FIELD = WORD + L("=") + CONST_EXPR  # .texref/.samplerref fields: { width = 64, ... }
initializer <<= _span("init", S("{") + pp.DelimitedList(FIELD | initializer) + S("}")
                      | CONST_EXPR, "initializer")
DECL_ITEM = _node("item", DECLARATOR + pp.Opt(S("=") + initializer, default=None), "declarator")
DECLARATION = _node("decl", pp.Group(pp.OneOrMore(QUALIFIER))
                    + pp.Group(pp.DelimitedList(DECL_ITEM)) + SEMI, "declaration")

PARAM = _node("param", pp.Group(pp.OneOrMore(QUALIFIER)) + DECLARATOR, "parameter")
PARAM_LIST = pp.Group(S("(") + pp.Opt(pp.DelimitedList(PARAM)) + S(")")).set_name("parameter list")
PERF = _node("perf", DOT_ANY + pp.Group(pp.Opt(pp.DelimitedList(INT))), "performance directive")
LINKAGE = pp.Group(pp.ZeroOrMore(_dot(".visible") | _dot(".extern") | _dot(".weak")
                                 | _dot(".common")))
HEADER = _node("header", LINKAGE + (_dot(".entry") | _dot(".func"))
               + pp.Opt(PARAM_LIST, default=None) + WORD + pp.Opt(PARAM_LIST, default=None)
               + pp.Group(pp.ZeroOrMore(PERF)) + pp.Opt(L(";")("semi"), default=None),
               "function header")

# ---- module and debug directives -------------------------------------------------------
VERSION = _node("version", S(_dot(".version")) + FLOAT, ".version")
TARGET = _node("target", S(_dot(".target")) + pp.DelimitedList(WORD), ".target")
ADDRESS_SIZE = _node("address_size", S(_dot(".address_size")) + INT, ".address_size")
FILE = _node("file", S(_dot(".file")) + INT + STRING + pp.ZeroOrMore(COMMA + INT), ".file")
LOC_FUNCTION = _node("function_name", _kw("function_name") + WORD + pp.Opt(S("+") + INT),
                     "function_name")
LOC_INLINED = _node("inlined_at", _kw("inlined_at") + INT + INT + INT, "inlined_at")
LOC = _node("loc", S(_dot(".loc")) + INT + INT + pp.Opt(INT, default=None)
            + pp.ZeroOrMore(COMMA + (LOC_FUNCTION | LOC_INLINED)), ".loc")
PRAGMA = _node("pragma", S(_dot(".pragma")) + pp.DelimitedList(STRING) + SEMI, ".pragma")
ALIAS = _node("alias", S(_dot(".alias")) + WORD + COMMA + WORD + SEMI, ".alias")
TARGET_LIST = _node("list", (_dot(".branchtargets") | _dot(".calltargets"))
                    + pp.DelimitedList(WORD) + SEMI, "target list")
PROTOTYPE = _node("list", _dot(".callprototype") + pp.Opt(PARAM_LIST, default=None) + SINK
                  + pp.Opt(PARAM_LIST, default=None) + pp.ZeroOrMore(DOT_ANY) + SEMI,
                  ".callprototype")
LABEL = _node("label", WORD + S(":"), "label")

DIRECTIVES: dict[str, pp.ParserElement] = {
    ".version": VERSION, ".target": TARGET, ".address_size": ADDRESS_SIZE, ".file": FILE,
    ".loc": LOC, ".pragma": PRAGMA, ".alias": ALIAS, ".branchtargets": TARGET_LIST,
    ".calltargets": TARGET_LIST, ".callprototype": PROTOTYPE,
}
KEYWORD_WORDS = frozenset({"_", "function_name", "inlined_at", "generic"})
_FIRST = {c: "word" for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_$"}
_FIRST["%"] = "reg"
_FLOAT_RE = re.compile(r"0[fFdD][0-9A-Fa-f]+$|[0-9]+[.eE]")


def _other_kind(text: str) -> str:
    first = text[0]
    if first.isdigit():
        return "float" if _FLOAT_RE.match(text) else "int"
    if first == '"':
        return "string" if len(text) > 1 and text[-1] == '"' else "unclosed"
    return text  # punctuation, directives, stray characters: spelled out


@dataclass(slots=True)
class SyntaxProblem:
    """Why a statement shape does not parse: the token index where it failed
    (len(tokens) for the end) and pyparsing's explanation."""

    index: int
    message: str


_cache: dict[tuple, Node | SyntaxProblem] = {}


_kinds: dict[str, str] = {}  # token text -> shape entry (tokens repeat a lot)


def _kind(text: str) -> str:
    # a lone `%` is the modulo operator, not a register: spelled out like punctuation
    kind = text if text in KEYWORD_WORDS or text == "%" else \
        (_FIRST.get(text[0]) or _other_kind(text))
    if len(_kinds) < 1_000_000:
        _kinds[text] = kind
    return kind


def shape_of(texts: list[str]) -> tuple:
    """Token kinds, with punctuation, directives and keywords spelled out."""
    shape = tuple(map(_kinds.get, texts))  # every token seen before: one C-level pass
    if None in shape:
        known = _kinds.get
        shape = tuple([known(t) or _kind(t) for t in texts])
    return shape


def parse_statement(texts: list[str], kind: str) -> Node | SyntaxProblem:
    """The syntax tree of one statement, shared by all statements of its shape."""
    key = (kind, shape_of(texts))
    hit = _cache.get(key)
    if hit is None:
        hit = _cache[key] = (kind == "stmt" and (_simple_instruction(key[1])
                                                 or _header_by_parameter(texts))) or \
            _parse(texts, kind)
    return hit


# ---- the common instruction shapes, without pyparsing --------------------------------------
# A guard, an opcode and operands that are registers, names, numbers, `[base+offset]`
# addresses, `{...}` vectors, `!p` or `a|b`: the tree the grammar would build (the same
# nodes, leaves at token indices; tests/test_grammar_fast.py compares the two on every
# shape of the samples and on generated ones). pyparsing costs a third of a millisecond
# per shape, and a module's first parse meets dozens. Anything else returns None and
# goes through the grammar, which also explains what does not parse.
_SIMPLE_LEAF = {"reg": "reg", "word": "word", "_": "sink"}


def _simple_instruction(shape: tuple) -> Node | None:
    n = len(shape)
    if n < 2 or shape[-1] != ";":
        return None
    i, guard = 0, None
    if shape[0] == "@":
        if n > 2 and shape[1] == "!":
            i, items = 2, [Leaf("bang", -1)]
        else:
            i, items = 1, []
        if shape[i] not in ("reg", "word"):
            return None
        guard = Node("guard", [*items, Leaf(shape[i], i)])
        i += 1
    if shape[i] != "word":
        return None
    opcode = Leaf("opcode", i)
    i += 1
    operands: list = []
    end = n - 1
    while i < end:
        found = _simple_operand(shape, i)
        if found is None:
            return None
        node, i = found
        operands.append(node)
        if shape[i] == ",":
            i += 1
            if i == end:
                return None  # a trailing comma
        elif i != end:
            return None
    return Node("insn", [guard, opcode, operands])


def _simple_operand(shape: tuple, i: int) -> tuple[object, int] | None:
    """(node, index after it) of the operand at i, followed by ',' or ';', or None."""
    kind = shape[i]
    leaf = _SIMPLE_LEAF.get(kind)
    if leaf is not None or kind == "{":
        if leaf is not None:
            first, i = Leaf(leaf, i), i + 1
        else:
            found = _vector(shape, i)
            if found is None:
                return None
            first, i = found
        if shape[i] != "|":
            return (first, i) if shape[i] in (",", ";") else None
        second = _SIMPLE_LEAF.get(shape[i + 1])
        if second is None or shape[i + 2] not in (",", ";"):
            return None
        return Node("pair", [first, Leaf(second, i + 1)]), i + 2
    if kind in ("int", "float") or (kind == "-" and shape[i + 1] in ("int", "float")):
        found = _immediate(shape, i)
        return found if found is not None and shape[found[1]] in (",", ";") else None
    if kind == "!" and shape[i + 1] == "reg" and shape[i + 2] in (",", ";"):
        return Node("not", [Leaf("reg", i + 1)]), i + 2
    if kind == "[":
        return _address(shape, i)
    return None


def _immediate(shape: tuple, i: int) -> tuple[Node, int] | None:
    items = []
    if shape[i] == "-":
        items.append(Leaf("minus", i))
        i += 1
    if shape[i] not in ("int", "float"):
        return None
    items.append(Leaf(shape[i], i))
    return Node("imm", items), i + 1


def _vector(shape: tuple, i: int) -> tuple[Node, int] | None:
    """`{ a , b , ... }` at i (elements: registers, names, '_', numbers)."""
    items = []
    i += 1
    while True:
        kind = shape[i]
        leaf = _SIMPLE_LEAF.get(kind)
        if leaf is not None:
            items.append(Leaf(leaf, i))
            i += 1
        else:
            found = _immediate(shape, i) if kind in ("int", "float", "-") else None
            if found is None:
                return None
            items.append(found[0])
            i = found[1]
        if shape[i] == "}":
            return Node("vec", items), i + 1
        if shape[i] != ",":
            return None
        i += 1


def _address(shape: tuple, i: int) -> tuple[Node, int] | None:
    """`[ base (+|-) [-] int ... ]` or `[ [-] int ]` at i, followed by ',' or ';'."""
    items = []
    i += 1
    kind = shape[i]
    if kind in ("reg", "word"):
        items.append(Leaf(kind, i))
        i += 1
        while i is not None and shape[i] in ("+", "-"):
            items.append(Leaf("plus" if shape[i] == "+" else "minus", i))
            i = _minus_int(shape, i + 1, items)
    else:
        i = _minus_int(shape, i, items)
    if i is None or shape[i] != "]" or shape[i + 1] not in (",", ";"):
        return None
    return Node("addr", items), i + 1


def _minus_int(shape: tuple, i: int, items: list) -> int | None:
    """`[-] int` at i: its leaves appended to `items`; the index after it, or None."""
    if shape[i] == "-":
        items.append(Leaf("minus", i))
        i += 1
    if shape[i] != "int":
        return None
    items.append(Leaf("int", i))
    return i + 1


def _element_for(texts: list[str], kind: str) -> pp.ParserElement:
    if kind == "label":
        return LABEL
    first = texts[0]
    if first in DIRECTIVES:
        return DIRECTIVES[first]
    if any(t in (".entry", ".func") for t in texts[:6]):
        return HEADER
    if first[0] == "." and len(first) > 1:
        return DECLARATION
    return INSTRUCTION


# ---- function headers, one parameter at a time ----------------------------------------------
# Every kernel header is a shape of its own (its parameters' number and types), and a
# long one: pyparsing takes a millisecond or two over it. The header without its
# parameters (`.visible .entry name ( )`) and each parameter are shapes that repeat; the
# tree is assembled from theirs. Anything unusual goes through the grammar whole.
_PARAM_ALONE = PARAM + pp.StringEnd()
_param_trees: dict[tuple, Node | None] = {}  # parameter shape -> tree at its own indices


def _header_by_parameter(texts: list[str]) -> Node | None:
    if _element_for(texts, "stmt") is not HEADER:
        return None
    at = next(i for i, t in enumerate(texts[:6]) if t in (".entry", ".func"))
    name = at + 1
    if texts[name:name + 1] == ["("]:  # `.func (returns) name (params)`
        if ")" not in texts[name:]:
            return None
        name = texts.index(")", name) + 1
    if texts[name + 1:name + 2] != ["("] or ")" not in texts[name + 2:]:
        return None
    open_, close = name + 1, texts.index(")", name + 2)
    if close == open_ + 1 or "(" in texts[open_ + 1:close]:
        return None
    skeleton = parse_statement(texts[:open_ + 1] + texts[close:], "stmt")
    if isinstance(skeleton, SyntaxProblem):
        return None
    params, start = [], open_ + 1
    for i in range(open_ + 1, close + 1):
        if texts[i] in (",", ")"):
            tree = _param_tree(texts[start:i])
            if tree is None:
                return None
            params.append(_moved(tree, start, 0))
            start = i + 1
    header = _moved(skeleton, close - open_ - 1, open_ + 1)
    header.items[4] = params
    return header


def _param_tree(texts: list[str]) -> Node | None:
    key = shape_of(texts)
    if key not in _param_trees:
        offsets, pos = [], 0
        for text in texts:
            offsets.append(pos)
            pos += len(text) + 1
        try:
            tree = _PARAM_ALONE.parse_string(" ".join(texts))[0]
        except pp.ParseBaseException:
            tree = None
        else:
            _to_indices(tree, offsets)
        _param_trees[key] = tree
    return _param_trees[key]


def _moved(item, by: int, start: int):
    """A copy of a tree with the token indices from `start` on moved by `by`."""
    if isinstance(item, Leaf):
        return Leaf(item.kind, item.pos + by if item.pos >= start else item.pos)
    if isinstance(item, Node):
        return Node(item.tag, [_moved(x, by, start) for x in item.items])
    if isinstance(item, (list, pp.ParseResults)):
        return [_moved(x, by, start) for x in item]
    return item


def _parse(texts: list[str], kind: str) -> Node | SyntaxProblem:
    offsets, pos = [], 0
    for text in texts:
        offsets.append(pos)
        pos += len(text) + 1
    joined = " ".join(texts)
    element = _element_for(texts, kind)
    try:
        tree = element.parse_string(joined, parse_all=True)[0]
    except pp.ParseBaseException as exc:
        index = bisect.bisect_right(offsets, exc.loc) - 1 if exc.loc < len(joined) else len(texts)
        if element is INSTRUCTION:
            deeper = _operand_problem(texts, offsets, joined)
            if deeper is not None and deeper.index >= index:
                return deeper
        return SyntaxProblem(max(index, 0), _explain(exc, element))
    _to_indices(tree, offsets)
    return tree


_OPERAND_ALONE = operand + pp.StringEnd()


def _operand_problem(texts: list[str], offsets: list[int], joined: str) -> SyntaxProblem | None:
    """pyparsing reports where the operand *list* stopped (a ','); find the first
    operand that does not parse and where inside it parsing failed."""
    opcode = 0 if texts[0] != "@" else (3 if texts[1:2] == ["!"] else 2)
    depth, start = 0, opcode + 1
    for i in range(start, len(texts)):
        text = texts[i]
        if text in ("(", "[", "{"):
            depth += 1
        elif text in (")", "]", "}"):
            depth -= 1
        last = i == len(texts) - 1
        if not (depth == 0 and text in (",", ";") or last):
            continue
        end = i if text in (",", ";") else i + 1  # one past the operand's tokens
        if end > start:
            stop = offsets[end - 1] + len(texts[end - 1])
            try:
                _OPERAND_ALONE.parse_string(joined[offsets[start]:stop])
            except pp.ParseBaseException as exc:
                at = offsets[start] + exc.loc
                index = bisect.bisect_right(offsets, at) - 1 if at < stop else end
                return SyntaxProblem(index, _explain(exc, operand))
        start = i + 1
    return None


def _explain(exc: pp.ParseBaseException, element: pp.ParserElement) -> str:
    """What was expected, in PTX terms. pyparsing names the element that failed; an
    unnamed one it spells out as grammar (`{a | b ~FollowedBy ...}`), which says nothing
    to a PTX author: then the construct being parsed is named instead."""
    if "end of text" in exc.msg:  # the statement parsed, with tokens left over
        if element is INSTRUCTION or element is operand:
            return "expected ',' or ';'"
        return "expected ';'" if element is DECLARATION else "unexpected token"
    expected = exc.msg.removeprefix("Expected ")
    if any(c in expected for c in "{}~|") and expected not in ("'{'", "'}'", "'|'", "'~'"):
        expected = _NAMES.get(element, "a statement")
    return f"expected {expected}"


_NAMES = {operand: "an operand", INSTRUCTION: "an instruction", DECLARATION: "a declaration",
          HEADER: "a function header", LABEL: "a label"}


def _to_indices(node: Node, offsets: list[int]) -> None:
    """Turn character offsets into token indices (an `end` offset into the index
    one past the last token of the span)."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, Leaf):
            if item.pos >= 0:
                item.pos = bisect.bisect_right(offsets, item.pos - (item.kind == "end")) - 1 \
                    + (item.kind == "end")
        elif isinstance(item, Node):
            stack.extend(item.items)
        elif isinstance(item, pp.ParseResults):
            stack.extend(item)
