"""`global-memory-race`: two threads of one launch touch the same bytes of a kernel
buffer, one of them writing, with nothing ordering them. The pairs are found by
`threads/global_races.py` (imported on first use: it needs numpy); this module words the
findings."""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics import Certainty, Diagnostic, Related, Severity
from ..ir.instruction import Instruction
from .base import Rule, RuleContext
from .wording import address_text, object_name

VERB = {"store": "writes", "load": "reads"}
PLURAL = {"store": "write", "load": "read"}


class GlobalMemoryRace(Rule, id="global-memory-race", severity=Severity.ERROR):
    """Two threads of one launch access the same global bytes, one writing, unordered.

    ## What it does
    Finds two `ld`/`st` of the same kernel buffer (an address the analysis traces to a
    pointer parameter, also through generic addresses) that two threads of one launch may
    execute with nothing ordering them, at least one of them a store, touching a common
    byte:

    - threads of *different blocks* are never ordered (short of a grid-wide
      synchronisation);
    - threads of *one block* are ordered by a CTA barrier between the two accesses, and
      threads of one warp also by `bar.warp.sync` (the barrier intervals of
      `shared-memory-race`).

    Not races: two atomics (an atomic and a plain access are not judged either), two
    accesses that both carry memory-model semantics (`.relaxed`, `.acquire`, `.release`,
    `.volatile`: deliberate communication), and two stores of a value both threads
    certainly agree on. The values are compared by what they may depend on
    (flow-insensitive, control dependence included): a constant, a kernel parameter or
    read-only memory agrees in every thread; a value computed from `%tid` alone agrees
    between threads of the same index (so `out[threadIdx.x] = in[threadIdx.x]` in every
    block stores the same values: benign); a loaded value from memory the kernel writes,
    an atomic's result or a clock agrees in no two threads. A cross-block pair with a
    gpu-scope fence (`membar.gl`, `fence.*.gpu`) on a path between the two accesses is
    taken as synchronised (the last-block reduction of CUDA's `threadFenceReduction`).

    How the pairs are found:

    1. same buffer, one store, offset ranges that meet (from the final facts);
    2. each address evaluated for every thread of a block, the block index `%ctaid`
       enumerated block by block when the launch gives the grid (up to 1024 values a
       dimension and 2^17 thread-rows an access). A block dimension the address does not
       read is *free*: every block along it touches the same bytes, so with more than one
       block there the same thread of two blocks collides (`out[threadIdx.x] = ...`);
    3. cheap span tests first (the bytes of each block's warps, of each block's threads),
       then the bytes themselves, compared modulo the coefficients of what stays symbolic:
       a loop's trip count `k` in `i + k * gridDim.x * blockDim.x` never makes two threads
       meet, and a collision found only modulo a symbol is not reported;
    4. the threads must certainly run both accesses: their guard and every block-varying
       branch on the way compare values the evaluation knows per thread and row, and the
       facts know the outcome there. Accesses behind conditions on loaded data are not
       checked.

    Grid-stride loops, `blockIdx`-based indexing and a reduction's `out[blockIdx.x]`
    written by thread 0 only are clean. Details: `object`, `kinds` (`write-write`,
    `write-read`), `other_line`, `threads` (the two threads' indices in their blocks),
    `blocks` (their block coordinates), `byte` (the first common byte offset in the
    buffer) and `cross_block`.

    ## Why is this bad?
    Blocks run in any order, on any multiprocessor, at the same time or one after the
    other: which write lands last, or whether a read sees the other block's write, changes
    from run to run. The PTX memory model makes such a data race undefined.

    ## Certainty
    An error when the race is certain for the launch: the block shape is known, the rows
    enumerate only the block index, both accesses run in every thread the conditions
    select, and the grid is known (across blocks) or the two accesses follow one another
    with no barrier (within a block). Otherwise a warning. Without a grid, a
    block-independent address is reported "when the grid has more than one block": a
    warning when the kernel reads `%ctaid` or `%nctaid` elsewhere (it is meant for several
    blocks: the classic missing `blockIdx.x`), a note when it never does (most likely a
    single-block kernel). Addresses the analysis cannot evaluate per thread, or relate
    across blocks, are not checked.

    ## Example
    ```ptx
    mov.u32         %r1, %tid.x;
    mov.u32         %r2, %ctaid.x;
    mul.wide.u32    %rd2, %r1, 4;
    add.s64         %rd3, %rd1, %rd2;   // out + 4*threadIdx.x in every block
    st.global.u32   [%rd3], %r2;        // expect: global-memory-race
    ```

    ## Use instead
    ```ptx
    mov.u32         %r1, %tid.x;
    mov.u32         %r2, %ctaid.x;
    mad.lo.s32      %r3, %r2, 64, %r1;  // blockIdx.x * 64 + threadIdx.x
    mul.wide.u32    %rd2, %r3, 4;
    add.s64         %rd3, %rd1, %rd2;
    st.global.u32   [%rd3], %r2;
    ```

    Give every thread its own elements (index by `blockIdx.x * blockDim.x + threadIdx.x`,
    stride grid-stride loops by `blockDim.x * gridDim.x`), let one thread write a block's
    result, or combine the values with an atomic (`atomicAdd`, `atomicMax`).

    ## Limitations
    - Only kernel buffers (pointer parameters) are checked; `.global` variables, addresses
      the analysis cannot place and accesses in called functions are not.
    - A loop counter is followed only as `r = init; r += C` with C a constant and one
      increment (a loop nvcc unrolled by four with a remainder loop has two increments; a
      step of `blockDim.x * gridDim.x` is a register): such addresses are not a known
      function of the thread and are not checked.
    - Grids above 1024 blocks in a dimension, or more than 2^17 thread-rows per access, are
      not checked (the block index is not enumerated), nor are block indices that stay
      symbolic (no launch).
    - Grid-wide synchronisation other than a gpu-scope fence (a cooperative `grid.sync()`
      through atomics on a workspace) is not recognised; nor are flags polled with
      `.volatile`/`.acquire` loads unless both sides carry such semantics.

    ## Samples
    Under `ptx_samples/global-memory-race/`, compiled by nvcc, each with a clean twin:

    - `block_shared_out.bad`: `out[threadIdx.x] = 2 * in[global index]`: every block writes
      the same elements with its own values.
    - `grid_stride.bad`: items a block apart instead of a grid apart: block b updates
      blocks b+1..b+3's elements; the twin strides by the grid.
    - `block_sum.bad`: every thread of a block writes its partial sum to
      `out[blockIdx.x]`; the twin lets thread 0 write the total.
    - `single_slot.bad`: `out[0] = max(out[0], v)` by every thread of every block; the twin
      uses `atomicMax`.

    ## Suppress
    `--disable global-memory-race`, or `disable = ["global-memory-race"]` under
    `[tool.ptxlint]`; one line: `// ptxlint: disable=global-memory-race`.
    """

    def check(self, rc: RuleContext) -> Iterator[Diagnostic]:
        from ..threads.global_races import GlobalRaceFinder, participates  # noqa: PLC0415

        accs = [a for a in rc.facts.accesses if participates(a)]
        if not any(a.insn.access_kind == "store" for a in accs):
            return
        finder = GlobalRaceFinder(rc.facts, rc.module, accs)
        for race in finder.races():
            yield _report(self, rc, finder, race)


def _report(rule: Rule, rc: RuleContext, finder, race) -> Diagnostic:
    a, b = finder.accs[race.i], finder.accs[race.j]
    obj = object_name(a.address.region.obj)
    hit = race.hit
    ka, kb = a.insn.access_kind, b.insn.access_kind
    prefix = "" if race.sure else "possible "
    where = "threads of different blocks" if race.cross_block else "threads of one block"
    if race.i == race.j:
        message = f"{prefix}global-memory race on `{obj}`: {where} {PLURAL[ka]} the same " \
                  "bytes"
    else:
        message = f"{prefix}global-memory race on `{obj}`: a {_noun(ka)} here and a " \
                  f"{_noun(kb)} at line {_line(b.insn)} by {where}"
    if not race.grid_known and race.cross_block:
        message += " when the grid has more than one block"
    t1, t2 = _who(finder, hit.t1, hit.b1), _who(finder, hit.t2, hit.b2)
    n = min(a.width, b.width)
    span = f"byte {hit.byte}" if n == 1 else f"bytes {hit.byte}-{hit.byte + n - 1}"
    label = f"{t1} {VERB[ka]} {span} of `{obj}`" + \
        (f" and {t2} {VERB[kb]} them" if race.i == race.j else "")
    related = [Related(rc.span_of(b.insn), f"{t2} {VERB[kb]} them here")] \
        if race.i != race.j and b.insn.span is not None else []
    notes = [f"address here = {address_text(a.address)}"]
    if race.i != race.j:
        notes.append(f"address at line {_line(b.insn)} = {address_text(b.address)}")
    if race.cross_block and hit.b1[1:] == hit.b2[1:] and _free(finder, race):
        notes.append("the address does not depend on the block index: every block "
                     "touches the same bytes")
    if not finder.space.exact:
        notes.append(f"block shape unknown: threads taken as one row of {finder.space.n}")
    severity = Severity.ERROR if race.sure else Severity.WARNING
    if race.cross_block and not race.grid_known and not finder.block_aware:
        # a kernel that never reads `%ctaid`/`%nctaid`, launched without a grid: most
        # likely a single-block kernel, where the finding does not apply
        severity = Severity.NOTE
        notes.append("the kernel never reads `%ctaid` or `%nctaid`: with a grid of one "
                     "block there is no race")
    return rule.diagnostic(
        rc, a.insn, message, severity=severity,
        certainty=Certainty.DEFINITE if race.sure else Certainty.POSSIBLE, label=label,
        notes=notes, related=related, help=_help(race, finder),
        details={"object": obj, "kinds": f"{_kind(ka)}-{_kind(kb)}",
                 "other_line": _line(b.insn), "threads": [hit.t1, hit.t2],
                 "blocks": [list(hit.b1), list(hit.b2)], "byte": hit.byte,
                 "cross_block": race.cross_block})


def _free(finder, race) -> bool:
    return bool(finder._free(finder.finder.evaluated(race.i)))  # noqa: SLF001


def _help(race, finder) -> str:
    if not race.cross_block:
        return "put `bar.sync 0` (`__syncthreads()`) between the two accesses, or use an atomic"
    if _free(finder, race):
        return "index by the thread's global index (`blockIdx.x * blockDim.x + " \
               "threadIdx.x`), or let one block write (`if (blockIdx.x == 0)`)"
    return "give each block its own elements, or combine the blocks' values with an " \
           "atomic"


def _who(finder, t: int, block: tuple[int, int, int]) -> str:
    b = block[0] if block[1:] == (0, 0) else f"({block[0]},{block[1]},{block[2]})"
    return f"{finder.space.name(t)} of block {b}"


def _kind(k: str) -> str:
    return "write" if k == "store" else "read"


def _noun(k: str) -> str:
    return "write" if k == "store" else "read"


def _line(insn: Instruction) -> int | None:
    return insn.span.line if insn.span is not None else None


__all__ = ["GlobalMemoryRace"]
