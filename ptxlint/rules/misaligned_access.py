"""`misaligned-access`: an address that is not a multiple of the access width."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ..diagnostics import Certainty, Diagnostic, Severity
from ..domains.align import Congruence
from ..interp.context import ASSUMED_BUFFER_ALIGN
from ..ir.instructions import async_copy
from .alignment_condition import AlignmentSearch, sources
from .base import Rule, RuleContext
from .out_of_bounds import Site, declaration, memory_sites, spaces_agree, with_severity
from .uncoalesced_access import object_name


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
    Proves, from the address's congruence and the alignment of the object it points
    into, that every load, store, atomic or copy is aligned to its size (a `.v4.f32`
    access to 16 bytes, an `.f64` one to 8). An error means the address is misaligned
    in every execution. A vector or 8-byte-or-wider access that cannot be shown aligned
    is a warning when the PTX itself leaves it so (the object's declared `.align`, a
    thread index stepping the address by a size that is not a multiple of the width,
    arithmetic on constants and block indices), and a note when values the host
    chooses decide (a parameter: "unless `k` % 4 == 0", found by re-analysing with the
    parameter a multiple; data loaded from memory). A kernel pointer parameter is the
    256-byte aligned start of a cudaMalloc'd buffer: `.ptr .align N` promises N and
    says nothing against more (NVRTC writes `.align 1` for sm_100); a note says when a
    finding depends on that.

    ## Why is this bad?
    The memory units only perform naturally aligned accesses: a misaligned address
    raises `cudaErrorMisalignedAddress`, which aborts the kernel and poisons the CUDA
    context. Vector loads are where this bites, after a pointer cast such as
    `reinterpret_cast<const float4*>(p + 1)`.

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

    ## Suppress
    `--disable misaligned-access` on the command line, or
    `disable = ["misaligned-access"]` in `[tool.ptxlint]`.
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
            for other in memory_sites(facts):
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
