"""The abstract value of a register: a reduced product of four domains.

- `si`: the strided value set (`strided.StridedInterval`);
- `aff`: the thread-affine form (`affine.Affine`), which also says warp-uniformity;
- `cong`: the power-of-two congruence (`align.Congruence`), for alignment proofs;
- `region`: provenance (`space.Region`) or None.

When `region` names an object, `si`, `aff` and `cong` describe the byte *offset* from
the start of that object; otherwise they describe the value itself (for an address of
unknown object: the absolute address, whose uniform base is unknown). Converting an
offset into an absolute address (`absolute`) keeps the lane coefficients and the
alignment (the object's alignment, known from its declaration or assumed) and forgets
the base.

`reduce()` shares facts between the components (crab's interval-congruence idea):
- an empty component empties the value;
- the affine form's range and the congruence narrow the value set;
- a finite value set narrows the form's base: a warp's base is one of its values minus
  what the lanes add (``i = tid.x + 128*k`` below 256 in a block of 128: k is 0 or 1);
  not a modular form's (`Affine.is_modular`: known modulo 2^w only, whose lanes may
  wrap between two values of the set, so no integer base need exist);
- a value set with one element is the same in every lane: the form becomes uniform;
- the value set's stride gives a congruence.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .affine import HARDWARE, Affine, ThreadBounds, apply_uniform_op
from .align import Congruence
from .interning import InternTable, new_instance, set_field
from .lattice import Tri
from .space import Region, join_regions, region_leq
from .strided import StridedInterval as SI
from .strided import memoized

_TOP_SI = SI.top()
_ZERO_SI = SI.const(0)


#: the components (by identity) -> the instance (`interning.py`)
_CACHE = InternTable(1 << 17)
_CONSTS: dict[int, "Value"] = {}  # Value.const
_new, _set = new_instance, set_field


@dataclass(frozen=True, init=False, eq=False)
class Value:
    """``Value(si, aff, cong, region=None)``; ``is_bottom`` and ``is_top`` are computed
    at construction, ``reduce`` remembers its last answer."""

    __slots__ = ("si", "aff", "cong", "region", "is_bottom", "is_top", "_hash", "_reduced")

    si: SI
    aff: Affine
    cong: Congruence
    region: Region | None

    def __new__(cls, si: SI, aff: Affine, cong: Congruence,
                region: Region | None = None) -> "Value":
        # keyed by identity (cheap to hash); the cached value keeps its components alive
        key = (id(si), id(aff), id(cong), id(region))
        hit = _CACHE.get(key)
        if hit is not None and cls is Value:
            return hit
        self = _new(cls)
        _set(self, "si", si)
        _set(self, "aff", aff)
        _set(self, "cong", cong)
        _set(self, "region", region)
        _set(self, "is_bottom", si.is_bottom or aff.is_bottom or cong.is_bottom)
        _set(self, "is_top", si.is_top and aff.varying and cong.bits == 0 and region is None)
        _set(self, "_hash", hash((si, aff, cong, region)))
        _set(self, "_reduced", None)
        if cls is Value:
            _CACHE.keep(key, self)
        return self

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.si == other.si and self.aff == other.aff and self.cong == other.cong
                and self.region == other.region)

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self):
        return (type(self), (self.si, self.aff, self.cong, self.region))

    # ---------------------------------------------------------------- constructors
    @staticmethod
    def top() -> "Value":
        return TOP

    @staticmethod
    def bottom() -> "Value":
        return BOTTOM

    @staticmethod
    def uniform_top() -> "Value":
        """Unknown, but the same in every lane of a warp."""
        return UNIFORM_TOP

    @staticmethod
    def const(x: int) -> "Value":
        hit = _CONSTS.get(x)
        if hit is None:
            if len(_CONSTS) > 1 << 14:
                _CONSTS.clear()
            hit = _CONSTS[x] = Value(SI.const(x), Affine.const(x), Congruence.const(x))
        return hit

    @staticmethod
    def of_set(si: SI, uniform: bool = False) -> "Value":
        aff = Affine.uniform(si) if uniform or si.is_singleton else Affine.top()
        return Value(si, aff, Congruence.of_interval(si)).reduce()

    @staticmethod
    def of_affine(aff: Affine, bounds: ThreadBounds = HARDWARE) -> "Value":
        return Value(_TOP_SI, aff, Congruence.top()).reduce(bounds)

    @staticmethod
    def pointer(region: Region, align: int = 1) -> "Value":
        """The start of an object: offset 0 (its alignment travels with absolute())."""
        return Value(SI.const(0), Affine.const(0), Congruence.const(0), region)

    # ---------------------------------------------------------------- queries
    # ``is_bottom`` (some component is empty) and ``is_top`` (nothing known, no region)
    # are computed at construction.

    @property
    def is_uniform(self) -> bool:
        return self.aff.is_uniform

    def singleton(self) -> int | None:
        return self.si.singleton()

    def __str__(self) -> str:
        parts = [str(self.si)]
        if not self.aff.is_top and not (self.aff.is_uniform and self.si.is_singleton):
            parts.append(f"lanes {self.aff}")
        elif self.aff.is_top:
            parts.append("varying")
        if self.region is not None:
            parts.insert(0, f"{self.region} +")
        return " ".join(parts)

    # ---------------------------------------------------------------- lattice
    def leq(self, other: "Value") -> bool:
        if self is other or self.is_bottom:
            return True
        if other.is_bottom:
            return False
        if self.region != other.region:
            if not region_leq(self.region, other.region):
                return False
            return self.absolute().leq(other) if other.region is None or \
                other.region.obj is None else False
        return self.si.leq(other.si) and self.aff.leq(other.aff) and self.cong.leq(other.cong)

    def join(self, other: "Value") -> "Value":
        if self is other or other.is_bottom:
            return self
        if self.is_bottom:
            return other
        a, b = self, other
        if a.region != b.region:
            region = join_regions(a.region, b.region)
            a, b = a.absolute(region), b.absolute(region)
        else:
            region = a.region
        return Value(a.si.join(b.si), a.aff.join(b.aff), a.cong.join(b.cong), region)

    def widen(self, newer: "Value", thresholds=(), eager: bool = True) -> "Value":
        """`self` is the old value, `newer` the join of old and new. Component-wise,
        except that the form's base jumps to infinity with the value set (else it would
        grow by one loop step per visit until its own trigger). `eager`: as in
        `StridedInterval.widen`."""
        if self.is_bottom:
            return newer
        a, b = self, newer
        if a.region != b.region:
            region = join_regions(a.region, b.region)
            a, b = a.absolute(region), b.absolute(region)
        else:
            region = a.region
        si, aff = a.si.widen(b.si, thresholds, eager), a.aff.widen(b.aff, thresholds, eager)
        if aff.coeffs and (si.hi is None and a.si.hi is not None
                           or si.lo is None and a.si.lo is not None):
            # the values jumped to infinity: the lanes' base must not crawl behind them,
            # one step per visit, on the side it grows
            base, old = aff.base, a.aff.base
            if base.stride and ((base.hi != old.hi and base.hi is not None)
                                or (base.lo != old.lo and base.lo is not None)):
                base = SI(None if base.lo != old.lo else base.lo,
                          None if base.hi != old.hi else base.hi, base.stride, base.residue)
                aff = Affine(base, aff.coeffs)
        return Value(si, aff, a.cong.join(b.cong), region)

    def narrow(self, newer: "Value") -> "Value":
        if self.region != newer.region:
            return self
        return Value(self.si.narrow(newer.si), self.aff.narrow(newer.aff), self.cong,
                     self.region).reduce()

    def meet_si(self, si: SI) -> "Value":
        """Restrict the value set (branch refinement); keeps the other components."""
        return Value(self.si.meet(si), self.aff, self.cong, self.region).reduce()

    def restrict(self, readings: SI, w: int, signed: bool) -> "Value":
        """Keep the values whose (w, signed) reading lies in `readings` (branch
        refinement: the set is re-read in this value's own view, `SI.restrict`)."""
        si = self.si.restrict(readings, w, signed)
        if si is self.si:
            return self
        return Value(si, self.aff, self.cong, self.region).reduce()

    def absolute(self, region: Region | None = None, align: int = 1) -> "Value":
        """This value as an absolute address in `region` (whose object is unknown):
        the lane coefficients stay, the uniform base becomes unknown."""
        if self.region is None or self.region.obj is None:
            return Value(self.si, self.aff, self.cong, region)
        aff = self.aff if self.aff.is_top else Affine(_TOP_SI, self.aff.coeffs)
        # address = object base (a multiple of `align`) + offset
        cong = self.cong.add(Congruence(_align_bits(align), 0)) if align > 1 else Congruence.top()
        return Value(_TOP_SI, aff, cong, region)

    def numeric(self) -> "Value":
        """The value as a plain number (for a pointer: its address, base unknown)."""
        return self if self.region is None else self.absolute(None)

    def with_uniformity(self, uniform: bool) -> "Value":
        """Forget the lane form, keeping only whether the value is uniform."""
        aff = Affine.uniform(self.aff.base if self.aff.is_uniform else _TOP_SI) \
            if uniform else Affine.top()
        return Value(self.si, aff, self.cong, self.region)

    def varying(self) -> "Value":
        """The same values, but possibly different in each lane (control divergence)."""
        if self.aff.is_top:
            return self
        return Value(self.si if not self.si.is_top else self.aff.range(), Affine.top(),
                     self.cong, self.region)

    def reduce(self, bounds: ThreadBounds = HARDWARE) -> "Value":
        last = self._reduced
        if last is not None and last[0] is bounds:
            return last[1]
        out = self._reduce(bounds)
        _set(self, "_reduced", (bounds, out))
        return out

    def _reduce(self, bounds: ThreadBounds) -> "Value":
        si, aff, cong = self.si, self.aff, self.cong
        if si.is_bottom or aff.is_bottom or cong.is_bottom:
            return BOTTOM
        # The components may read the same bits in different views ({255} and a uniform
        # {-1} at 8 bits): an empty intersection then means "different readings", not
        # "unreachable", so a meet is only kept when it is not empty.
        if not aff.is_top:
            si = _meet_or_keep(si, aff.range(bounds))
            if aff.coeffs and not aff.is_modular and si.is_finite:
                # and back: the warp's base is a value minus what the lanes add to it
                # (so a loop counter `i = tid.x + 128*k`, bounded by its exit test,
                # bounds k too)
                lanes = Affine(_ZERO_SI, aff.coeffs).range(bounds)
                base = _meet_or_keep(aff.base, si.math_add(lanes.math_neg()))
                if base is not aff.base:
                    aff = Affine(base, aff.coeffs)
        if not cong.is_top:
            si = _meet_or_keep(si, cong.as_strided())
        if si.is_singleton and not aff.is_uniform:
            aff = Affine.uniform(si)
        elif aff.is_uniform and not si.is_top:
            aff = Affine.uniform(_meet_or_keep(aff.base, si))
        met = cong.meet(Congruence.of_interval(si))
        cong = cong if met.is_bottom else met
        if (si is self.si and aff is self.aff and cong is self.cong):
            return self
        return Value(si, aff, cong, self.region)


def _meet_or_keep(a: SI, b: SI) -> SI:
    met = a.meet(b)
    return a if met.is_bottom else met


def _align_bits(n: int) -> int:
    return max(0, (n & -n).bit_length() - 1)


# Joins and refinements of register values, remembered (`strided.memoized`).
for _name in ("join", "leq", "meet_si", "restrict", "varying"):
    setattr(Value, _name, memoized(getattr(Value, _name)))
del _name

TOP = Value(_TOP_SI, Affine.top(), Congruence.top())
BOTTOM = Value(SI.bottom(), Affine.bottom(), Congruence.bottom())
UNIFORM_TOP = Value(_TOP_SI, Affine.uniform(_TOP_SI), Congruence.top())


def uniform_result(si: SI, *inputs: Value) -> Value:
    """A result whose lane form is unknown: uniform when every input is."""
    uniform = all(v.is_uniform for v in inputs)
    return Value(si, Affine.uniform(si) if uniform else Affine.top(),
                 Congruence.of_interval(si)).reduce()


def lift_si(op: Callable[..., SI], *inputs: Value, **kw) -> Value:
    """Apply a value-set operation to plain numbers; provenance is lost."""
    si = op(*(v.numeric().si for v in inputs), **kw)
    return uniform_result(si, *inputs)


def tri_of(v: Value) -> Tri:
    """A predicate value as three-valued truth."""
    if v.is_bottom:
        return Tri.MAYBE
    if not v.si.contains(0):
        return Tri.TRUE
    if v.si.singleton() == 0:
        return Tri.FALSE
    return Tri.MAYBE


__all__ = ["Value", "TOP", "BOTTOM", "UNIFORM_TOP", "uniform_result", "lift_si", "tri_of",
           "apply_uniform_op"]
