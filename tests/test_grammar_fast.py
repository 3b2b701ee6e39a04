"""The common instruction shapes are built without pyparsing (`grammar._simple_instruction`):
the tree must be the one the grammar builds, node for node, and every shape it declines
still goes through the grammar."""
from __future__ import annotations

from pathlib import Path

import pyparsing as pp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptxlint.parse import grammar
from ptxlint.parse.grammar import Leaf, Node, SyntaxProblem, shape_of
from ptxlint.parse.lexer import blank_comments, split_statements

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = sorted((ROOT / "ptx_samples").rglob("*.ptx"))


def _normal(x):
    """A tree as plain tuples and lists (the grammar's groups are ParseResults)."""
    if isinstance(x, Leaf):
        return ("leaf", x.kind, x.pos)
    if isinstance(x, Node):
        return ("node", x.tag, [_normal(i) for i in x.items])
    if isinstance(x, (list, pp.ParseResults)):
        return [_normal(i) for i in x]
    assert x is None or isinstance(x, str), x  # an absent part, or a literal (`;`)
    return x


def _agree(texts: list[str]) -> bool | None:
    """None when the fast path declines the statement; else whether both trees agree."""
    fast = grammar._simple_instruction(shape_of(texts))
    if fast is None:
        return None
    slow = grammar._parse(texts, "stmt")
    assert not isinstance(slow, SyntaxProblem), (texts, slow)
    return _normal(fast) == _normal(slow)


def _statements(path: Path) -> list[list[str]]:
    code = blank_comments(path.read_text())
    return [s.texts for s in split_statements(code) if s.kind == "stmt"]


def test_every_simple_shape_of_the_samples_is_the_grammars_tree():
    seen, taken = set(), 0
    for path in SAMPLES:
        for texts in _statements(path):
            shape = shape_of(texts)
            if shape in seen:
                continue
            if grammar._element_for(texts, "stmt") is not grammar.INSTRUCTION or \
                    isinstance(grammar._parse(texts, "stmt"), SyntaxProblem):
                continue
            seen.add(shape)
            agreed = _agree(texts)
            if agreed is not None:
                taken += 1
                assert agreed, (path.name, " ".join(texts))
    # most instruction shapes are simple: the fast path must not quietly stop taking them
    assert taken > 0.6 * len(seen), (taken, len(seen))


@pytest.mark.parametrize("text, taken", [
    ("ret ;", True),
    ("@ %p1 bra $L__BB1_2 ;", True),
    ("@ ! p add.u32 r0 , r0 , %r320 ;", True),
    ("st.shared.u32 [ %r520 + - 2048 ] , %r154 ;", True),
    ("ld.shared.v4.u32 { %r1 , %r2 , _ , %r4 } , [ smem + 16 ] ;", True),
    ("shfl.sync.up.b32 r0 | p , %r320 , %r318 , %r343 , %r345 ;", True),
    ("mov.b32 %f1 , 0f3F800000 ;", True),
    ("selp.b32 %r1 , - 1 , 7 , ! %p1 ;", True),
    ("ld.global.u32 %r1 , [ - 8 ] ;", True),
    ("ld.global.u32 %r1 , [ %r2 - 4 ] ;", True),
    ("ld.global.u32 %r1 , [ %r2 + 4 - - 8 ] ;", True),
    # the grammar's business: expressions, calls, symbol+offset, malformed lists
    ("mov.u32 %r1 , 4 + 4 ;", False),
    ("call ( %r1 ) , f , ( %r2 ) ;", False),
    ("mov.u64 %rd1 , arr + 8 ;", False),
    ("add.s32 %r1 , , %r2 ;", False),
    ("add.s32 %r1 , %r2 , ;", False),
    ("ld.global.u32 %r1 , [ %r2 + %r3 ] ;", False),
])
def test_which_shapes_take_the_fast_path(text: str, taken: bool):
    agreed = _agree(text.split())
    assert (agreed is not None) == taken
    assert agreed in (None, True)


TOKENS = ["%r1", "%p2", "r0", "foo", "_", "12", "0x1F", "0f3F800000", "1.5", "-", "+",
          "[", "]", "{", "}", ",", "!", "|", "@", "(", ")", "*", ".x"]


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=12),
       st.sampled_from([[], ["@", "%p1"], ["@", "!", "%p1"]]))
def test_generated_statements_get_the_grammars_tree_or_go_to_the_grammar(body, guard):
    texts = [*guard, "add.s32", *body, ";"]
    assert _agree(texts) in (None, True)


OPERANDS = ["%r1", "foo", "_", "-1", "7", "0d3FF0000000000000", "2.5", "[%r2]", "[%r2+4]",
            "[%r2-4]", "[%r2+-4]", "[foo+4-8]", "[-8]", "[16]", "{%r1, %r2}", "{_, -1, foo}",
            "!%p1", "%p1|%p2", "{%r1, %r2}|_", "r0|p"]


@settings(max_examples=800, deadline=None)
@given(st.lists(st.sampled_from(OPERANDS), max_size=5))
def test_well_formed_operand_lists_take_the_fast_path_with_the_grammars_tree(operands):
    from ptxlint.parse.lexer import TOKEN_RE
    texts = TOKEN_RE.findall("add.s32 " + ", ".join(operands) + ";")
    assert _agree(texts) is True


def test_headers_assembled_parameter_by_parameter_are_the_grammars_tree():
    headers, taken = 0, 0
    for path in SAMPLES:
        for texts in _statements(path):
            if grammar._element_for(texts, "stmt") is not grammar.HEADER:
                continue
            headers += 1
            fast = grammar._header_by_parameter(texts)
            slow = grammar._parse(texts, "stmt")
            if fast is None:
                continue
            taken += 1
            assert not isinstance(slow, SyntaxProblem), " ".join(texts)
            assert _normal(fast) == _normal(slow), " ".join(texts)
    assert taken > 0.8 * headers, (taken, headers)


PARAMS = [".param .u64 a", ".param .u64 .ptr .global .align 8 b", ".param .align 16 .b8 c [ 32 ]",
          ".param .u32 d [ 2 ] [ 3 ]", ".param .f32 e", ".reg .b32 r", ".param .u64 f [ ]",
          ".param .b8 g [ 4 * 2 ]", ".param .u32", ".param x", "%r1"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PARAMS), min_size=1, max_size=5),
       st.sampled_from([".visible .entry k", ".entry k", ".func f", ".func ( .reg .b32 r ) f",
                        ".weak .func ( .param .b64 r ) g"]),
       st.sampled_from(["", ".maxntid 256 , 1 , 1", ".reqntid 128", ";"]))
def test_generated_headers_get_the_grammars_tree_or_go_to_the_grammar(params, head, tail):
    from ptxlint.parse.lexer import TOKEN_RE
    texts = TOKEN_RE.findall(f"{head} ( {' , '.join(params)} ) {tail}")
    fast = grammar._header_by_parameter(texts)
    slow = grammar._parse(texts, "stmt")
    if isinstance(slow, SyntaxProblem):
        assert fast is None
    elif fast is not None:
        assert _normal(fast) == _normal(slow)
