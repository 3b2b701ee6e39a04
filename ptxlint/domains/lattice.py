"""What every value domain of the abstract interpreter offers, and three-valued answers.

The interpreter (``interp/``) is written against these method names only, so a domain can
be swapped or combined into the reduced product without the worklist knowing which it is.
Bottom means "unreachable", top means "anything"; ``leq`` is the domain's order, which may
be finer than inclusion of concretisations (a domain says so in its docstring).
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Protocol, Sequence, runtime_checkable

if TYPE_CHECKING:  # typing.Self is 3.11+, the project supports 3.10
    from typing_extensions import Self


class Tri(enum.Enum):
    """The answer to a comparison over sets of values: always, never, or it depends."""

    TRUE = "true"
    FALSE = "false"
    MAYBE = "maybe"

    @classmethod
    def of(cls, value: bool) -> Tri:
        """The definite answer for a concrete boolean."""
        return cls.TRUE if value else cls.FALSE

    def negate(self) -> Tri:
        """Answer for the negated predicate: MAYBE stays MAYBE."""
        if self is Tri.MAYBE:
            return self
        return Tri.FALSE if self is Tri.TRUE else Tri.TRUE

    def join(self, other: Tri) -> Tri:
        """Answer when either of two situations may hold (used at control-flow merges)."""
        return self if self is other else Tri.MAYBE

    @property
    def possible(self) -> bool:
        """True when the predicate can hold for some execution."""
        return self is not Tri.FALSE

    def __bool__(self) -> bool:
        # A Tri used as a plain bool is almost always a bug (MAYBE would read as true).
        raise TypeError("Tri is three-valued: compare with Tri.TRUE / Tri.FALSE explicitly")


@runtime_checkable
class Lattice(Protocol):
    """The protocol of an abstract domain.

    ``bottom()`` and ``top()`` are classmethods. ``widen(other, thresholds)`` returns an
    upper bound of both operands and guarantees that any increasing chain
    ``x0, x0.widen(x1), ...`` stabilises after finitely many changes; ``narrow(other)``
    returns something between ``other`` and ``self`` when ``other <= self``, and only a
    finite number of narrowing steps can change a value. Thresholds are sorted ints taken
    from loop-exit comparisons; domains without bounds ignore them.
    """

    @classmethod
    def bottom(cls) -> Self: ...

    @classmethod
    def top(cls) -> Self: ...

    @property
    def is_bottom(self) -> bool: ...

    @property
    def is_top(self) -> bool: ...

    def join(self, other: Self) -> Self: ...

    def meet(self, other: Self) -> Self: ...

    def leq(self, other: Self) -> bool: ...

    def widen(self, other: Self, thresholds: Sequence[int] = ()) -> Self: ...

    def narrow(self, other: Self) -> Self: ...
