"""The lexer's one-line fast paths (a whole statement on its line, a lone brace, a
`.loc` line kept whole) must cut statements exactly as its general state machine does."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ptxlint.parse.lexer import TOKEN_RE, Statement, _Splitter, blank_comments, split_statements

FRAGMENTS = ["{", "}", ";", " ", "\t", "\n", ",", ":", "::", "[a]", "(", ")",
             "mov.u32 %r1, 1", "ld.shared.v4.u32 {%r1, %r2, %r3, %r4}, [x]", "{%r1, %r2}",
             ".reg .b32 %r<3>", ".global .u32 a[2] = {1, 2}", ".visible .entry k()",
             ".func f()", "L1:", "$L__BB0_1:", ".loc 1 2 3", ".loc\t3 140 5, function_name f, "
             "inlined_at 2 112 5", ".loc 1 x", ".file 1 \"a.cu\"", "\"s\"", "@%p1 bra L1",
             "// c", "/* c */", "ret"]


class _General(_Splitter):
    """Every line through the state machine (`slow_line`)."""

    def run(self):
        pos = 0
        for lineno, line in enumerate(self.code.split("\n"), 1):
            start, pos = pos, pos + len(line) + 1
            if line.strip():
                self.slow_line(line, start, lineno)
                if self.line_directive and self.cur:
                    self.flush()
        if self.cur:
            self.flush()
        yield from self.out


def _tokens(s: Statement) -> tuple:
    texts = TOKEN_RE.findall(s.texts[0]) if s.kind == "loc" else s.texts
    return ("stmt" if s.kind == "loc" else s.kind, texts, s.start, s.end, s.line, s.col)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=14))
def test_fast_paths_agree_with_the_state_machine(parts: list[str]):
    code = blank_comments("".join(parts))
    assert [_tokens(s) for s in split_statements(code)] == \
        [_tokens(s) for s in _General(code).run()]


def test_a_loc_line_is_kept_whole_and_vector_braces_stay_in_their_statement():
    code = "\t.loc\t1 7 3\n\tld.shared.v2.u32 {%r1, %r2}, [x];\n{\n}\n"
    kinds = [(s.kind, s.texts) for s in split_statements(code)]
    assert kinds == [("loc", [".loc\t1 7 3"]),
                     ("stmt", ["ld.shared.v2.u32", "{", "%r1", ",", "%r2", "}", ",", "[",
                               "x", "]", ";"]),
                     ("open", ["{"]), ("close", ["}"])]


def test_a_brace_after_a_line_directive_closes_its_scope():
    kinds = [(s.kind, s.texts) for s in split_statements("\t.loc 1 2 3 }\n")]
    assert kinds == [("stmt", [".loc", "1", "2", "3"]), ("close", ["}"])]


def test_a_name_before_a_double_colon_is_no_label():
    assert [s.kind for s in split_statements("L1::x;\nL2: ret;\n")] == \
        ["stmt", "label", "stmt"]


def _blank_by_sub(text: str) -> str:
    """What `blank_comments` must return: every match of the comment expression, left
    to right, blanked (strings kept), as `re.sub` finds them."""
    from ptxlint.parse.lexer import _COMMENT_RE, _NOT_NEWLINE

    def blank(m):
        s = m.group()
        return s if s[0] == '"' else _NOT_NEWLINE.sub(" ", s)
    return _COMMENT_RE.sub(blank, text)


COMMENT_FRAGMENTS = ['"', "/", "*", "//", "/*", "*/", "@", "@@", "@@DWARF", "\\", "\n", " ",
                     "a", "%r1", ";", '"s"', "x/y"]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(COMMENT_FRAGMENTS), max_size=20))
def test_blank_comments_finds_the_matches_sub_would(parts):
    text = "".join(parts)
    assert blank_comments(text) == _blank_by_sub(text)
