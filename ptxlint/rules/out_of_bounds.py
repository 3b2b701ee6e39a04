"""`out-of-bounds`: a memory access that may touch bytes outside the object it addresses.

Also home of `memory_sites`, the per-operand view of memory accesses that the
`misaligned-access` and `address-space-mismatch` rules share.
"""
from __future__ import annotations

import bisect

from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import cached_property

from ..diagnostics import Certainty, Diagnostic, Severity
from ..domains.affine import INDICES, ThreadBounds
from ..domains.lattice import Tri
from ..domains.state import State
from ..domains.strided import StridedInterval as SI
from ..domains.value import Value
from ..interp.facts import Access, Facts
from ..interp.transfer import address_value
from ..interp.warp import lanes, warp_count
from ..interp.worklist import FixpointParams
from ..ir.instruction import Instruction
from ..ir.instructions import async_copy, atomic, memory, sync, tensor
from ..ir.module import Variable
from ..ir.operands import Address
from ..ir.traits import MemoryAccess
from ..ir.types import Kind
from .base import Rule, RuleContext
from .replay import Replay
from .sites import running
from .uncoalesced_access import object_name

# Instructions whose address operand is one thread's own access of `access_bytes` bytes
# (warp-cooperative wmma, tensor memory, prefetches and hints are left out).
PER_THREAD = (memory.Ld, memory.Ldu, memory.St, memory.StAsync, atomic.Atom, atomic.Red,
              atomic.RedAsync, sync.Mbarrier, tensor.Ldmatrix, tensor.Stmatrix,
              async_copy.CpAsync, async_copy.CpAsyncBulk, async_copy.CpReduceAsyncBulk)
VERBS = {"load": "load", "store": "store", "atomic": "atomic access", "reduce": "reduction",
         "copy": "copy"}
INDEX_NAMES = {"tid.x": "%tid.x", "tid.y": "%tid.y", "tid.z": "%tid.z", "laneid": "%laneid"}
# An offset range this wide says nothing about the index (it comes from unknown data).
UNINFORMATIVE_SPAN = 1 << 31
# The search's budget is counted in instructions interpreted (`Facts.work`, about 17 us
# each), not seconds, so that the same file gets the same words on every run and machine.
SEARCH_PROBES = 48  # re-analyses per kernel spent looking for a parameter threshold
SEARCH_WORK = 30_000  # ... and the instructions they interpret, at most
# ... and at most this many times the kernel's own analysis (at least SEARCH_FLOOR): a
# probe is a whole analysis, and the search words notes; it must not dominate the lint
SEARCH_RELATIVE = 2.0
SEARCH_FLOOR = 3_000
SEARCH_PROBE_WORK = 3_000  # a kernel whose first probe costs more is not searched
# a probe is also a re-analysis within the kernel's time budget (`RuleContext.deadline`)
PROBE_PARAMS = FixpointParams(rules_only=True, max_work=SEARCH_WORK)
SEARCH_MAX_INSTRUCTIONS = 1000


@dataclass(frozen=True)
class Site:
    """One address operand of a memory instruction: the destination, or for a copy
    also its source."""

    access: Access
    space: str  # the state space the instruction names for this operand
    address: Value
    operand: str = ""  # "source" for the source of a copy

    @property
    def insn(self) -> MemoryAccess:
        return self.access.insn

    @property
    def width(self) -> int:
        return self.insn.access_bytes

    @property
    def verb(self) -> str:
        if self.operand == "source":
            return "copy source read"
        return VERBS.get(self.insn.access_kind, "access")


def memory_sites(facts: Facts) -> Iterator[Site]:
    for acc in facts.accesses:
        insn = acc.insn
        if not isinstance(insn, PER_THREAD):
            continue
        if isinstance(insn, async_copy.AsyncCopy):
            yield Site(acc, insn.dst_space, acc.address)
            src = insn.src_address
            if isinstance(src, Address):
                value = address_value(src, acc.state, facts.ctx)
                if value is not None:
                    yield Site(acc, insn.src_space, value, "source")
        else:
            yield Site(acc, insn.space, acc.address)


def narrowed(facts: Facts, site: Site) -> Site | None:
    """`site` with its address narrowed by the relations that hold at the access (an
    address computed before the guard that bounds its index); None when they say no
    execution reaches it."""
    acc = facts.narrowed(site.access)
    if acc is None or acc is site.access:
        return None if acc is None else site
    if site.operand == "source":
        address = address_value(site.insn.src_address, acc.state, facts.ctx)
    else:
        address = acc.address
    return Site(acc, site.space, address, site.operand)


def declaration(rc: RuleContext, name: str, insn: Instruction) -> Variable | None:
    """The variable `name` as `insn` sees it. Call sequences redeclare `param0` and
    `retval0` in every `{ }` block with different sizes, and `Ctx.variable` keeps one
    per name, so the last declaration before the instruction wins here."""
    found = rc.declarations.get(name)
    if found:
        at = rc.position(insn)
        k = bisect.bisect_left(found[0], at)  # declarations strictly before `insn`
        if k:
            return found[1][k - 1]
    return rc.facts.ctx.variable(name)


def object_size(rc: RuleContext, site: Site, space: str, obj: str) -> tuple[int | None, str]:
    """The byte size of the object an address points into, and where it comes from."""
    var = declaration(rc, obj, site.insn)
    if var is None:
        return None, ""
    if space != "param" and var in rc.kernel.params:  # the buffer a pointer names
        size = rc.launch.extents.get(obj) if rc.launch is not None else None
        return size, "the launch's buffer size"
    if var.byte_size is None and var.space == "shared" and rc.launch is not None:
        return rc.launch.dynamic_smem, "the launch's dynamic shared memory size"
    return var.byte_size, ""


def with_severity(d: Diagnostic, severity: Severity) -> Diagnostic:
    """`Rule.diagnostic` reads a falsy severity as "the rule's default", so a note
    (Severity.NOTE == 0) is set afterwards."""
    return replace(d, severity=severity)


def spaces_agree(site: Site) -> bool:
    r = site.address.region
    return r is not None and site.space in ("generic", r.space)


# ---- the verdict on one site ---------------------------------------------------------------
@dataclass(frozen=True)
class Verdict:
    kind: str  # "clean", "definite", "possible"
    si: SI  # the offsets, in the threads that can run the access
    lo: int | None  # first byte touched (None: unbounded)
    hi: int | None  # last byte touched
    witness: str | None = None  # "`%tid.x` = 255 reaches byte 1024"


def touched(si: SI, width: int) -> tuple[int | None, int | None]:
    if si.is_bottom:
        return 0, -1
    return si.lo, None if si.hi is None else si.hi + width - 1


def is_clean(lo: int | None, hi: int | None, size: int) -> bool:
    return lo is not None and hi is not None and (hi < lo or (lo >= 0 and hi < size))


def path_bounds(state: State, bounds: ThreadBounds) -> ThreadBounds:
    """The thread indices that can reach a program point. A register that is exactly
    `b + c*index` (one index, known b and c) and whose values a branch or guard narrowed
    narrows the index: after `if (threadIdx.x < 64)` on %r1 = %tid.x, an address computed
    from %tid.x before the branch is only used by threads 0..63."""
    ranges = {n: bounds.of(n) for n in INDICES}
    for v in state.regs.values():
        aff, si = v.aff, v.si
        if aff.is_top or len(aff.coeffs) != 1 or not si.is_finite or si.is_bottom:
            continue
        (name, coeff), = aff.coeffs
        c, b = coeff.singleton(), aff.base.singleton()
        if not c or b is None:
            continue
        # b + c*index in [lo, hi]: index from ceil((lo - b) / c) to floor((hi - b) / c),
        # the ends swapped when c < 0
        low, high = (si.lo, si.hi) if c > 0 else (si.hi, si.lo)
        first, last = -((b - low) // c), (high - b) // c
        ranges[name] = ranges[name].meet(SI.range(first, last))
    return ThreadBounds(*(ranges[n] for n in INDICES))


def offsets(site: Site, bounds: ThreadBounds) -> SI:
    """The offsets the address takes in the threads that can run it."""
    v = site.address
    return v.si if v.aff.is_top else v.si.meet(v.aff.range(bounds))


def threads(rc: RuleContext, bounds: ThreadBounds | None = None
            ) -> list[tuple[tuple[int, int, int], int]] | None:
    """Every (tid, laneid) of the block (within `bounds`) when its shape is exact."""
    lim = rc.launch.block_or_limits(rc.kernel) if rc.launch is not None else None
    if lim is None or not lim.exact:
        return None
    out = [(t, i) for w in range(warp_count(lim.dims))
           for i, t in enumerate(lanes(lim.dims, w)) if t is not None]
    if bounds is None:
        return out
    return [(t, i) for t, i in out if bounds.tid_x.contains(t[0]) and
            bounds.tid_y.contains(t[1]) and bounds.tid_z.contains(t[2]) and
            bounds.laneid.contains(i)]


def lane_terms(v: Value) -> dict[str, int] | None:
    aff = v.aff
    if aff.is_top or aff.is_bottom or aff.base.lo is None or aff.base.hi is None:
        return None
    known = {n: c.singleton() for n, c in aff.coeffs}
    return None if any(c is None for c in known.values()) else known  # type: ignore


def fully_executed(rc: RuleContext, site: Site) -> bool:
    """Every thread of the block runs the instruction whenever one does: no divergent
    branch decides its block (transitively) and its guard, if any, always holds."""
    if site.access.guard is not Tri.TRUE:
        return False
    cfg = rc.facts.cfg
    deciders: dict[int, set[int]] = {}
    tick = rc.deadline.tick  # branches x the blocks they decide
    for branch, blocks in cfg.control_dependence().items():
        for b in blocks:
            tick()
            deciders.setdefault(b, set()).add(branch)
    todo, seen = [site.access.block], set()
    while todo:
        b = todo.pop()
        for branch in deciders.get(b, ()):
            if rc.facts.branch_is_divergent(branch):
                return False
            if branch not in seen:
                seen.add(branch)
                todo.append(branch)
    return True


def _name_thread(terms: dict[str, int], t: tuple[int, int, int], lane: int) -> str:
    values = {"tid.x": t[0], "tid.y": t[1], "tid.z": t[2], "laneid": lane}
    named = [f"`{INDEX_NAMES[n]}` = {values[n]}" for n in ("tid.x", "tid.y", "tid.z", "laneid")
             if terms.get(n)]
    return ", ".join(named)


def judge(rc: RuleContext, site: Site, size: int) -> Verdict:
    """Clean, out of bounds in every execution the state covers (some thread of the
    block always overflows), or possibly out of bounds."""
    v, w = site.address, site.width
    bounds = path_bounds(site.access.state, rc.facts.ctx.bounds)
    si = offsets(site, bounds)
    lo, hi = touched(si, w)
    if is_clean(lo, hi, size):
        return Verdict("clean", si, lo, hi)
    if lo is not None and hi is not None and (lo >= size or hi < 0):
        return Verdict("definite", si, lo, hi)  # every offset is outside
    terms, everyone = lane_terms(v), threads(rc, bounds)
    if terms is None:
        return Verdict("possible", si, lo, hi)
    runners = running(rc, site.access, everyone)  # those its conditions let run it
    # definite needs every thread of the block to run the access: no narrowed index
    full = everyone is not None and bounds == rc.facts.ctx.bounds and \
        fully_executed(rc, site) and runners == everyone
    if everyone is None:  # block shape unknown: only thread 0 surely exists
        everyone = [((0, 0, 0), 0)]
    bmin, bmax = v.aff.base.lo, v.aff.base.hi
    assert bmin is not None and bmax is not None
    offs = [(sum(c * {"tid.x": t[0], "tid.y": t[1], "tid.z": t[2], "laneid": lane}[n]
                 for n, c in terms.items()), t, lane)
            for t, lane in (everyone if runners is None else runners)]
    for base, definite in ((bmin, full), (bmax, False)):
        for o, t, lane in offs:
            addr = base + o
            over, under = addr + w > size, addr < 0
            if (over or under) and si.contains(addr):
                sure = definite and (over or base == bmax)
                text = _witness(terms, t, lane, max(addr, size) if over else addr,
                                bmin != bmax and base, sure)
                return Verdict("definite" if sure else "possible", si, lo, hi, text)
    # every thread that may run it was tried (fewer than the lane form allows): in bounds
    return Verdict("clean" if runners is not None and runners != everyone else "possible",
                   si, lo, hi)


def _witness(terms: dict[str, int], t, lane: int, byte: int, base: int | bool,
             sure: bool) -> str | None:
    """"`%tid.x` = 255 reaches byte 1024" ("would reach" when the thread may not run
    the access), with the uniform part of the offset when it is not one number."""
    if not any(terms.values()):
        return None  # the same address in every thread: nothing to name
    text = f"{_name_thread(terms, t, lane)} {'reaches' if sure else 'would reach'} byte {byte}"
    return text if base is False else f"{text} (warp-uniform part of the offset: {base})"


# ---- conditions on an unknown launch --------------------------------------------------------
class ThresholdSearch:
    """Re-analyses the kernel with one unknown integer parameter fixed, to find the
    largest value for which an access stays in bounds ("out of bounds when `n` > 256").
    Each probe is a full sound analysis; probes are cached and limited in number and work."""

    def __init__(self, rc: RuleContext):
        self.rc = rc
        self.cache: dict[tuple[str, int], Facts | None] = {}
        self.budget = min(SEARCH_WORK, max(SEARCH_FLOOR, SEARCH_RELATIVE * rc.facts.work))
        self.spent = 0
        self.probes = 0
        self.probe_work = 0  # what the last probe cost
        # a probe re-analyses the kernel: not from inside a device function it calls
        self.enabled = rc.entry is None and \
            len(rc.function.instructions) <= SEARCH_MAX_INSTRUCTIONS

    @cached_property
    def one_dimensional(self) -> bool:
        """The kernel reads no y or z thread index or block size."""
        return not any(r.key in ("%tid.y", "%tid.z", "%ntid.y", "%ntid.z")
                       for i in self.rc.function.instructions for r in i.uses)

    def candidates(self, site: Site) -> list:
        rc = self.rc
        launch = rc.launch
        obj = site.address.region.obj if site.address.region else None
        return [p for p in rc.function.params
                if launch is not None and p.name not in launch.params
                and p.name not in launch.extents and p.name != obj and not p.dims
                and p.type.kind in (Kind.SIGNED, Kind.UNSIGNED, Kind.BITS)]

    def _facts(self, name: str, value: int) -> Facts | None:
        key = (name, value)
        if key not in self.cache:
            if not self.enabled or self.probes >= SEARCH_PROBES or self.spent >= self.budget:
                raise TimeoutError
            self.probes += 1
            from ..analysis import analyze  # noqa: PLC0415 - re-analysis on demand
            rc = self.rc
            launch = replace(rc.launch, block=(value, 1, 1)) if name == "block" else \
                replace(rc.launch, params={**rc.launch.params, name: value})
            with rc.deadline.phase(f"re-analysis with {name} = {value}"):
                result = analyze(rc.function, launch, module=rc.module, params=PROBE_PARAMS,
                                 deadline=rc.deadline)
            if result.stopped is not None:
                raise result.stopped  # the kernel's budget, not the search's: stop the rule
            facts = result.facts
            work = SEARCH_WORK if facts is None else facts.work
            self.spent += work
            self.probe_work = work
            self.enabled = work <= SEARCH_PROBE_WORK
            self.cache[key] = facts
        return self.cache[key]

    def _clean(self, site: Site, name: str, value: int, size: int) -> bool | None:
        facts = self._facts(name, value)
        if facts is None:
            return None
        for other in memory_sites(facts):
            if other.insn is site.insn and other.operand == site.operand:
                r = other.address.region
                if r is None or site.address.region is None or r.obj != site.address.region.obj:
                    return None
                bounds = path_bounds(other.access.state, facts.ctx.bounds)
                if is_clean(*touched(offsets(other, bounds), other.width), size):
                    return True
                better = narrowed(facts, other)
                if better is None:
                    return True
                if better is other:
                    return False
                bounds = path_bounds(better.access.state, facts.ctx.bounds)
                return is_clean(*touched(offsets(better, bounds), better.width), size)
        return True  # unreachable with this value

    def threshold(self, site: Site, size: int) -> tuple[str, int] | None:
        """(parameter, T): in bounds for 0 <= value <= T, possibly out of bounds above."""
        for p in self.candidates(site) if self.enabled else ():
            top = (1 << (p.type.bits - 1)) - 1  # the same number in both views
            found = self._search(site, p.name, 0, top, size)
            if found is not None:
                return f"`{p.name}`", found
        return None

    def block_threshold(self, site: Site, size: int) -> tuple[str, int] | None:
        """("`%ntid.x`", T) for a one-dimensional kernel whose block shape is unknown:
        in bounds for blocks of up to T threads."""
        rc = self.rc
        lim = rc.launch.block_or_limits(rc.kernel) if rc.launch is not None else None
        if not self.enabled or lim is None or lim.exact or not self.one_dimensional:
            return None
        found = self._search(site, "block", 1, lim.dims[0], size)
        return None if found is None else ("`%ntid.x`", found)

    def _affordable(self, probes: int) -> bool:
        """Whether `probes` more probes like the last one fit the budget (an estimate
        from above: some may be cached)."""
        return self.spent + probes * self.probe_work <= self.budget

    def _search(self, site: Site, name: str, low: int, high: int, size: int) -> int | None:
        """The largest value in [low, high) for which the site is in bounds, when it
        is at `low` and is not at `high` (a binary search: bounds are monotone)."""
        try:
            ends = sum((name, v) not in self.cache for v in (low, high))
            if not self._affordable(ends + (high - low).bit_length()):
                return None
            if self._clean(site, name, low, size) is not True or \
                    self._clean(site, name, high, size) is not False:
                return None
            if not self._affordable((high - low).bit_length()):
                return None  # a search that would stop half way only costs time
            good, bad = low, high
            while bad - good > 1:
                mid = (good + bad) // 2
                answer = self._clean(site, name, mid, size)
                if answer is None:
                    return None
                good, bad = (mid, bad) if answer else (good, mid)
            return good
        except TimeoutError:
            return None


def block_dependent(rc: RuleContext, site: Site, size: int) -> str | None:
    """With the block shape unknown, an access that thread 0 makes in bounds but a
    thread with a larger index may not: the condition on the block shape, e.g.
    "when `%ntid.x` > 256" when one index moves the address, else a general one."""
    v = site.address
    terms = lane_terms(v)
    if terms is None or rc.launch is None or rc.launch.block_or_limits(rc.kernel).exact:
        return None
    moving = {n: c for n, c in terms.items() if c}
    bmin, bmax = v.aff.base.lo, v.aff.base.hi
    if not moving or bmin < 0 or bmax + site.width > size:
        return None  # thread 0 may overflow too: not (only) the block shape
    if len(moving) == 1 and "laneid" not in moving:
        (name, c), = moving.items()
        last = (size - site.width - bmax) // c if c > 0 else bmin // -c  # largest safe index
        return f"when `%n{name}` > {last + 1}"
    return "for some block shapes"  # several indices: no single condition


# ---- the block a kernel is written for -------------------------------------------------------
THREAD_INDICES = frozenset({"%tid.x", "%tid.y", "%tid.z", "%laneid", "%warpid"})


@dataclass(frozen=True)
class Design:
    """The largest block (threads in a row) a kernel is evidently written for, and why:
    its thread-indexed shared arrays stay in bounds up to that size, or it reads no
    thread index at all (one thread per block)."""

    threads: int
    reason: str


def design(rc: RuleContext) -> Design | None:
    """With the block shape unknown, the kernel's evident design: None when the launch
    or `.reqntid` gives the shape, or nothing in the kernel bounds it."""
    lim = rc.launch.block_or_limits(rc.kernel) if rc.launch is not None else None
    if lim is None or lim.exact:
        return None
    if not any(r.key in THREAD_INDICES for i in rc.function.instructions for r in i.uses):
        return Design(1, "the kernel reads no thread index: it is written for one thread "
                      "per block")
    best: Design | None = None
    for site in memory_sites(rc.facts):
        r = site.address.region
        if r is None or r.obj is None or r.space != "shared" or not spaces_agree(site):
            continue
        size = object_size(rc, site, r.space, r.obj)[0]
        last = _last_thread(site, size, path_bounds(site.access.state, rc.facts.ctx.bounds))
        if last is not None and (best is None or last + 1 < best.threads):
            elements = size // max(1, site.width)
            best = Design(last + 1, f"`{object_name(r.obj)}` holds {elements} elements of "
                          f"{site.width} bytes, indexed by `%tid.x`: in bounds for blocks of "
                          f"up to {last + 1} threads")
    return best


def _last_thread(site: Site, size: int | None, bounds: ThreadBounds) -> int | None:
    """The largest `%tid.x` for which an access indexed by it alone stays in `size`
    bytes, when thread 0's does and a larger thread's may not."""
    terms = lane_terms(site.address)
    if size is None or terms is None:
        return None
    moving = {n: c for n, c in terms.items() if c}
    if set(moving) != {"tid.x"} or moving["tid.x"] <= 0:
        return None
    c, v = moving["tid.x"], site.address
    bmin, bmax = v.aff.base.lo, v.aff.base.hi
    if bmin < 0 or bmax + site.width > size:
        return None
    last = (size - site.width - bmax) // c
    top = bounds.tid_x.hi
    return last if top is None or last < top else None


# ---- the rule -------------------------------------------------------------------------------
class OutOfBounds(Rule, id="out-of-bounds", severity=Severity.ERROR,
        checks_callees=True):
    """A memory access may touch bytes outside the object it addresses.

    ## What it does
    Checks every load, store, atomic and copy whose address points into a known object:
    a `.shared`, `.local`, `.const` or `.param` variable (unsized `extern .shared` arrays
    take the launch's dynamic shared memory size) or a global buffer whose size the
    launch gives (`buffer.NAME=BYTES`). The bytes touched are the address's offsets, per
    thread, plus the access width. An error means some thread of the block overflows in
    every execution the analysis covers; a warning that some execution may, or that it
    does when an unknown kernel parameter exceeds a bound; a note that the answer
    depends on an unknown block shape or on an index the analysis cannot bound. With an
    exact launch, a possible overflow whose address depends on the launch alone is
    settled by an emulated run of it: dropped, or an error naming a thread.

    ## Why is this bad?
    An out-of-bounds shared or local access silently reads or corrupts a neighbouring
    variable (nothing checks addresses inside a block's shared memory window); a
    global one reads another allocation or faults with an illegal address that
    aborts the whole context.

    ## Example
    ```ptx
    .shared .align 4 .b8 tile[1024];          // float tile[256]; 256 threads per block
    mov.u32        %r1, %tid.x;
    shl.b32        %r2, %r1, 2;
    mov.u32        %r3, tile;
    add.s32        %r4, %r3, %r2;
    ld.shared.f32  %f1, [%r4+4];              // tile[threadIdx.x + 1]
    ```

    ## Use instead
    ```ptx
    .shared .align 4 .b8 tile[1028];          // float tile[257]: one halo element
    mov.u32        %r1, %tid.x;
    shl.b32        %r2, %r1, 2;
    mov.u32        %r3, tile;
    add.s32        %r4, %r3, %r2;
    ld.shared.f32  %f1, [%r4+4];
    ```

    ## Suppress
    `--disable out-of-bounds` on the command line, or `disable = ["out-of-bounds"]` in
    `[tool.ptxlint]`.
    """

    def check(self, rc: RuleContext) -> Iterator[Diagnostic]:
        search = ThresholdSearch(rc)
        replay = Replay(rc)
        for site in memory_sites(rc.facts):
            rc.deadline.check()
            r = site.address.region
            if r is None or r.obj is None or not spaces_agree(site) or site.width <= 0:
                continue
            if isinstance(site.insn, (tensor.Ldmatrix, tensor.Stmatrix)) and \
                    "x4" not in site.insn.mods:
                continue  # with .x1/.x2 only some lanes' addresses are used
            size, source = object_size(rc, site, r.space, r.obj)
            if size is None:
                continue
            verdict = judge(rc, site, size)
            if verdict.kind != "clean":
                better = narrowed(rc.facts, site)  # a guard after the address may bound it
                if better is None:
                    continue
                if better is not site:
                    site, verdict = better, judge(rc, better, size)
            if verdict.kind == "possible" and not site.operand and rc.launch is not None:
                # the emulated run is bounded by its step count (`replay.MAX_STEPS`); the
                # deadline is checked as it starts and after it
                with rc.deadline.phase("replay"):
                    verdict = replayed(replay, site, r.obj, r.space, size, verdict)
                rc.deadline.check()
            if verdict.kind != "clean":
                yield self._report(rc, site, r.obj, size, source, verdict, search)

    def _report(self, rc: RuleContext, site: Site, obj: str, size: int, source: str,
                verdict: Verdict, search: ThresholdSearch) -> Diagnostic:
        v, (lo, hi) = site.address, (verdict.lo, verdict.hi)
        first, last = bad_range(lo, hi, size)
        where = f"bytes {first}..{last} of `{obj}` ({size} bytes)"
        notes = [f"the size of `{obj}` is {source}"] if source else []
        witness = f"; {verdict.witness}" if verdict.witness else ""
        if verdict.kind == "definite":
            severity, certainty = Severity.ERROR, Certainty.DEFINITE
            message = f"out-of-bounds {site.verb}: {where}{witness}"
        else:
            certainty = Certainty.POSSIBLE
            severity, message, why = possible(rc, site, size, verdict, search, where)
            notes += why
            if message is None:  # nothing bounds the index
                first = last = None
                message = (f"{site.verb} may be out of bounds: its offset into `{obj}` "
                           f"({size} bytes) is not bounded")
        form = "" if v.aff.is_top or v.aff.is_uniform else f" = {v.aff}"
        d = self.diagnostic(
            rc, site.insn, message, certainty=certainty, label=f"offset {verdict.si}{form}",
            notes=notes, help=f"bound the index by the size of `{obj}` or enlarge `{obj}`",
            details={"object": obj, "size": size, "first_bad_byte": first,
                     "last_byte": last, "definite": verdict.kind == "definite"})
        return with_severity(d, severity)


def replayed(replay: Replay, site: Site, obj: str, space: str, size: int,
             verdict: Verdict) -> Verdict:
    """A possible overflow of a kernel buffer or a shared variable settled by running the
    launch (`replay`): clean when no lane's address leaves the object, definite when one
    does."""
    if space == "global" and obj not in replay.rc.launch.extents:
        return verdict
    found = replay.extent(site.insn, obj, space)
    if found is None:
        return verdict
    if found[1] < found[0]:  # no thread of the launch runs it
        return Verdict("clean", verdict.si, None, None)
    lo, hi, witness = found[0], found[1] + site.width - 1, found[2]
    if is_clean(lo, hi, size):
        return Verdict("clean", verdict.si, lo, hi)
    return Verdict("definite", verdict.si, lo, hi,
                   f"{witness or f'its lanes reach bytes {lo}..{hi}'} in an emulated run of this "
                   "launch")


UNKNOWN_BLOCK = "the block shape is unknown: give it with --block X,Y,Z or declare .reqntid"


def possible(rc: RuleContext, site: Site, size: int, verdict: Verdict,
             search: ThresholdSearch, where: str) -> tuple[Severity, str | None, list[str]]:
    """How sure a possible overflow is, most specific first: a condition on the unknown
    block shape (a note) or on an unknown parameter (a warning), an overflow among the
    bounded offsets (a warning), or an index the analysis cannot bound (a note; message
    None when it is not bounded at all)."""
    v, lo, hi = site.address, verdict.lo, verdict.hi
    may = f"{site.verb} may be out of bounds"
    witness = f"; {verdict.witness}" if verdict.witness else ""
    if (cond := block_dependent(rc, site, size)) is not None:
        return Severity.NOTE, f"{may} {cond}: {where}", [UNKNOWN_BLOCK]
    if (found := search.block_threshold(site, size)) is not None:
        return Severity.NOTE, f"{may} when {found[0]} > {found[1]}: {where}", [
            f"in bounds for blocks of up to {found[1]} threads (re-analysed with "
            "one-dimensional blocks): give the block shape with --block"]
    if (found := search.threshold(site, size)) is not None:
        return Severity.WARNING, f"{may} when {found[0]} > {found[1]}: {where}", [
            f"in bounds for 0 <= {found[0]} <= {found[1]} (re-analysed with {found[0]} "
            "fixed)"]
    if not v.is_uniform and threads(rc) is None:
        return Severity.NOTE, f"{may} for some block shapes: {where}", [UNKNOWN_BLOCK]
    if informative(v, lo, hi, size):
        return Severity.WARNING, f"{may}: {where}{witness}", []
    if lo is None or hi is None or hi - lo >= UNINFORMATIVE_SPAN:
        return Severity.NOTE, None, []
    return Severity.NOTE, f"{may}: {where} (the index depends on values the analysis " \
        "cannot bound)", []


def informative(v: Value, lo: int | None, hi: int | None, size: int) -> bool:
    """Whether a possible overflow is worth a warning: the offsets are bounded and
    either follow the thread indices (an affine form) or stay within one object size
    of it (an index bounded by an off-by-one guard, not by lost track of a value)."""
    if lo is None or hi is None or hi - lo >= UNINFORMATIVE_SPAN:
        return False
    return not v.aff.is_top or (lo >= -size and hi < 2 * size)


def bad_range(lo: int | None, hi: int | None, size: int) -> tuple[int | None, int | None]:
    """The touched bytes outside [0, size): past the end, before the start, or both."""
    over = hi is None or hi >= size
    under = lo is None or lo < 0
    if over and not under:
        return max(lo, size), hi  # type: ignore[type-var]
    if under and not over:
        return lo, min(hi, -1)  # type: ignore[type-var]
    return lo, hi


__all__ = ["OutOfBounds", "Site", "memory_sites", "narrowed", "declaration", "object_size",
           "spaces_agree", "with_severity", "judge", "Verdict", "Design", "design"]
