"""`address-space-mismatch`: a state-space-qualified access or conversion given an
address that provably belongs to another space."""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics import Certainty, Diagnostic, Severity
from ..domains.space import Region
from ..interp.transfer import value_of
from ..ir.instructions import memory
from ..ir.operands import Address, Symbol
from .base import Rule, RuleContext
from .out_of_bounds import Site, memory_sites

WINDOWS = ("global", "shared", "local", "const", "param")
# A generic address of these spaces is not an offset in their window (global memory
# has no separate window: its generic and global addresses coincide).
OWN_WINDOW = ("shared", "local", "const")


def describe(r: Region) -> str:
    """`a generic address of shared memory (`tile`)`, `a .global address (`in`)`."""
    what = f"`{r.obj}`" if r.obj else "object unknown"
    if r.generic:
        return f"a generic address of {r.space} memory ({what})"
    return f"a `.{r.space}` address ({what})"


def access_mismatch(site: Site) -> str | None:
    """The space the address belongs to, when the instruction's space cannot reach it:
    `.shared` through a global address, `.global` through a shared one, `.shared`
    through a generic (unconverted) shared address, generic through a window address."""
    r = site.address.region
    if r is None:
        return None
    space = site.space
    if space in WINDOWS:
        if r.space != space:
            return r.space
        if r.generic and space in OWN_WINDOW:
            return "generic"
        return None
    if space == "generic" and not r.generic and r.space in OWN_WINDOW:
        addr = site.insn.address
        if isinstance(addr, Address) and isinstance(addr.base, Symbol):
            return None  # `ld [smem]`: the assembler takes the variable's generic address
        return r.space
    return None


def cvta_mismatch(insn: memory.Cvta, r: Region | None) -> str | None:
    """`cvta.to.shared` wants a generic address of shared memory, `cvta.shared` a
    shared window address: anything else is converted from the wrong space."""
    if r is None or insn.space not in WINDOWS:
        return None
    if r.space != insn.space:
        return r.space
    if insn.space in OWN_WINDOW and r.generic == insn.to_generic:
        return "generic" if r.generic else r.space
    return None


class AddressSpaceMismatch(Rule, id="address-space-mismatch", severity=Severity.ERROR,
        checks_callees=True):
    """A state-space-qualified access or `cvta` is given an address of another space.

    ## What it does
    Follows where each address comes from (a variable's state space, a kernel pointer
    parameter's global buffer, `cvta` conversions) and reports an `ld`/`st`/`atom`/copy
    whose state space cannot reach it: `ld.shared` through a global pointer, `ld.global`
    of a `.shared` variable's address, a `.shared` access through a generic address
    that was never converted with `cvta.to.shared`, a generic access through a
    `.shared`/`.local`/`.const` window address, and `cvta` from the wrong space.

    ## Why is this bad?
    Each state space is its own address window: a shared-memory offset is a small
    number that means nothing to the global memory unit, and a global (or generic)
    address is far outside the shared window. The access reads or writes an unrelated
    location, or faults with an illegal address that aborts the context.

    ## Example
    ```ptx
    ld.param.u64       %rd1, [buf];      // buf: a kernel pointer parameter (global)
    cvta.to.global.u64 %rd2, %rd1;
    ld.shared.f32      %f1, [%rd2];
    ```

    ## Use instead
    ```ptx
    ld.param.u64       %rd1, [buf];
    cvta.to.global.u64 %rd2, %rd1;
    ld.global.f32      %f1, [%rd2];
    ```

    ## Suppress
    `--disable address-space-mismatch` on the command line, or
    `disable = ["address-space-mismatch"]` in `[tool.ptxlint]`.
    """

    def check(self, rc: RuleContext) -> Iterator[Diagnostic]:
        for site in memory_sites(rc.facts):
            rc.deadline.check()
            found = access_mismatch(site)
            if found is not None:
                yield self._access(rc, site, found)
        for insn in rc.function.instructions:
            if isinstance(insn, memory.Cvta) and len(insn.operands) > 1:
                state = rc.facts.state_before(insn)
                if state is None:
                    continue  # unreachable
                source = value_of(insn.operands[1], state, rc.facts.ctx)
                found = cvta_mismatch(insn, source.region)
                if found is not None:
                    yield self._cvta(rc, insn, source.region, found)

    def _access(self, rc: RuleContext, site: Site, found: str) -> Diagnostic:
        r = site.address.region
        assert r is not None
        qualifier = "generic" if site.space == "generic" else f"`.{site.space}`"
        if found == "generic":
            help = f"convert the address with `cvta.to.{site.space}` first"
        elif site.space == "generic":
            help = f"convert the address with `cvta.{r.space}` or use `.{r.space}` accesses"
        else:
            help = f"use a `.{r.space}` (or generic) access for this address"
        return self.diagnostic(
            rc, site.insn, f"{qualifier} {site.verb} through {describe(r)}",
            certainty=Certainty.DEFINITE, label=f"address = {site.address}",
            help=help, details={"instruction_space": site.space, "address_space": found,
                                "object": r.obj})

    def _cvta(self, rc: RuleContext, insn: memory.Cvta, r: Region, found: str) -> Diagnostic:
        op = f"cvta.{'' if insn.to_generic else 'to.'}{insn.space}"
        wants = f"a `.{insn.space}` window address" if insn.to_generic else \
            f"a generic address of `.{insn.space}`"
        return self.diagnostic(
            rc, insn, f"`{op}` of {describe(r)}", certainty=Certainty.DEFINITE,
            label=f"`{op}` expects {wants}",
            help="convert addresses only from the space they belong to",
            details={"instruction_space": insn.space, "address_space": found,
                     "object": r.obj})


__all__ = ["AddressSpaceMismatch", "access_mismatch", "cvta_mismatch"]
