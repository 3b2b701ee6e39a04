"""What a run shows: per memory instruction, the sectors each warp request touches and
the shared-memory bank conflicts it causes; and events: out-of-bounds and misaligned
accesses, `.uni` branches and calls whose lanes disagree, barriers reached by part of a
warp or by threads at different barriers, traps, warp-synchronous instructions missing
lanes of their member mask.

The hardware model is the one of `threads/warp.py` and `arch.py`: a request's cost is
the number of distinct 32-byte sectors its active lanes touch; shared memory has 32 banks
of 4 bytes served 32 words per pass (16 lanes of 8-byte accesses, 8 of 16-byte ones), and
the conflict degree of a pass is the most distinct words one bank serves (the same word
read by many lanes is a broadcast). `sectors_per_request` and `bank_ways` give these for
one warp; the runtime computes them for every warp of an instruction at once.

Observations are compact: one `AccessStats` per memory instruction (requests, sector and
way histograms, the worst warp seen) and at most `event_limit` events per instruction and
kind (counts stay exact). `trace=True` also keeps every warp request's lanes and addresses.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from ..arch import BANK_BYTES, BANKS, SECTOR_BYTES, bank_phase_lanes


# ---- the hardware model, one warp ------------------------------------------------------------
def sectors_per_request(addresses, width: int) -> int:
    """Distinct 32-byte sectors touched by lanes accessing `width` bytes at `addresses`."""
    a = np.asarray(addresses, np.uint64)
    if a.size == 0:
        return 0
    first, last = a // SECTOR_BYTES, (a + np.uint64(max(width, 1) - 1)) // SECTOR_BYTES
    touched = {int(s) for f, z in zip(first, last) for s in range(int(f), int(z) + 1)}
    return len(touched)


def phase_lanes(width: int) -> int:
    return bank_phase_lanes(width)


def bank_ways(addresses, width: int, lanes=None) -> int:
    """The n of an n-way bank conflict: the most distinct 4-byte words one bank serves in
    one pass. `lanes` gives each address's lane (default 0, 1, 2, ...)."""
    a = [int(x) for x in np.asarray(addresses, np.uint64)]
    lanes = list(range(len(a))) if lanes is None else [int(x) for x in lanes]
    per = phase_lanes(width)
    banks: dict[tuple[int, int], set[int]] = {}
    for lane, addr in zip(lanes, a):
        for word in range(addr // BANK_BYTES, (addr + max(width, 1) - 1) // BANK_BYTES + 1):
            banks.setdefault((lane // per, word % BANKS), set()).add(word)
    return max((len(w) for w in banks.values()), default=0)


# ---- the same, vectorised over many warps --------------------------------------------------
def _runs(keys: np.ndarray) -> np.ndarray:
    """Index of the run each element of a non-decreasing array belongs to."""
    start = np.empty(len(keys), bool)
    start[:1] = True
    start[1:] = keys[1:] != keys[:-1]
    return np.cumsum(start) - 1


def warp_sectors(warp: np.ndarray, addr: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """(warp ids, sectors per request) for lanes sorted by warp."""
    first = addr >> np.uint64(5)
    last = (addr + np.uint64(max(width, 1) - 1)) >> np.uint64(5)
    if not (first == last).all():
        first = np.stack([first, last], axis=1).reshape(-1)
        warp = np.repeat(warp, 2)
    run = _runs(warp)
    same = warp[1:] == warp[:-1]
    step = first[1:].astype(np.int64) - first[:-1].astype(np.int64)
    if ((step >= 0) | ~same).all():  # ascending within each warp: count the changes
        new = np.concatenate([[True], (step != 0) | ~same])
    else:
        order = np.lexsort((first, run))
        first, run = first[order], run[order]
        same = run[1:] == run[:-1]
        new = np.concatenate([[True], (first[1:] != first[:-1]) | ~same])
    counts = np.bincount(run, weights=new).astype(np.int64)
    return warp[np.flatnonzero(np.concatenate([[True], warp[1:] != warp[:-1]]))], counts


def warp_bank_ways(warp: np.ndarray, lane: np.ndarray, addr: np.ndarray,
                   width: int) -> tuple[np.ndarray, np.ndarray]:
    """(warp ids, worst bank conflict per request) for lanes sorted by warp; `addr` are
    shared-space addresses (below 2^32)."""
    word0 = (addr >> np.uint64(2)).astype(np.int64)
    lastw = ((addr + np.uint64(max(width, 1) - 1)) >> np.uint64(2)).astype(np.int64)
    span = int((lastw - word0).max()) + 1
    words = word0[:, None] + np.arange(span)[None, :]
    valid = (words <= lastw[:, None]).reshape(-1)
    rows = (warp.astype(np.int64) * 64 + lane.astype(np.int64) // phase_lanes(width))
    rows = np.repeat(rows, span)[valid]
    # shared addresses are 32 bits: the word after 0xFFFFFFFC is word 0 again
    words = words.reshape(-1)[valid] & ((1 << 30) - 1)
    run = _runs(rows)
    run_first = np.flatnonzero(np.concatenate([[True], run[1:] != run[:-1]]))
    run_warp = rows[run_first] // 64
    same = run[1:] == run[:-1]
    step = words[1:] - words[:-1]
    consecutive = ((step == 1) | ~same).all() and (np.bincount(run) <= BANKS).all()
    if consecutive or ((step == 0) | ~same).all():  # distinct banks, or one broadcast word
        ways = np.ones(len(run_first), np.int64)
    else:
        key = (run << 40) | ((words & (BANKS - 1)) << 35) | (words - words.min())
        group = np.unique(key) >> 35  # one entry per distinct (pass, bank, word)
        banks, per_bank = np.unique(group, return_counts=True)
        ways = np.zeros(len(run_first), np.int64)
        np.maximum.at(ways, banks >> 5, per_bank)
    wstart = np.flatnonzero(np.concatenate([[True], run_warp[1:] != run_warp[:-1]]))
    return run_warp[wstart], np.maximum.reduceat(ways, wstart)


# ---- records ---------------------------------------------------------------------------------
@dataclass
class AccessStats:
    """One memory instruction: how its warp requests went."""

    pc: int
    line: int | None
    text: str
    kind: str  # load, store, atomic
    width: int  # bytes per lane
    requests: int = 0
    lanes: int = 0
    spaces: Counter = field(default_factory=Counter)
    sectors: Counter = field(default_factory=Counter)  # sectors per request -> requests
    ways: Counter = field(default_factory=Counter)  # shared: conflict degree -> requests
    worst_sectors: dict | None = None
    worst_ways: dict | None = None

    @property
    def max_sectors(self) -> int:
        return max(self.sectors, default=0)

    @property
    def max_ways(self) -> int:
        return max(self.ways, default=0)

    def to_dict(self) -> dict:
        return {"pc": self.pc, "line": self.line, "instruction": self.text, "kind": self.kind,
                "width": self.width, "requests": self.requests, "lanes": self.lanes,
                "spaces": dict(self.spaces), "sectors": dict(sorted(self.sectors.items())),
                "ways": dict(sorted(self.ways.items())), "max_sectors": self.max_sectors,
                "max_ways": self.max_ways, "worst_sectors": self.worst_sectors,
                "worst_ways": self.worst_ways}


@dataclass
class Event:
    kind: str
    pc: int | None
    line: int | None
    text: str
    message: str
    details: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"kind": self.kind, "pc": self.pc, "line": self.line, "instruction": self.text,
                "message": self.message, **self.details}


@dataclass
class Observations:
    accesses: dict[int, AccessStats] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    event_counts: Counter = field(default_factory=Counter)  # (kind, pc) -> count
    traces: list[dict] = field(default_factory=list)

    def count(self, kind: str) -> int:
        return sum(n for (k, _pc), n in self.event_counts.items() if k == kind)

    def of_kind(self, kind: str) -> list[Event]:
        return [e for e in self.events if e.kind == kind]

    def to_dict(self) -> dict:
        return {"accesses": [a.to_dict() for a in sorted(self.accesses.values(), key=lambda a: a.pc)],
                "events": [e.to_dict() for e in self.events],
                "event_counts": {f"{k}@{pc}": n for (k, pc), n in sorted(
                    self.event_counts.items(), key=lambda kv: (kv[0][0], kv[0][1] or -1))}}
