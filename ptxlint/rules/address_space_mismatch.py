"""`address-space-mismatch`: a state-space-qualified access or conversion given an
address that provably belongs to another space."""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics import Certainty, Diagnostic, Severity
from ..domains.space import Region
from ..ir.instructions import memory
from ..ir.operands import Address, Symbol
from .base import Rule, RuleContext
from .memory_sites import Site, memory_sites

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
    Follows where each address comes from (a variable's state space: `mov.u32 %r, tile`
    is a `.shared` window address; a kernel pointer parameter's global buffer: a generic
    address, turned into a global one by `cvta.to.global`; every `cvta` conversion) and
    reports an instruction that names a state space (`ld.shared`, `st.global`,
    `atom.shared`, `cp.async.ca.shared.global`, `cvta.to.shared` ...) whose space cannot
    reach that address:

    | Instruction | Address | `instruction_space` / `address_space` |
    |---|---|---|
    | `ld.shared` | a global pointer | `shared` / `global` |
    | `ld.global` | the `.shared` window address of a variable | `global` / `shared` |
    | `ld.global` | a generic address of shared memory (after `cvta.shared`) | `global` / `shared` |
    | `ld.shared` (`.local`, `.const`) | a generic address of shared memory never converted with `cvta.to.shared` | `shared` / `generic` |
    | generic `ld` | a `.shared`/`.local`/`.const` window address held in a register | `generic` / `shared` |
    | `cvta.to.shared` | a global pointer | `shared` / `global` |
    | `cvta.to.shared` / `cvta.shared` | an address already in the target form | `shared` / `shared` or `generic` |

    Global memory has no separate window (its generic and global addresses coincide), so
    `ld.global` through an unconverted kernel pointer is not reported, and a generic `ld`
    written with a variable name (`ld.f32 %f1, [tile]`) is left to the assembler, which
    takes the variable's generic address. Addresses of unknown origin are never reported.

    Details: `instruction_space`, `address_space`, `object` (the variable or pointer
    parameter the address belongs to, when known).

    ## Why is this bad?
    Each state space is its own address window: a shared-memory address is a small
    offset inside the block's shared memory; handed to the global memory unit it names
    some unrelated global location (usually unmapped: an illegal-address error that aborts
    the context). A global or generic address handed to `ld.shared` is far outside the
    shared window and reads garbage or faults. `cvta` converts between a window and the
    generic space of *one* space: converting a global pointer with `cvta.to.shared`
    produces a meaningless shared offset.

    ## Certainty
    An error, reported only when the address's space is proven (never for an address of
    unknown origin).

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

    - Use the access that matches the address: `ld.global` for global pointers, `ld.shared`
      for shared window addresses, a generic `ld` for generic addresses.
    - Convert generic addresses before a window access (`cvta.to.shared`), and window
      addresses before a generic one (`cvta.shared`); convert the pointer into the space it
      belongs to (`__cvta_generic_to_shared(&tile[i])`, `cvta_wrong_pointer.ok`).

    ## Limitations
    - Provenance is lost when an address goes through memory (a pointer stored and loaded
      back) or through operations the analysis does not follow (bit tricks, `mapa`):
      such accesses are not checked.
    - Kernel parameters are taken to point into global memory; a parameter that holds a
      shared-memory address (possible with `__grid_constant__` tricks) would be misjudged.
    - `.param` spaces (`cvta.param`, `ld.param::entry` through generic addresses) are not
      checked.

    ## Samples
    Under `ptx_samples/address-space-mismatch/`, each with a clean twin:

    - `shared_via_global.bad` (hand-written): `ld.shared` through a global pointer.
    - `cvta_wrong_pointer.bad` (from CUDA): converts the wrong pointer for an inline-asm
      shared store, `__cvta_generic_to_shared(in + i)` with `in` a global buffer.
    - `global_of_shared.bad` (hand-written): `ld.global` of a shared tile's address.
    - `generic_shared_as_global.bad` (hand-written): `ld.global` through `cvta.shared` of
      the tile.

    ## Suppress
    `--disable address-space-mismatch` on the command line, or
    `disable = ["address-space-mismatch"]` in `[tool.ptxlint]`; one line:
    `// ptxlint: disable=address-space-mismatch` (`docs/suppression.md`).
    """

    def check(self, rc: RuleContext) -> Iterator[Diagnostic]:
        for site in memory_sites(rc.facts):
            rc.deadline.check()
            found = access_mismatch(site)
            if found is not None:
                yield self._access(rc, site, found)
        for insn in rc.facts.function.instructions:
            if isinstance(insn, memory.Cvta) and len(insn.operands) > 1:
                state = rc.facts.state_before(insn)
                if state is None:
                    continue  # unreachable
                source = rc.facts.value_of(insn.operands[1], state)
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
