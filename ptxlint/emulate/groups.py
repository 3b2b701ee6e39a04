"""Sets of threads at one pc (a *group*): a bool mask over the chunk, its count, and the
sorted thread indices (computed once). A group of every thread of the chunk keeps no
mask at all, so straight-line code over a converged grid never touches one."""
from __future__ import annotations

import numpy as np


class Group:
    __slots__ = ("_idx", "count", "mask", "n")

    def __init__(self, n: int, mask: np.ndarray | None = None, count: int | None = None,
                 idx: np.ndarray | None = None):
        self.n = n
        self.mask = mask
        self._idx = idx
        if count is None:
            count = n if mask is None else (len(idx) if idx is not None else int(mask.sum()))
        self.count = count
        if mask is not None and count == n:
            self.mask, self._idx = None, None

    @classmethod
    def of(cls, n: int, idx: np.ndarray) -> Group:
        """The threads `idx` (sorted) of a chunk of `n`."""
        if len(idx) == n:
            return cls(n)
        mask = np.zeros(n, bool)
        mask[idx] = True
        return cls(n, mask, len(idx), idx)

    @property
    def full(self) -> bool:
        return self.mask is None

    @property
    def idx(self) -> np.ndarray | None:
        """Sorted thread indices; None for the whole chunk."""
        if self.mask is None:
            return None
        if self._idx is None:
            self._idx = np.flatnonzero(self.mask)
        return self._idx

    def threads(self) -> np.ndarray:
        return np.arange(self.n) if self.mask is None else self.idx  # type: ignore[return-value]

    def merge(self, other: Group) -> Group:
        if self.mask is None or other.mask is None:
            return Group(self.n)
        return Group(self.n, self.mask | other.mask, self.count + other.count)

    def split(self, flags: np.ndarray) -> tuple[Group | None, Group | None]:
        """(threads whose flag is set, the others), given one flag per thread."""
        yes = int(np.count_nonzero(flags))
        if yes == self.count:
            return self, None
        if yes == 0:
            return None, self
        t = self.threads()
        taken = t[np.flatnonzero(flags)]
        rest = t[np.flatnonzero(~flags)]
        return Group.of(self.n, taken), Group.of(self.n, rest)
