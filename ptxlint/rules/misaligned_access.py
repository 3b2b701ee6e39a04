"""`misaligned-access`: an address that is not a multiple of the access width."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ..diagnostics import Certainty, Diagnostic, Severity
from ..domains.align import Congruence
from ..interp.facts import ASSUMED_BUFFER_ALIGN
from ..ir.instructions import async_copy
from .alignment_condition import AlignmentSearch, sources
from .base import Rule, RuleContext
from .memory_sites import Site, declaration, memory_sites, spaces_agree, with_severity
from .wording import object_name


@dataclass(frozen=True)
class Alignment:
    """What is known of an access's absolute address."""

    cong: Congruence
    object: str | None  # the object the address points into, when known
    object_align: int  # that object's alignment (1 when unknown)
    buffer: bool = False  # the object is the buffer a kernel pointer parameter names
    declared: int = 1  # a buffer's `.ptr .align N` (1: none)

    @property
    def assumed(self) -> bool:
        """object_align is the cudaMalloc assumption, not a declaration."""
        return self.buffer and self.declared < self.object_align


def required(site: Site) -> int:
    """The alignment PTX requires: the access size (a bulk copy: 16 bytes)."""
    if isinstance(site.insn, (async_copy.CpAsyncBulk, async_copy.CpReduceAsyncBulk)):
        return 16
    return site.width


def alignment_of(rc: RuleContext, site: Site) -> Alignment:
    """A kernel pointer parameter names a cudaMalloc'd buffer, 256-byte aligned: its
    `.ptr .align N` promises N and says nothing against more (NVRTC for sm_100 and
    sm_120 declares `.ptr .align 1` on every pointer)."""
    v = site.address
    r = v.region
    if r is None or r.obj is None:
        return Alignment(v.cong, None, 1)  # the absolute address itself
    var = declaration(rc, r.obj, site.insn)
    is_buffer = var is not None and r.space != "param" and var in rc.kernel.params
    declared = 1
    if is_buffer:
        align = rc.facts.ctx.object_align(r.obj)
        declared = getattr(var, "ptr_align", None) or 1
    else:
        align = var.alignment if var is not None else 1
    base = Congruence(max(0, align.bit_length() - 1), 0)
    return Alignment(v.cong.add(base), r.obj, align, is_buffer, declared)


def offset_text(site: Site, a: Alignment) -> str:
    v = site.address
    form = str(v.si) if v.aff.is_top else str(v.aff)
    return f"offset from `{a.object}` = {form}" if a.object else f"address = {form}"


def _bits(n: int) -> int:
    return n.bit_length() - 1


class MisalignedAccess(Rule, id="misaligned-access", severity=Severity.ERROR,
        checks_callees=True):
    """A memory access whose address is not a multiple of its width.

    ## What it does
    Checks that every load, store, atomic, reduction or copy is aligned to its access size:
    16 bytes for `ld.global.v4.f32` or `.b128`, 8 for `.f64`, `.u64` and `.v2.f32`, 4 for
    `.f32`; 16 for bulk copies (`cp.async.bulk`). Both the destination and the source of a
    copy are checked.

    The analysis tracks each address as an object plus a byte offset whose value modulo a
    power of two (its *congruence*) is known: `tile + 8*%tid.x + 4` is 4 modulo 8. The
    address's alignment is the offset's congruence combined with the object's own
    alignment:

    - a `.shared`/`.local`/`.const`/`.global`/`.param` variable: its `.align` (else its
      element size). A caller's `__local_depot` reached through a device function's
      pointer argument keeps its declared alignment in the callee;
    - the buffer a kernel pointer parameter points to: 256 bytes, the alignment cudaMalloc
      guarantees. A `.ptr .align N` attribute promises N and says nothing against more:
      nvcc and NVRTC declare every pointer parameter `.ptr .align 1` for sm_100 and sm_120,
      which is no evidence of misalignment. Every finding that depends on the assumption
      says so in a note ("pointer alignment unknown: assuming the 256-byte alignment of
      cudaMalloc for `in`"): a pointer into the middle of an allocation
      (`kernel<<<...>>>(p + 1)`) breaks it.

    When the host's values decide, the condition is searched on one parameter at a time
    (the parameters the address is computed from: all of them a multiple of 512 first, then
    each alone, bisecting the power of two), within a budget per kernel: 24 re-analyses,
    interpreting at most 30,000 instructions or twice the kernel's own analysis, whichever
    is more; kernels of more than 1,000 instructions are not re-analysed. A launch that
    gives the parameter's value makes the answer exact (aligned, or a warning or error).

    A scalar access narrower than 8 bytes whose alignment merely cannot be shown is not
    reported (its natural alignment is the type's own, which nvcc always keeps).

    Details: `width` (the required alignment in bytes), `alignment` (the largest power of
    two the address is proved to be a multiple of), `offset_residue` (the address modulo
    the width, as far as known); for a condition on a parameter also `parameter` and
    `multiple` (aligned when the parameter is a multiple of it).

    ## Why is this bad?
    The load/store units only perform naturally aligned accesses. A misaligned address
    raises `cudaErrorMisalignedAddress`: the kernel stops and the CUDA context is unusable
    until the process resets it. The usual source is a pointer cast that vectorises a copy,
    `reinterpret_cast<const float4*>(in + 1)`, or a wide value read out of a buffer of
    narrower elements at an odd index.

    ## Certainty
    | Severity | When |
    |---|---|
    | error (definite) | the known low bits of the address are not a multiple of the access size: every execution is misaligned |
    | warning (possible) | a vector access, or one of 8 bytes or more, that the PTX itself leaves unaligned: the object is declared with a smaller `.align` (a `.shared .align 4` array read as `.v4`), a thread index steps the address by a size that is not a multiple of the width (`4*%tid.x` read as 8-byte values: thread 1 is misaligned whenever thread 0 is not), or arithmetic on constants and block indices loses the alignment |
    | note (possible) | the same when the host's values decide: a kernel parameter without a launch value (the note states the condition, "may be misaligned unless `k` % 4 == 0", found by re-analysing the kernel with `k` a multiple of 2, 4, ...: the weakest one that proves the access aligned), data loaded from memory, a device function's arguments, or a pointer of unknown origin |

    ## Example
    ```ptx
    .shared .align 16 .b8 vals[2056];  // float vals[514]
    mov.u32           %r1, %tid.x;
    shl.b32           %r2, %r1, 3;
    mov.u32           %r3, vals;
    add.s32           %r4, %r3, %r2;
    ld.shared.v2.f32  {%f1, %f2}, [%r4+4];   // a float2 at &vals[2*tid + 1]
    ```

    ## Use instead
    ```ptx
    .shared .align 16 .b8 vals[2056];
    mov.u32           %r1, %tid.x;
    shl.b32           %r2, %r1, 3;
    mov.u32           %r3, vals;
    add.s32           %r4, %r3, %r2;
    ld.shared.v2.f32  {%f1, %f2}, [%r4+8];   // &vals[2*tid + 2]: 8-byte aligned
    ```

    - Keep vectorised views on whole vectors: pad a header to 16 bytes (`in + 4`,
      `vec4_offset.ok`), start a `double` at an even `int` index (`double_from_int.ok`),
      count a runtime offset in vector elements (`in + 2 * first`,
      `float2_param_offset.ok`).
    - Declare shared arrays read as vectors with a matching `.align` (`__align__(16)`).
    - Where the alignment really is unknown, use scalar accesses, or check the pointer at
      run time and take a vector path only when it is aligned.

    ## Limitations
    - Congruences are tracked modulo 512 at most; larger alignments are not needed by any
      PTX access.
    - A pointer passed into the middle of an allocation breaks the 256-byte assumption.
    - The condition names one parameter; an alignment that needs two (`a * b` with both
      unknown) is a note that names them without a condition.
    - Warp-cooperative accesses (`wmma.load/store`), tensor-memory and TMA operations are
      not checked.

    ## Samples
    Under `ptx_samples/misaligned-access/`, each with a clean twin:

    - `shared_pair.bad` (hand-written): a `float2` read at `&vals[2*tid + 1]`.
    - `vec4_offset.bad`: `reinterpret_cast<const float4*>(in + 1)` skips a one-float header:
      16-byte loads at 4 modulo 16.
    - `double_from_int.bad`: a `double` read at `&words[2*i + 1]`.
    - `float2_param_offset.bad`: `float2` loads from `in + first` with `first` a runtime
      count: a note, "may be misaligned unless `first` % 2 == 0".
    - `row_stats.bad`: rows of `K` floats read as `float4` (a note, unless `K` % 4 == 0)
      and a `float[]` shared array read back as `float4` (a warning: the PTX gives it
      `.align 4`).
    - `local_depot.bad`: a helper reads its caller's `.align 8` local array as `double2`
      pairs.
    - `block_moments.bad` (sm_100, `.ptr .align 1` parameters): a `double2` store one
      `double` into the buffer, an error.

    ## Suppress
    `--disable misaligned-access` on the command line, or
    `disable = ["misaligned-access"]` in `[tool.ptxlint]`; one line:
    `// ptxlint: disable=misaligned-access`.
    """

    def check(self, rc: RuleContext) -> Iterator[Diagnostic]:
        search = AlignmentSearch(rc)
        for site in memory_sites(rc.facts):
            rc.deadline.check()
            need = required(site)
            if need <= 1 or need & (need - 1):
                continue
            if site.address.region is not None and not spaces_agree(site):
                continue  # address-space-mismatch reports it
            found = self._judge(rc, site, need, search)
            if found is not None:
                yield found

    def _judge(self, rc: RuleContext, site: Site, need: int,
               search: AlignmentSearch) -> Diagnostic | None:
        a = alignment_of(rc, site)
        cong = a.cong
        if cong.is_bottom:
            return None
        known = min(cong.bits, _bits(need))
        residue = cong.residue % (1 << known) if known else 0
        if residue == 0 and cong.bits >= _bits(need):
            return None  # proved aligned
        wide = need >= 8 or site.insn.vector_width > 1
        if residue == 0 and not wide:
            return None  # a narrow scalar access: its alignment is the type's own
        proved = 1 << known if residue == 0 else residue & -residue
        kind, notes = site.verb, self._notes(a, need)
        details = {"width": need, "alignment": proved, "offset_residue": residue}
        where = f"`{a.object}`" if a.object else "its address"
        if residue:
            return self.diagnostic(
                rc, site.insn, f"misaligned {need}-byte {kind}: the address is "
                f"{residue} modulo {1 << known}",
                certainty=Certainty.DEFINITE,
                label=f"every address is {residue} bytes past a multiple of {1 << known}",
                notes=notes, help=f"make the offset from {where} a multiple of {need}, or "
                "use narrower accesses", details=details)
        if a.object is None:  # a pointer read from memory: the host's layout decides
            unknown = cong.is_top
            d = self.diagnostic(
                rc, site.insn, f"{need}-byte {kind} may be misaligned: " +
                ("the alignment of its address is unknown" if unknown else
                 f"the address is only known to be {proved}-byte aligned"),
                certainty=Certainty.POSSIBLE,
                label="the pointer comes from memory or arithmetic the analysis cannot follow",
                notes=notes, help=f"keep the address a multiple of {need}, or use narrower "
                "accesses", details=details)
            return with_severity(d, Severity.NOTE)
        return self._possible(rc, site, need, a, proved, details, search)

    def _possible(self, rc: RuleContext, site: Site, need: int, a: Alignment, proved: int,
                  details: dict, search: AlignmentSearch) -> Diagnostic:
        """An address only known to be `proved`-byte aligned: a warning when the PTX
        itself leaves it so (the object's declared alignment, the step between threads,
        arithmetic on constants and thread or block indices), a note with the condition
        when values the host chooses decide (a parameter, data loaded from memory)."""
        kind, notes, obj = site.verb, self._notes(a, need), f"`{a.object}`"
        message = f"{need}-byte {kind} may be misaligned: "
        keep = (f"keep the offset from {obj} a multiple of {need} (e.g. index {need}-byte "
                "elements), or use narrower accesses")
        warn = dict(severity=Severity.WARNING, certainty=Certainty.POSSIBLE, notes=notes,
                    details=details)
        if a.object_align < need and not a.buffer:
            return self.diagnostic(
                rc, site.insn, message + f"`{object_name(a.object)}` is declared with `.align {a.object_align}`",
                label=offset_text(site, a), help=f"declare {obj} with `.align {need}` "
                f"(`__align__({need})` in CUDA), or use narrower accesses", **warn)
        step = lane_step(site, rc.facts.ctx.bounds, need)
        if step is not None:
            index, c = step
            return self.diagnostic(
                rc, site.insn, message + f"the address steps by {c} bytes per `%{index}`",
                label=f"`%{index}` = 1 is {c % need} bytes past `%{index}` = 0's alignment "
                f"to {need}", help=keep, **warn)
        found = sources(rc, site.insn)
        if not found.external:
            return self.diagnostic(rc, site.insn, message + f"the address is only known to "
                                   f"be {proved}-byte aligned", label=offset_text(site, a),
                                   help=keep, **warn)
        cond = search.condition(site, found.params, need, self._aligned(rc, need))
        if cond is not None:
            name, m = cond
            d = self.diagnostic(
                rc, site.insn,
                f"{need}-byte {kind} may be misaligned unless `{name}` % {m} == 0",
                certainty=Certainty.POSSIBLE, label=offset_text(site, a),
                notes=[f"aligned for every `{name}` that is a multiple of {m} (re-analysed "
                       "with that assumption): the host must guarantee it"] + notes,
                help=f"check `{name} % {m} == 0` before the launch, or use narrower accesses "
                "when it does not hold", details={**details, "parameter": name, "multiple": m})
            return with_severity(d, Severity.NOTE)
        what = [f"`{p}`" for p in found.params]
        what += ["data loaded from memory"] if found.loaded else []
        what += ["the arguments of the call"] if found.arguments else []
        d = self.diagnostic(
            rc, site.insn, message + f"its alignment depends on {' and '.join(what)}",
            label=offset_text(site, a), help=keep, **warn)
        return with_severity(d, Severity.NOTE)

    @staticmethod
    def _aligned(rc: RuleContext, need: int):
        def aligned(facts, site: Site) -> bool:
            acc = facts.access_of(site.insn)  # its block replayed, not the whole kernel
            for other in memory_sites(facts, [acc] if acc is not None else []):
                if other.insn is site.insn and other.operand == site.operand:
                    cong = alignment_of(rc, other).cong
                    return cong.is_bottom or cong.is_multiple_of(need)
            return True  # not reached with this assumption
        return aligned

    @staticmethod
    def _notes(a: Alignment, need: int) -> list[str]:
        if a.object is None:
            return []
        if a.buffer and a.declared < need:
            return [f"pointer alignment unknown: assuming the {ASSUMED_BUFFER_ALIGN}-byte "
                    f"alignment of cudaMalloc for `{a.object}`"]
        if a.buffer:
            return [f"`{a.object}` is declared `.ptr .align {a.declared}`"]
        return [f"`{a.object}` is {a.object_align}-byte aligned"]


def lane_step(site: Site, bounds, need: int) -> tuple[str, int] | None:
    """(index, c) when consecutive values of a thread index move the address by a known
    c that is not a multiple of `need`: whatever the first thread's alignment, its
    neighbour's differs (for every launch with two threads along that index)."""
    aff = site.address.aff
    if aff.is_top or aff.is_bottom:
        return None
    for name, coeff in aff.coeffs:
        c = coeff.singleton()
        span = bounds.of(name)
        if c is not None and c % need and span.hi is not None and span.lo is not None \
                and span.hi > span.lo:
            return name, c
    return None


__all__ = ["MisalignedAccess", "alignment_of"]
