"""Thread-affine forms: soundness against concrete per-thread arithmetic, and lattice laws.

An execution picks one value for the base and for each coefficient (they are uniform
across the warp) and a thread within the bounds; the form's value there is
``base + sum(coeff * index)`` and the register holds it modulo 2^w. Every operation's
result must contain the concrete result's bits, uniform results must not depend on the
thread, and known coefficients must predict the difference between two threads.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptxlint.domains import INDICES, Affine, StridedInterval as SI, ThreadBounds, apply_uniform_op
from ptxlint.domains.affine import HARDWARE

from .strategies import RNG, holds_bits, intervals, member, u

WIDTHS = [8, 16, 32]


def coefficient_sets():
    small = st.builds(lambda lo, n, k: SI.range(lo, lo + n * k, k),
                      st.integers(-4, 16), st.integers(0, 3), st.integers(1, 4))
    return st.one_of(st.integers(-8, 8).map(SI.const), st.integers(-300, 300).map(SI.const), small)


@st.composite
def forms(draw, w: int = 16):
    kind = draw(st.sampled_from(["uniform", "affine", "affine", "affine", "modular", "top",
                                 "bottom"]))
    if kind == "top":
        return Affine.top()
    if kind == "bottom":
        return Affine.bottom()
    # a modular form (known modulo 2^w: a pointer carried round a loop) has a top base
    base = SI.top() if kind == "modular" else draw(intervals(w, infinite=False, bottom=False))
    if kind == "uniform":
        return Affine.uniform(base)
    names = draw(st.lists(st.sampled_from(INDICES), min_size=1, max_size=4, unique=True))
    return Affine(base, tuple((n, draw(coefficient_sets())) for n in names))


def bounds():
    dims = (st.integers(1, 64), st.integers(1, 8), st.integers(1, 4))
    blocks = st.builds(ThreadBounds.for_block, *dims)
    return st.one_of(st.just(HARDWARE), blocks)


def execution(form: Affine, rnd):
    """Uniform picks for one warp: a base value and one value per coefficient."""
    return member(form.base, rnd), {n: member(c, rnd) for n, c in form.coeffs}


def thread(b: ThreadBounds, rnd):
    return {n: member(b.of(n), rnd) for n in INDICES}


def value(picks, t) -> int:
    base, coeffs = picks
    return base + sum(c * t[n] for n, c in coeffs.items())


def evaluate(form: Affine, t) -> SI:
    return form.evaluate((t["tid.x"], t["tid.y"], t["tid.z"]), t["laneid"])


OPS = {
    "add": (lambda f, g, h, w, b: f.add(g, w, bounds=b), lambda x, y, z, w: x + y),
    "sub": (lambda f, g, h, w, b: f.sub(g, w, True, b), lambda x, y, z, w: x - y),
    "neg": (lambda f, g, h, w, b: f.neg(w, bounds=b), lambda x, y, z, w: -x),
    "mul": (lambda f, g, h, w, b: f.mul(g, w, bounds=b), lambda x, y, z, w: x * y),
    "mad": (lambda f, g, h, w, b: f.mad(g, h, w, bounds=b), lambda x, y, z, w: x * y + z),
    "mul_const": (lambda f, g, h, w, b: f.mul_const(-3, w, bounds=b), lambda x, y, z, w: -3 * x),
    "shl_const": (lambda f, g, h, w, b: f.shl_const(3, w, bounds=b), lambda x, y, z, w: x << 3),
    "shl_clamped": (lambda f, g, h, w, b: f.shl_const(w + 5, w, bounds=b), lambda x, y, z, w: 0),
    "and": (lambda f, g, h, w, b: apply_uniform_op(lambda p, q: p.and_(q, w), f, g),
            lambda x, y, z, w: u(x, w) & u(y, w)),
}


ARITY = {"neg": 1, "mul_const": 1, "shl_const": 1, "shl_clamped": 1, "mad": 3}


def uniform_factor(w):
    return st.one_of(intervals(w, infinite=False, bottom=False).map(Affine.uniform), forms(w))


@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize("w", WIDTHS)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_operations_sound(w, name, data):
    f, h, b = data.draw(forms(w)), data.draw(forms(w)), data.draw(bounds())
    g = data.draw(uniform_factor(w) if name in ("mul", "mad") else forms(w))
    rnd = data.draw(RNG)
    abstract, concrete = OPS[name]
    r = abstract(f, g, h, w, b)
    used = (f, g, h)[:ARITY.get(name, 2)]
    if any(x.is_bottom for x in used):
        return
    if not r.is_top and not r.is_uniform:
        rng = r.range(b)
        # an integer claim never wraps; a modular one (base unknown) keeps lanes apart
        lanes = Affine(SI.const(0), r.coeffs).range(b)
        assert rng.fits(w, False) or rng.fits(w, True) or \
            (r.is_modular and lanes.fits(w, True)), "a kept form must not wrap"
    for _ in range(6):
        # a top input may hold anything, a different value in every thread: None
        picks = [None if x.is_top else execution(x, rnd) for x in used]
        picks += [execution(Affine.const(0), rnd)] * (3 - len(picks))
        results = []
        for _ in range(3):
            t = thread(b, rnd)
            ins = [rnd.randrange(1 << w) if p is None else value(p, t) for p in picks]
            v = u(concrete(*ins, w), w)
            assert holds_bits(evaluate(r, t), v, w), (str(f), str(g), str(h), t, v, str(r))
            assert evaluate(r, t).leq(r.range(b))
            results.append((t, v))
        if r.is_uniform and len(results) > 1:
            assert len({v for _, v in results}) == 1, "uniform result depends on the thread"
        known = not r.is_top and all(c.is_singleton for _, c in r.coeffs)
        if known and len(results) > 1:
            (t1, v1), (t2, v2) = results[:2]
            diff = sum(r.stride_of(n) * (t1[n] - t2[n]) for n, _ in r.coeffs)
            assert u(v1 - v2 - diff, w) == 0, "coefficients mispredict the lane difference"


@settings(max_examples=300)
@given(a=forms(), b=forms(), c=forms())
def test_join_laws(a, b, c):
    j = a.join(b)
    assert j == b.join(a) and a.join(a) == a and j.join(c) == a.join(b.join(c))
    assert a.leq(j) and b.leq(j)
    assert not (a.leq(c) and b.leq(c)) or j.leq(c)
    assert a.leq(b) == (j == b)


@given(a=forms(), b=forms(), bd=bounds(), rnd=RNG)
def test_join_and_range_sound(a, b, bd, rnd):
    j = a.join(b)
    for x in (a, b):
        if x.is_bottom or x.is_top:
            continue
        picks, t = execution(x, rnd), thread(bd, rnd)
        assert evaluate(j, t).contains(value(picks, t))
        assert x.range(bd).contains(value(picks, t))


@given(a=forms(), b=forms())
def test_meet_is_sound_not_glb(a, b):
    """Documented weakening: meet keeps ``self`` unless both forms are the same known one."""
    m = a.meet(b)
    assert m.leq(a) or a.is_top
    if a.coeffs == b.coeffs and not (a.is_top or b.is_top):
        if all(c.is_singleton for _, c in a.coeffs):
            assert m == Affine(a.base.meet(b.base), a.coeffs)


@given(chain=st.lists(forms(), min_size=2, max_size=200))
def test_widening_stabilises(chain):
    x, changes = chain[0], 0
    for y in chain[1:]:
        nxt = x.widen(x.join(y))
        assert x.leq(nxt) and y.leq(nxt)
        changes, x = changes + (nxt != x), nxt
    # as for strided intervals, plus one jump to top when the coefficients disagree
    assert changes <= 38 + 2 + 11 + 1 + 1


def _loop_head(entry: Affine, step: Affine, w: int, b: ThreadBounds) -> tuple[Affine, int]:
    """The value of ``q`` at the head of ``for (...) q = q + step`` entered with
    `entry`, as the fixpoint computes it: two joins, then widening, until it settles."""
    x, visits = entry, 0
    while True:
        joined = x.join(x.add(step, w, bounds=b))
        nxt = joined if visits < 2 else x.widen(joined)
        visits += 1
        if nxt == x:
            return x, visits
        x = nxt


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_pointer_carried_round_a_loop_keeps_its_lanes(data):
    """``q = q + c`` with c uniform (nvcc's strength-reduced ``p[tid*W + i]``): at the
    loop head q keeps the lane coefficients it entered with, settles, and covers every
    trip count: the lanes hold ``entry + c_1 + ... + c_k`` modulo 2^w, one form for the
    whole warp."""
    w, b, rnd = data.draw(st.sampled_from([16, 32])), data.draw(bounds()), data.draw(RNG)
    names = data.draw(st.lists(st.sampled_from(INDICES), min_size=1, max_size=2, unique=True))
    coeffs = tuple((n, SI.const(data.draw(st.integers(-300, 300)))) for n in names)
    base = data.draw(intervals(w, infinite=False, bottom=False))
    entry = Affine(base, coeffs).add(Affine.const(0), w, bounds=b)  # as a transfer made it
    step = data.draw(intervals(w, infinite=False, bottom=False))
    head, visits = _loop_head(entry, Affine.uniform(step), w, b)
    assert visits <= 45, "widening must settle"
    if entry.is_top:
        return
    lanes = Affine(SI.const(0), entry.coeffs).range(b)
    if not lanes.fits(w, True):
        # outside what a modular form claims (its lanes' part must fit the signed w-bit
        # view, so that lanes stay distinct: domains/affine.py): top is the sound answer
        if head.is_top:
            return
    assert head.coeffs == entry.coeffs, (str(entry), str(step), str(head))
    picks = execution(entry, rnd)
    for _ in range(8):
        trips = rnd.randrange(0, 3000)
        moved = sum(member(step, rnd) for _ in range(min(trips, 40))) + \
            (trips - min(trips, 40)) * member(step, rnd)
        t1, t2 = thread(b, rnd), thread(b, rnd)
        v1, v2 = u(value(picks, t1) + moved, w), u(value(picks, t2) + moved, w)
        assert holds_bits(evaluate(head, t1), v1, w), (str(entry), str(head), trips)
        diff = sum(head.stride_of(n) * (t1[n] - t2[n]) for n, _ in head.coeffs)
        assert u(v1 - v2 - diff, w) == 0, "the lane stride must survive the loop"


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_pointer_stepped_by_a_varying_amount_loses_its_form(data):
    """``q = q + c`` where c differs between lanes, or a back edge whose lane
    coefficients differ from the entry's: no single form covers every trip, the head
    goes to top (as before), and widening still settles."""
    w, b = data.draw(st.sampled_from([16, 32])), data.draw(bounds())
    entry = Affine.var("tid.x").mul_const(data.draw(st.integers(1, 64)), w, bounds=b)
    name = data.draw(st.sampled_from(INDICES))
    step = Affine.var(name).mul_const(data.draw(st.sampled_from([-4, 1, 4, 33])), w,
                                      bounds=b)
    if step.is_uniform:  # an index that is 0 everywhere in these bounds
        return
    head, visits = _loop_head(entry, step, w, b)
    assert head.is_top and visits <= 3
    other = Affine.var("tid.x").mul_const(128, w, bounds=b)  # recomputed with another stride
    assert entry.join(other.add(Affine.uniform(SI.range(0, None, 4)), w, bounds=b)).is_top


def test_modular_forms():
    """A form that fits no w-bit view is kept modulo 2^w: its base unknown, its lanes'
    stride kept while the lanes themselves fit; an integer reading wins when one fits."""
    tx = Affine.var("tid.x")
    warp = ThreadBounds.for_block(32)
    row = tx.mul_const(64, 32, bounds=warp)
    assert not row.is_modular and row.base == SI.const(0)
    walked = Affine(SI.range(0, None, 4), row.coeffs)  # the base after widening
    q = walked.add(Affine.const(4), 32, bounds=warp)
    assert q.is_modular and q.stride_of("tid.x") == 64 and q.range(warp).is_top
    assert q.add(Affine.const(4), 32, bounds=warp) == q  # stays put: the loop settles
    assert q.join(row) == q and row.leq(q) and not q.leq(row)
    assert q.meet(row) == row  # an integer claim about the same register wins
    assert q.sub(q, 32, bounds=warp).is_uniform  # the lanes' difference is exact
    # a stride the lanes cannot hold apart modulo 2^16 is no form at all
    assert tx.mul_const(1 << 12, 16, bounds=warp).wrapped(16, warp).is_top
    assert row.wrapped(32, warp) == Affine(SI.top(), row.coeffs)
    # in 64 bits a base aligned past the lanes' span still reads as an integer
    aligned = Affine(SI.range(0, None, 128), (("tid.x", SI.const(4)),))
    assert not aligned.add(Affine.const(128), 64, bounds=warp).is_modular

def test_examples():
    tx, ty = Affine.var("tid.x"), Affine.var("tid.y")
    tile = Affine.uniform(SI.range(0, 4096, 4096))
    addr = tx.mul_const(128, 32).add(tile, 32)
    assert addr.stride_of("tid.x") == 128 and str(addr) == "{0..4096 step 4096} + 128*tid.x"
    assert tx.mul_const(1 << 30, 32).is_top  # wraps at 32 bits for tid.x up to 1023
    assert not tx.mul_const(1 << 30, 32, bounds=ThreadBounds.for_block(4)).is_top
    assert tx.mul_const(0xFFFFFFFF, 32).stride_of("tid.x") == -1  # same bits as -1
    assert tx.sub(tx, 32).is_uniform and tx.sub(tx, 32).base == SI.const(0)
    assert tx.mul(ty, 32).is_top and tx.mul(Affine.const(0), 32) == Affine.const(0)
    assert Affine.top().mul(Affine.const(0), 32) == Affine.const(0)
    ntid = Affine.uniform(SI.range(1, 1024))  # unknown block width: a uniform, unknown factor
    linear = ty.mul(ntid, 32).add(tx, 32)
    assert linear.stride_of("tid.x") == 1 and linear.stride_of("tid.y") is None
    assert linear.coeff("tid.y") == SI.range(1, 1024)
    assert tx.join(tx.add(Affine.const(4), 32)).base == SI.range(0, 4, 4)
    assert tx.join(ty).is_top
    # Ocelot's abs-of-strides is unsound: abs(tid.x - 16) is not affine
    assert apply_uniform_op(lambda a: a.abs(32), tx.sub(Affine.const(16), 32)).is_top
    assert apply_uniform_op(lambda a, b: a.and_(b, 32), tile, Affine.const(255)).is_uniform
    assert tx.range(ThreadBounds.for_block(32)) == SI.range(0, 31)
    assert addr.evaluate((3, 0, 0), 3) == SI.range(384, 4480, 4096)


def test_meet_cannot_trust_bases_when_coefficients_are_sets():
    """With tid.z fixed at 5, ``0 + 1*tid.z`` and ``5 + 0*tid.z`` are the same value 5 and
    both fit ``{0 or 5} + {0..1}*tid.z``; intersecting the bases would claim "empty"."""
    only_z5 = ThreadBounds(tid_z=SI.const(5))
    a = Affine(SI.const(0), (("tid.z", SI.range(0, 1)),))
    b = Affine(SI.const(5), (("tid.z", SI.range(0, 1)),))
    assert a.range(only_z5).contains(5) and b.range(only_z5).contains(5)
    assert a.meet(b).range(only_z5).contains(5)
