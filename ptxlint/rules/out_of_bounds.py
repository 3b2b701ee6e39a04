"""`out-of-bounds`: a memory access that may touch bytes outside the object it addresses
(the per-operand view of accesses it shares with other rules: `memory_sites.py`)."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import cached_property

from ..diagnostics import Certainty, Diagnostic, Severity
from ..domains.affine import ThreadBounds
from ..domains.lattice import Tri
from ..domains.strided import StridedInterval as SI
from ..domains.value import Value
from ..interp.facts import Facts, FixpointParams
from ..ir.instructions import tensor
from ..ir.traits import Call
from ..ir.types import Kind
from ..threads.warp import lanes, warp_count
from .base import Replay, Rule, RuleContext
from .memory_sites import (Site, lane_terms, memory_sites, narrowed, object_size, path_bounds,
                           spaces_agree, with_severity)
from .sites import exact_block, lanes_of, running

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
# A kernel's first probe (the low end of its first search) that costs more than
# SEARCH_PROBE_WORK ends the kernel's searching with its own answer unused (the search
# needs its high end next), so it is stopped there; not in a kernel that calls
# functions, whose analyses each count their work apart.
FIRST_PROBE_PARAMS = replace(PROBE_PARAMS, max_work=SEARCH_PROBE_WORK)
SEARCH_MAX_INSTRUCTIONS = 1000


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


def offsets(site: Site, bounds: ThreadBounds | None) -> SI:
    """The offsets the address takes in the threads that can run it (`site_bounds`)."""
    v = site.address
    return v.si if v.aff.is_top else v.si.meet(v.aff.range(bounds))


def site_bounds(site: Site, facts: Facts) -> ThreadBounds | None:
    """The thread indices that can run the access (`path_bounds`); None when the address
    has no affine form, which is all they are read for (a scan of every register)."""
    if site.address.aff.is_top:
        return None
    return path_bounds(site.access.state, facts.ctx.bounds)


def threads(rc: RuleContext, bounds: ThreadBounds | None = None
            ) -> list[tuple[tuple[int, int, int], int]] | None:
    """Every (tid, laneid) of the block (within `bounds`) when its shape is exact."""
    lim = rc.launch.block_or_limits(rc.kernel) if rc.launch is not None else None
    if lim is None or not lim.exact:
        return None
    # the same few bounds come back for every access of a kernel: one list each
    memo = rc.facts.derived("out-of-bounds threads", lambda _facts: {})
    key = (lim.dims, bounds)
    if key not in memo:
        out = [(t, i) for w in range(warp_count(lim.dims))
               for i, t in enumerate(lanes(lim.dims, w)) if t is not None]
        if bounds is not None:
            out = [(t, i) for t, i in out if bounds.tid_x.contains(t[0]) and
                   bounds.tid_y.contains(t[1]) and bounds.tid_z.contains(t[2]) and
                   bounds.laneid.contains(i)]
        memo[key] = out
    return memo[key]


def fully_executed(rc: RuleContext, site: Site) -> bool:
    """Every thread of the block runs the instruction whenever one does: no divergent
    branch decides its block (transitively) and its guard, if any, always holds."""
    if site.access.guard is not Tri.TRUE:
        return False
    cfg = rc.facts.cfg
    todo, seen = [site.access.block], set()
    while todo:
        b = todo.pop()
        for branch in cfg.deciders(b):
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
    bounds = site_bounds(site, rc.facts)
    si = offsets(site, bounds)
    lo, hi = touched(si, w)
    if is_clean(lo, hi, size):
        return Verdict("clean", si, lo, hi)
    if lo is not None and hi is not None and (lo >= size or hi < 0):
        return Verdict("definite", si, lo, hi)  # every offset is outside
    terms = lane_terms(v)
    if terms is None:  # always so when the address has no affine form (`bounds` None)
        return Verdict("possible", si, lo, hi)
    everyone = threads(rc, bounds)
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
            rc = self.rc
            launch = replace(rc.launch, block=(value, 1, 1)) if name == "block" else \
                replace(rc.launch, params={**rc.launch.params, name: value})
            # past the kernel's budget (not the search's) this raises: the rule stops
            first = not self.cache and not any(isinstance(i, Call)
                                               for i in rc.function.instructions)
            facts = rc.reanalyze(launch, FIRST_PROBE_PARAMS if first else PROBE_PARAMS,
                                 f"re-analysis with {name} = {value}")
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
        acc = facts.access_of(site.insn)  # its block replayed, not every block
        for other in memory_sites(facts, () if acc is None else (acc,)):
            if other.insn is site.insn and other.operand == site.operand:
                r = other.address.region
                if r is None or site.address.region is None or r.obj != site.address.region.obj:
                    return None
                if is_clean(*touched(offsets(other, site_bounds(other, facts)), other.width),
                            size):
                    return True
                better = narrowed(facts, other)
                if better is None:
                    return True
                if better is other:
                    return False
                return is_clean(*touched(offsets(better, site_bounds(better, facts)),
                                         better.width), size)
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
# ---- the rule -------------------------------------------------------------------------------
class OutOfBounds(Rule, id="out-of-bounds", severity=Severity.ERROR,
        checks_callees=True):
    """A memory access may touch bytes outside the object it addresses.

    ## What it does
    Checks every load, store, atomic, reduction and copy (`ld`, `ldu`, `st`, `st.async`,
    `atom`, `red`, `mbarrier.*`, `ldmatrix`/`stmatrix .x4`, `cp.async` and bulk copies,
    both their destination and their source) whose address points into a known object:

    - `.shared`, `.local`, `.const` and `.param` variables, sized by their declaration
      (`.shared .align 4 .b8 tile[1024]` is 1024 bytes; nvcc's `__local_depot` holds a
      kernel's local arrays); an unsized `extern .shared` array takes the launch's dynamic
      shared memory size (`--dynamic-smem`, `smem=` in a sample header);
    - the global buffer a kernel pointer parameter points to, when the launch gives its
      size (`--extent NAME=BYTES`, `buffer.NAME=` in a sample header). Without a size,
      global accesses are not checked.

    The analysis gives every address an object and a byte offset: a set of values and, per
    thread, an affine form `base + cx*%tid.x + cy*%tid.y + cz*%tid.z + cl*%laneid`. The
    bytes touched are `[offset, offset + width)`, where the width is the access size
    (`ld.shared.v4.f32`: 16 bytes).

    Exact launches settle possible findings. When the block, the grid and every scalar
    parameter are known (the pre-launch hook; `--block --grid --param --extent` on the
    command line) and at most 65,536 threads run, a possible overflow of a kernel buffer
    or a shared variable whose address and control are *launch-determined* is settled by
    one emulated run of the kernel: dropped when no lane leaves the object, an error naming
    a thread when one does ("block (3, 0, 0) thread (232, 0, 0) reaches byte 4000 in an
    emulated run of this launch"). Launch-determined: the address registers, the guard and
    every branch deciding whether the access runs are computed, through a backward slice,
    only from thread and block indices and sizes, scalar parameters and integer
    arithmetic; buffer and variable addresses may only be moved or offset. A load from
    memory, another lane's value (`shfl`, `vote`), a clock, a carry flag or floating point
    in the slice, or a run that traps, deadlocks, branches divergently on `.uni` or exceeds
    its budget, leaves the static verdict. This turns the unrolled grid-stride loops the
    value domains cannot bound into exact answers. Two more cases:

    - *No grid given.* When the block shape is known (`--block`, `.reqntid`) but the grid
      is not, an access whose slice reads no block index or grid size (`%ctaid`,
      `%nctaid`) takes the same addresses in every block, and a run of one block settles
      it: the textbook reductions whose safety rests on divisibility (`sdata[tid + s]`
      under `tid % (2*s) == 0`, `sdata[index + s]` under `index = 2*s*tid < blockDim.x`, s
      a power of two), which the value domains, knowing s only as a range, cannot prove
      (`strided_sum`).
    - *Never run.* A launch-determined access that no thread of the run executes (a branch
      of an unrolled loop that this launch's trip counts never reach) is clean.

    Conditions on an unknown launch: when a kernel parameter has no value, the rule
    re-analyses the kernel with that parameter fixed (a few dozen analyses at most, and
    only for kernels of at most 1000 instructions) to find the largest value for which the
    access stays in bounds: a guarded kernel with the buffers' sizes given but `n` unknown
    gets a warning "... may be out of bounds when `n` > 1000"; with `n` given the same
    kernel is clean (`if (i < n)` with a matching buffer size is never reported).

    Tables walked by a loop: a pointer stepped through a loop beside a counter the loop
    tests (`p += 4; i += 1; while (i != 6)`, how nvcc walks `sinf`'s 24-byte reduction
    table `__cudart_i2opi_f` and fills its 28-byte local array) is linked to the counter
    where the loop is entered, so its offset has the counter's bounds. The slow path of
    `sinf`/`cosf` (taken only when `|x| >= 105615.0f`) also reads the local array at
    `6 - (e >> 5)`, with e the float's exponent field minus 128; only the float comparison
    that guards the path bounds e, so these three loads per call remain notes ("the index
    depends on values the analysis cannot bound"), never warnings (`phase_gain.ok`).

    The block a kernel is written for: with the block shape unknown, the largest block for
    which every `%tid.x`-indexed shared access stays in bounds (a `float tile[256]` indexed
    by `threadIdx.x`: 256) is the kernel's evident design; a kernel that reads no thread
    index is written for one thread per block. `shared-memory-race` makes a race that needs
    a bigger block a note stating the block size it needs.

    Details: `object`, `size` (bytes), `first_bad_byte` and `last_byte` (the out-of-bounds
    bytes touched, inclusive; `None` when unbounded), `definite`.

    ## Why is this bad?
    Nothing checks addresses inside a block's shared memory window or a thread's local
    memory: an out-of-bounds shared or local access silently reads or overwrites a
    neighbouring variable (the next array, another warp's data, a spilled register). A
    global access past the end of an allocation reads another allocation or raises an
    illegal-address error, which aborts the kernel and leaves the CUDA context unusable.
    The typical sources are an array declared one element short, a stencil reading
    `tile[i + 1]` without a halo, and a missing `if (i < n)` when the grid is rounded up.

    ## Certainty
    | Severity | When |
    |---|---|
    | error (definite) | every offset is outside the object, or the block shape is known, the instruction runs in every thread of the block (no divergent branch or guard decides it) and, for the smallest possible uniform part of the offset, some thread overflows. The message names that thread |
    | warning (possible) | the offsets are bounded and follow the thread indices (or stay within one object size of the object, as an index behind an off-by-one guard does), and some of them are outside (the message names a thread that *would reach* the first byte outside, if it runs the access); or the access is out of bounds only when an unknown kernel parameter exceeds a bound, which the message gives |
    | note (possible) | the block shape is unknown and the overflow depends on it ("when `%ntid.x` > 256": from the offset's thread terms, or found by re-analysing a one-dimensional kernel with given block sizes); or the analysis cannot bound the index (loaded data, a pointer stepped through a loop) |

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

    - Size the array for every index the code uses: `float tile[257]` with the halo element
      loaded by the last thread (`stencil_edge.ok`), `buf[256]` for a 256-thread block.
    - Guard global accesses with the element count (`if (i < n)`, `missing_guard.ok`), or
      clamp the index (`min(i + 1, n - 1)`).
    - Fix the guard of a data-dependent index (`j < 8`, `local_off_by_one.ok`).
    - Give the launch (`--block`, `--grid`, `--param`, `--extent`, `--dynamic-smem`) so the
      rule can tell which threads and sizes really occur; `.reqntid` fixes the block shape
      in the PTX itself.

    With the block shape known, an access the value domains cannot bound is evaluated
    thread by thread before it is reported: its address followed back through its
    definitions as each thread computes it (`tid % 48` through nvcc's multiply-high,
    `2*t - (t & (s-1))` in a sorting network), for every value of the loop counters and
    uniform registers it reads and every thread its guards may let through. When no such
    thread leaves the object, the access is clean; a guard on loaded data keeps every
    thread, which is still sound (fewer threads touch fewer bytes). An overflow found this
    way is not reported from it: the combination of values may never occur.

    ## Limitations
    - The domains are not relational. The rule recovers the common case itself: a register
      that is exactly `b + c*%tid.x` and was narrowed by a branch or guard
      (`if (tid < 32)`) narrows the thread indices for every address used after it, so an
      address nvcc computed before the guard is still judged for the threads that pass it.
      A guard that mixes indices (`blockIdx.x * blockDim.x + threadIdx.x + 1 < n`) narrows
      nothing else: a guarded halo load `in[i + 1]` whose address nvcc computed before the
      test is reported as possibly out of bounds. A pointer stepped in a loop whose exit
      tests a separate counter is unbounded (a note).
    - "Definite" needs the block shape and a thread that is known to execute the access;
      when the uniform part of the offset is a set (e.g. `blockIdx.x * 1024`), the rule
      cannot tell that its largest value really occurs, so the last block's overflow is a
      warning.
    - nvcc puts all local arrays of a kernel into one `__local_depot`: an overflow from one
      array into the next one inside the depot is not seen.
    - Without a buffer size, global accesses are not checked; without a dynamic shared
      memory size, unsized `extern .shared` arrays are not either.

    ## Samples
    Under `ptx_samples/out-of-bounds/`, each with a clean twin:

    - `stencil_edge.bad`: `tile[threadIdx.x + 1]` on a `float tile[256]` with 256 threads
      per block: thread 255 reads `tile[256]`; `stencil_edge.ok` loads a halo element.
    - `shared_off_by_one.bad`: 255 floats for 256 threads.
    - `local_off_by_one.bad`: `if (j <= 8)` before `v[j]` on `float v[8]`.
    - `missing_guard.bad`: a grid of 1024 threads over 1000 floats: threads 232..255 of the
      last block.
    - `dynamic_smem.bad`: `extern __shared__` with 512 bytes for 256 floats.
    - `lane_shift.bad` (hand-written): `row[laneid + 1]` and an inclusive loop bound over a
      `.local` array.
    - `strided_sum.bad`: the textbook interleaved reduction whose loop runs once too often
      (`s <= blockDim.x`): thread 0 reads `sdata[256]`, found by an emulated run of one
      block (only the block shape is given).
    - `merge_steps.bad`: odd-even merge steps whose guard is off by one
      (`offset + 1 >= stride`): thread 0 reads `s[-1]`. The twin's `offset >= stride`
      (offset = t & (size - 1) <= t) is clean with the launch; without a block shape it
      still gets a note about bytes before `s`, since `t - stride >= 0` needs the relation
      between `t & (size - 1)` and `t`, which the value domains do not keep.

    ## Suppress
    `--disable out-of-bounds` on the command line, or `disable = ["out-of-bounds"]` in
    `[tool.ptxlint]`; one line: `// ptxlint: disable=out-of-bounds`.
    """

    def check(self, rc: RuleContext) -> Iterator[Diagnostic]:
        search = ThresholdSearch(rc)
        replay = rc.replay()  # lint's emulated run, made on first use
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
                if thread_by_thread(rc, site, size):
                    continue
                better = narrowed(rc.facts, site)  # a guard after the address may bound it
                if better is None:
                    continue
                if better is not site:
                    site, verdict = better, judge(rc, better, size)
            if verdict.kind == "possible" and not site.operand and rc.launch is not None:
                # the emulated run is bounded by its step count (`replay.MAX_STEPS`); the
                # deadline is checked as it starts and after it
                with rc.deadline.phase("replay"):
                    verdict = replayed(rc, replay, site, r.obj, r.space, size, verdict)
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


def thread_by_thread(rc: RuleContext, site: Site, size: int) -> bool:
    """Whether every thread that may run the access keeps inside the object, its own
    address evaluated for each thread of the block (`sites.lanes_of`: the address
    followed back through its definitions, `tid % 48` or `2*t - (t & (s-1))` as the
    thread computes it, for every value of the loop counters and uniform registers it
    reads). The threads are those the guards may let through, so a guard the evaluation
    cannot decide (a comparison of loaded data) keeps every thread: the answer holds for
    any subset. Only a clean answer is taken from it; an overflow found this way may be
    in a combination of values that never occurs, so it stays the analysis' finding."""
    if site.operand or exact_block(rc) is None:
        return False
    lanes = lanes_of(rc, site.access, True)
    if lanes is None or lanes.start is None or lanes.sym_gcd:
        return False  # an address with a part that is not evaluated (a loaded value)
    offsets = lanes.start[lanes.mask]
    if offsets.size == 0:
        return True  # no thread of the block runs it
    return is_clean(int(offsets.min()), int(offsets.max()) + site.width - 1, size)


def replayed(rc: RuleContext, replay: Replay, site: Site, obj: str, space: str, size: int,
             verdict: Verdict) -> Verdict:
    """A possible overflow of a kernel buffer or a shared variable settled by running the
    launch (`replay`): clean when no lane's address leaves the object, definite when one
    does."""
    if space == "global" and obj not in rc.launch.extents:
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


__all__ = ["OutOfBounds", "judge", "Verdict"]
