"""`misaligned-access`: an address that is not a multiple of the access width."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ..diagnostics import Certainty, Diagnostic, Severity
from ..domains.align import Congruence
from ..interp.context import ASSUMED_BUFFER_ALIGN
from ..ir.instructions import async_copy
from .base import Rule, RuleContext
from .out_of_bounds import Site, declaration, memory_sites, spaces_agree, with_severity


@dataclass(frozen=True)
class Alignment:
    """What is known of an access's absolute address."""

    cong: Congruence
    object: str | None  # the object the address points into, when known
    object_align: int  # that object's alignment (1 when unknown)
    assumed: bool  # object_align is the cudaMalloc assumption, not a declaration


def required(site: Site) -> int:
    """The alignment PTX requires: the access size (a bulk copy: 16 bytes)."""
    if isinstance(site.insn, (async_copy.CpAsyncBulk, async_copy.CpReduceAsyncBulk)):
        return 16
    return site.width


def alignment_of(rc: RuleContext, site: Site) -> Alignment:
    v, ctx = site.address, rc.facts.ctx
    r = v.region
    if r is None or r.obj is None:
        return Alignment(v.cong, None, 1, False)  # the absolute address itself
    var = declaration(rc, r.obj, site.insn)
    is_buffer = var is not None and r.space != "param" and var in rc.kernel.params
    if is_buffer:
        align = ctx.object_align(r.obj)
        assumed = getattr(var, "ptr_align", None) is None
    else:
        align, assumed = (var.alignment if var is not None else 1), False
    base = Congruence(max(0, align.bit_length() - 1), 0)
    return Alignment(v.cong.add(base), r.obj, align, assumed)


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
    in every execution; a warning that a vector or 8-byte-or-wider access cannot be
    shown aligned. A kernel pointer parameter is assumed to hold the 256-byte aligned
    start of a cudaMalloc'd buffer (a `.ptr.align N` attribute says otherwise); a note
    says when a finding depends on that.

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
        for site in memory_sites(rc.facts):
            rc.deadline.check()
            need = required(site)
            if need <= 1 or need & (need - 1):
                continue
            if site.address.region is not None and not spaces_agree(site):
                continue  # address-space-mismatch reports it
            found = self._judge(rc, site, need)
            if found is not None:
                yield found

    def _judge(self, rc: RuleContext, site: Site, need: int) -> Diagnostic | None:
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
        kind, notes = site.verb, self._notes(a)
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
        unknown_origin = a.object is None and cong.is_top
        message = (f"{need}-byte {kind} may be misaligned: " +
                   ("the alignment of its address is unknown" if unknown_origin else
                    f"the address is only known to be {proved}-byte aligned"))
        d = self.diagnostic(
            rc, site.insn, message, severity=Severity.WARNING, certainty=Certainty.POSSIBLE,
            label="the pointer comes from memory or arithmetic the analysis cannot follow"
            if unknown_origin else offset_text(site, a), notes=notes,
            help=f"keep the offset from {where} a multiple of {need} (e.g. index "
            f"{need}-byte elements), or use narrower accesses", details=details)
        return with_severity(d, Severity.NOTE) if unknown_origin else d

    @staticmethod
    def _notes(a: Alignment) -> list[str]:
        if a.object is None:
            return []
        if a.assumed:
            return [f"pointer alignment unknown: assuming the {ASSUMED_BUFFER_ALIGN}-byte "
                    f"alignment of cudaMalloc for `{a.object}`"]
        return [f"`{a.object}` is {a.object_align}-byte aligned"]


__all__ = ["MisalignedAccess", "alignment_of"]
