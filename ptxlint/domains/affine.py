"""Thread-affine forms: ``base + cx*tid.x + cy*tid.y + cz*tid.z + cl*laneid``.

The form says how a register varies across the threads of one warp. ``base`` and every
coefficient are strided intervals of *warp-uniform* values: in one execution every lane of
the warp sees the same base and the same coefficients (a known int is a singleton; an
unknown but uniform factor such as ``%ntid.x`` is a wider set). A form without coefficients
is uniform. Top is "varying, no form"; bottom is unreachable.

Wrap-around. The form is evaluated over the mathematical integers, which is faithful only
while its value does not wrap at the register width. Every operation on non-uniform forms
therefore takes the width ``w`` and the ``ThreadBounds`` and checks that the form's range
lies inside one w-bit view (signed or unsigned); if not, it retries with base and
coefficients re-read modulo 2^w (same bits, different integers). When no reading fits, the
form is kept *modulo 2^w* (`wrapped`): the base becomes unknown (top) and only the lanes'
differences are claimed, ``lane value = b + sum(c * index) (mod 2^w)`` for one uniform b,
which is all a warp's access pattern needs (banks and sectors repeat every 2^w bytes).
A form whose base is top is such a *modular* form (`is_modular`); it is kept only while
the lanes' part ``sum(c * index)`` itself fits the signed w-bit view, so two lanes whose
integer offsets differ also differ modulo 2^w. Its range is unknown, so nothing that needs
the integer value (an extension to a wider register, a bound) can use it, and only a
meet or a narrowing with an integer claim about the same register turns it back into
one. The usual source: a pointer carried round a loop, ``q = q + c``, whose uniform base
widening sent to infinity (``p0 + 4*W*tid.x`` plus an unbounded number of steps) while
the lanes' stride stays.
Uniform forms are plain strided intervals and use their wrapping transfer functions.

What stays affine (STYLE.md section 4): sums, differences, negation, products with a
uniform factor and shifts by constants. Everything else (bit operations, ``min``/``max``,
``abs``, products of two varying values) goes through ``apply_uniform_op``: uniform when all
inputs are, top otherwise. Ocelot's affine analysis takes ``abs`` of strides, which is
unsound (``abs(tid.x - 16)`` is not ``16 + tid.x``); we don't.

Order. ``leq`` compares forms structurally (same coefficients, smaller base), which is
finer than inclusion of per-thread values: two different forms can describe the same
values (``tid.x`` and ``laneid`` in a block of 32 threads). Consequently ``meet`` is not a
greatest lower bound: for different forms it cannot claim "empty" and keeps ``self``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

from .interning import InternTable, new_instance, set_field
from .strided import StridedInterval as SI
from .strided import memoized

INDICES = ("tid.x", "tid.y", "tid.z", "laneid")
_ZERO = SI.const(0)
_TOP_SI = SI.top()
Coeffs = tuple[tuple[str, SI], ...]


@dataclass(frozen=True)
class ThreadBounds:
    """Ranges of the thread indices; the defaults are the hardware limits."""

    tid_x: SI = field(default_factory=lambda: SI.range(0, 1023))
    tid_y: SI = field(default_factory=lambda: SI.range(0, 1023))
    tid_z: SI = field(default_factory=lambda: SI.range(0, 63))
    laneid: SI = field(default_factory=lambda: SI.range(0, 31))

    @classmethod
    def for_block(cls, x: int, y: int = 1, z: int = 1) -> ThreadBounds:
        """Bounds for a known block shape."""
        lanes = min(32, x * y * z)
        return cls(SI.range(0, x - 1), SI.range(0, y - 1), SI.range(0, z - 1),
                   SI.range(0, lanes - 1))

    def of(self, name: str) -> SI:
        return getattr(self, name.replace(".", "_"))


HARDWARE = ThreadBounds()


_INDEX_ORDER = {name: i for i, name in enumerate(INDICES)}


def _normal_coeffs(coeffs: Sequence[tuple[str, SI]]) -> Coeffs:
    names = [n for n, _ in coeffs]
    if len(set(names)) != len(names) or not set(names) <= set(INDICES):
        raise ValueError(f"coefficients must name distinct indices among {INDICES}")
    kept = [(n, c) for n, c in coeffs if c != _ZERO]
    return tuple(sorted(kept, key=lambda nc: _INDEX_ORDER[nc[0]]))


def _fits(si: SI, w: int) -> bool:
    return si.fits(w, False) or si.fits(w, True)


#: arguments -> (the normal instance, what keeps the `id` in the key alive)
_CACHE = InternTable(1 << 17)
_new, _set = new_instance, set_field


@dataclass(frozen=True, init=False, eq=False)
class Affine:
    """A thread-affine form; construct with ``uniform``, ``const``, ``var``, ``top``.

    ``Affine(base, coeffs=(), varying=False)`` normalises its arguments; instances are
    interned and remember their last ``range`` (per bounds object).
    """

    __slots__ = ("base", "coeffs", "varying", "is_top", "is_bottom", "is_uniform", "_hash",
                 "_range")

    base: SI
    coeffs: Coeffs
    varying: bool  # top: "varying, no form"

    def __new__(cls, base: SI, coeffs: Coeffs = (), varying: bool = False) -> Affine:
        if coeffs.__class__ is not tuple:
            coeffs = tuple(coeffs)
        key = (id(base), coeffs, varying)  # the entry keeps `base` alive
        hit = _CACHE.get(key)
        if hit is not None and cls is Affine:
            return hit[0]
        raw = base
        if varying:
            base, coeffs = SI.top(), ()
        elif base.is_bottom or any(c.is_bottom for _, c in coeffs):
            base, coeffs = SI.bottom(), ()
        elif coeffs:
            coeffs = _normal_coeffs(coeffs)
        out = cls._make(base, coeffs, bool(varying))
        if cls is Affine:
            _CACHE[key] = (out, raw)
        return out

    @classmethod
    def _make(cls, base: SI, coeffs: Coeffs, varying: bool) -> Affine:
        """The instance for fields already in normal form."""
        key = (id(base), coeffs, varying)
        hit = _CACHE.get(key)
        if hit is not None and cls is Affine:
            return hit[0]
        self = _new(cls)
        _set(self, "base", base)
        _set(self, "coeffs", coeffs)
        _set(self, "varying", varying)
        _set(self, "is_top", varying)
        _set(self, "is_bottom", base.is_bottom)
        _set(self, "is_uniform", not varying and not coeffs)
        _set(self, "_hash", hash((base, coeffs, varying)))
        _set(self, "_range", None)
        if cls is Affine:
            _CACHE.keep(key, (self, base))
        return self

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.base == other.base and self.coeffs == other.coeffs
                and self.varying == other.varying)

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self):
        return (type(self), (self.base, self.coeffs, self.varying))

    # ---------------------------------------------------------------- constructors
    @classmethod
    def bottom(cls) -> Affine:
        return _BOTTOM if cls is Affine else cls(SI.bottom())

    @classmethod
    def top(cls) -> Affine:
        return _TOP if cls is Affine else cls(SI.top(), (), True)

    @classmethod
    def uniform(cls, si: SI) -> Affine:
        return cls(si)

    @classmethod
    def const(cls, x: int) -> Affine:
        return cls(SI.const(x))

    @classmethod
    def var(cls, name: str) -> Affine:
        """The index register itself, e.g. ``var('tid.x')``."""
        return cls(_ZERO, ((name, SI.const(1)),))

    # ---------------------------------------------------------------- queries
    @property
    def is_modular(self) -> bool:
        """A lane form known modulo 2^w only: coefficients, but no base (see `wrapped`)."""
        return bool(self.coeffs) and self.base.is_top

    # ``is_top`` (= ``varying``), ``is_bottom`` and ``is_uniform`` (same value in every
    # lane of a warp, vacuously true for bottom) are computed at construction.

    def coeff(self, name: str) -> SI:
        """The set of possible (uniform) coefficients of an index; 0 when absent."""
        return dict(self.coeffs).get(name, _ZERO)

    def stride_of(self, name: str) -> int | None:
        """The coefficient of ``name`` when it is one known int, else None."""
        return None if self.varying else self.coeff(name).singleton()

    def range(self, bounds: ThreadBounds = HARDWARE) -> SI:
        """All values the form takes over the threads in ``bounds`` (integers, unwrapped)."""
        if self.varying:
            return SI.top()
        if not self.coeffs:
            return self.base
        last = self._range
        if last is not None and last[0] is bounds:
            return last[1]
        out = self.base
        for name, c in self.coeffs:
            out = out.math_add(c.math_mul(bounds.of(name)))
        _set(self, "_range", (bounds, out))
        return out

    def evaluate(self, tid: tuple[int, int, int], laneid: int) -> SI:
        """The values one concrete thread may see (a set: base and coefficients are sets)."""
        bounds = ThreadBounds(*(SI.const(t) for t in tid), SI.const(laneid))
        return self.range(bounds)

    def __str__(self) -> str:
        if self.varying or self.is_bottom:
            return "varying" if self.varying else "bottom"
        terms = [] if self.base == _ZERO and self.coeffs else [str(self.base)]
        terms += [f"{c}*{n}" if c.singleton() != 1 else n for n, c in self.coeffs]
        return " + ".join(terms)

    # ---------------------------------------------------------------- lattice
    def leq(self, other: Affine) -> bool:
        if self.is_bottom or other.varying:
            return True
        if self.varying or other.is_bottom or self.coeffs != other.coeffs:
            return False
        return self.base.leq(other.base)

    def join(self, other: Affine) -> Affine:
        """Equal coefficients: join the bases; different ones: top."""
        if self.is_bottom or other.varying:
            return other
        if other.is_bottom or self.varying:
            return self
        if self.coeffs != other.coeffs:
            return Affine.top()
        return Affine(self.base.join(other.base), self.coeffs)

    def meet(self, other: Affine) -> Affine:
        """Sound but not a glb (see module docstring): exact only for equal known forms."""
        if self.is_bottom or other.is_bottom:
            return Affine.bottom()
        if self.varying or other.varying:
            return other if self.varying else self
        known = all(c.is_singleton for _, c in self.coeffs)
        if self.coeffs == other.coeffs and known:
            # same known coefficients: the two bases are the same number in each execution
            return Affine(self.base.meet(other.base), self.coeffs)
        return self

    def widen(self, other: Affine, thresholds: Sequence[int] = (), eager: bool = True) -> Affine:
        joined = self.join(other)
        if joined.varying or joined.is_bottom or self.is_bottom:
            return joined
        return Affine(self.base.widen(joined.base, thresholds, eager), joined.coeffs)

    def narrow(self, other: Affine) -> Affine:
        if self.varying or other.is_bottom:
            return other
        if other.varying or self.coeffs != other.coeffs:
            return self
        return Affine(self.base.narrow(other.base), self.coeffs)

    # ---------------------------------------------------------------- operations
    def _fit(self, w: int, signed: bool, bounds: ThreadBounds) -> Affine:
        """The form as an integer claim when some reading of it never wraps at w bits,
        else modulo 2^w (`wrapped`)."""
        if self.varying or self.is_bottom:
            return self
        if not self.coeffs:
            return Affine(self.base.wrap(w, signed))
        reread = tuple((n, c.as_signed(w)) for n, c in self.coeffs)
        if not self.base.is_top:
            for candidate in (self, Affine(self.base.as_signed(w), reread),
                              Affine(self.base.as_unsigned(w), reread)):
                if _fits(candidate.range(bounds), w):
                    return candidate
        return _modular(reread, w, bounds)

    def wrapped(self, w: int, bounds: ThreadBounds = HARDWARE) -> Affine:
        """The form modulo 2^w: the same lane coefficients (re-read as signed w-bit
        numbers) and an unknown uniform base, or top when the lanes' part does not fit
        the signed w-bit view (two lanes could then hold the same bits). Sound for any
        form of a w-bit register: an integer form holds modulo 2^w too."""
        if self.varying or self.is_bottom or not self.coeffs:
            return self  # a uniform form is a set of w-bit values already
        return _modular(tuple((n, c.as_signed(w)) for n, c in self.coeffs), w, bounds)

    def _linear(self, other: Affine, sign: int, w: int, signed: bool,
                bounds: ThreadBounds) -> Affine:
        if self.is_bottom or other.is_bottom:
            return Affine.bottom()
        if self.varying or other.varying:
            return Affine.top()
        if self.is_uniform and other.is_uniform:
            op = self.base.add if sign > 0 else self.base.sub
            return Affine(op(other.base, w, signed))
        names = dict(self.coeffs).keys() | dict(other.coeffs).keys()
        coeffs = tuple((n, self.coeff(n).math_add(other.coeff(n).scale(sign))) for n in names)
        return Affine(self.base.math_add(other.base.scale(sign)), coeffs)._fit(w, signed, bounds)

    def add(self, other: Affine, w: int, signed: bool = False,
            bounds: ThreadBounds = HARDWARE) -> Affine:
        return self._linear(other, 1, w, signed, bounds)

    def sub(self, other: Affine, w: int, signed: bool = False,
            bounds: ThreadBounds = HARDWARE) -> Affine:
        return self._linear(other, -1, w, signed, bounds)

    def neg(self, w: int, signed: bool = False, bounds: ThreadBounds = HARDWARE) -> Affine:
        return Affine.const(0)._linear(self, -1, w, signed, bounds)

    def _scaled(self, factor: SI, w: int, signed: bool, bounds: ThreadBounds) -> Affine:
        """``factor * self`` for a uniform factor: every term scales by the same value."""
        if self.is_uniform:
            return Affine(self.base.mul(factor, w, signed))
        coeffs = tuple((n, c.math_mul(factor)) for n, c in self.coeffs)
        return Affine(self.base.math_mul(factor), coeffs)._fit(w, signed, bounds)

    def mul_const(self, k: int, w: int, signed: bool = False,
                  bounds: ThreadBounds = HARDWARE) -> Affine:
        return self.mul(Affine.const(k), w, signed, bounds)

    def shl_const(self, n: int, w: int, signed: bool = False,
                  bounds: ThreadBounds = HARDWARE) -> Affine:
        """``shl`` by a known amount; PTX clamps amounts above w, giving 0."""
        if self.is_bottom:
            return self
        return Affine.const(0) if n >= w else self.mul_const(1 << n, w, signed, bounds)

    def mul(self, other: Affine, w: int, signed: bool = False,
            bounds: ThreadBounds = HARDWARE) -> Affine:
        """``mul.lo``: affine when one side is uniform, else top (a product of varying
        values is quadratic in the indices)."""
        if self.is_bottom or other.is_bottom:
            return Affine.bottom()
        for x, y in ((self, other), (other, self)):
            if x.is_uniform and x.base == _ZERO:
                return x  # 0 * anything, even a varying value
        if self.varying or other.varying:
            return Affine.top()
        if other.is_uniform:
            return self._scaled(other.base.wrap(w, signed), w, signed, bounds)
        if self.is_uniform:
            return other._scaled(self.base.wrap(w, signed), w, signed, bounds)
        return Affine.top()

    def mad(self, b: Affine, c: Affine, w: int, signed: bool = False,
            bounds: ThreadBounds = HARDWARE) -> Affine:
        """``mad.lo``: ``self * b + c``."""
        return self.mul(b, w, signed, bounds).add(c, w, signed, bounds)


def _modular(coeffs: Coeffs, w: int, bounds: ThreadBounds) -> Affine:
    """``top + coeffs`` (a modular form) when the lanes' part fits the signed w-bit view,
    else top."""
    lanes = Affine(_ZERO, coeffs)
    if lanes.is_uniform:  # every coefficient a multiple of 2^w: the lanes agree
        return Affine(_TOP_SI)
    if not lanes.range(bounds).fits(w, True):
        return Affine.top()
    return Affine(_TOP_SI, lanes.coeffs)


def apply_uniform_op(f: Callable[..., SI], *args: Affine) -> Affine:
    """Any other operation: uniform if every input is, top otherwise.

    ``f`` maps the inputs' bases (strided intervals) to the result; it covers bit
    operations, ``min``/``max``, ``abs``, shifts by varying amounts and non-uniform
    products, none of which preserves the affine shape.
    """
    if any(a.is_bottom for a in args):
        return Affine.bottom()
    if all(a.is_uniform for a in args):
        return Affine(f(*(a.base for a in args)))
    return Affine.top()


_BOTTOM = Affine(SI.bottom())
_TOP = Affine(SI.top(), (), True)
# Operations on forms, remembered like those of strided intervals (`memoized`).
for _name in ("add", "sub", "neg", "mul", "mul_const", "shl_const", "mad"):
    setattr(Affine, _name, memoized(getattr(Affine, _name), exact=True))
del _name

__all__ = ["Affine", "ThreadBounds", "HARDWARE", "INDICES", "apply_uniform_op"]
