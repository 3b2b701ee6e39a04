"""`shared-memory-limit`: a kernel that asks for more shared memory per block than its
target has."""
from __future__ import annotations

import re
from collections.abc import Iterator

from ..diagnostics import Certainty, Diagnostic, Severity
from ..ir.instruction import Instruction
from ..ir.module import Function, Module, Variable
from ..ir.operands import Register
from ..ir.traits import Call
from .base import Rule, RuleContext

# a name in an operand's text (`tile`, `tile+16`), not a register (`%r1`)
_NAME = re.compile(r"(?<![%\w$.])[A-Za-z_$][\w$]*")
_ORIGIN = {"--arch": "the arch option: --arch, [tool.ptxlint] arch or the API's arch=", ".target": "the module's .target",
           "default": "ptxlint's default target"}


class SharedMemoryLimit(Rule, id="shared-memory-limit", severity=Severity.ERROR):
    """A kernel needs more shared memory per block than its target allows.

    ## What it does
    Adds up the static shared memory of each kernel: the `.shared` variables it
    declares, those of the device functions it calls, and the module-scope `.shared`
    variables any of them names (ptxas allocates only those), leaving out `.extern`
    (dynamic) arrays. It reports

    - static shared memory above 48 KiB (`static_shared_limit`, the same on every
      target): ptxas rejects the kernel ("uses too much shared data");
    - static plus the launch's dynamic shared memory (`smem=` in a launch comment or
      `--launch`) above the most a block may have on the target
      (`max_shared_per_block`: 48 KiB on sm_5x/6x, 99 KiB on sm_86/89/120, 163 KiB on
      sm_80, 227 KiB on sm_90 and sm_100; `docs/arch.md`): the launch fails.

    The target is `--arch`, else the module's `.target`, else sm_90; the message says
    which. Details: `static_bytes`, `dynamic_bytes` (None for the static check), `limit`,
    `target`.

    ## Why is this bad?
    A kernel over the static limit does not assemble. A launch asking for more than the
    block maximum fails with `cudaErrorInvalidValue` and the kernel never runs, which is
    easy to miss when errors are not checked after the launch. Dynamic shared memory
    above 48 KiB also needs `cudaFuncSetAttribute(kernel,
    cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)` before the launch.

    ## Certainty
    An error, always definite: the sizes are declared, and the dynamic size is the one
    the launch states. Without a stated dynamic size only the static check is made.

    ## Example
    ```ptx
    .shared .align 4 .b8 tile[65536];   // 64 KiB of static shared memory
    ```

    ## Use instead
    ```ptx
    .extern .shared .align 4 .b8 tile[];  // dynamic: sized at launch, with the opt-in
    ```

    - Move large arrays to dynamic shared memory (`extern __shared__`) and raise the
      block's limit with `cudaFuncSetAttribute` before the launch.
    - Shrink the tile, or target a GPU with more shared memory per block.

    ## Limitations
    - The static size is the sum of the declared sizes; ptxas also pads between
      variables for their alignment, so a kernel just under a limit may still exceed it.
    - Shared memory the runtime reserves per block (1 KiB on sm_80 and later) is not
      counted.
    - Distributed shared memory of a cluster is not checked.

    ## Samples
    Under `ptx_samples/shared-memory-limit/`, with a clean twin:

    - `launch_too_big.bad` (hand-written): a 32 KiB static tile and 200 KiB of dynamic
      shared memory on sm_90 (227 KiB per block); the twin launches with 192 KiB.

    ## Suppress
    `--disable shared-memory-limit` on the command line, or
    `disable = ["shared-memory-limit"]` in `[tool.ptxlint]`; one line:
    `// ptxlint: disable=shared-memory-limit` (`docs/suppression.md`).
    """

    def check(self, rc: RuleContext) -> Iterator[Diagnostic]:
        target, kernel = rc.arch, rc.function
        static = sum(v.byte_size or 0 for v in static_shared(rc.module, kernel, rc.facts.function.instructions))
        where = f"{target.target} ({_ORIGIN.get(target.origin, target.origin)})"
        span = kernel.span
        if static > target.static_shared_limit:
            yield self.diagnostic(
                rc, span, f"`{kernel.name}` declares {static} bytes of static shared memory; "
                f"{where} allows {target.static_shared_limit}",
                certainty=Certainty.DEFINITE, label="ptxas rejects this kernel",
                help="move the largest arrays to dynamic shared memory (`extern __shared__`)",
                details=_details(static, None, target.static_shared_limit, target.target))
            return
        dynamic = rc.launch.dynamic_smem if rc.launch is not None else None
        if dynamic is not None and static + dynamic > target.max_shared_per_block:
            yield self.diagnostic(
                rc, span, f"`{kernel.name}` needs {static + dynamic} bytes of shared memory "
                f"per block ({static} static + {dynamic} dynamic); {where} allows "
                f"{target.max_shared_per_block}", certainty=Certainty.DEFINITE,
                label="this launch fails", help="launch with less dynamic shared memory",
                details=_details(static, dynamic, target.max_shared_per_block, target.target))


def _details(static: int, dynamic: int | None, limit: int, target: str) -> dict:
    return {"static_bytes": static, "dynamic_bytes": dynamic, "limit": limit,
            "target": target}


def static_shared(module: Module, kernel: Function,
                  listed: list[Instruction] | None = None) -> list[Variable]:
    """The non-extern `.shared` variables a kernel gets: declared in it or in a device
    function it calls, or declared at module scope and named by one of them. `listed`:
    the kernel's instructions, when the caller has them listed."""
    def listing(fn: Function) -> list[Instruction]:
        return listed if fn is kernel and listed is not None else fn.instructions

    functions, out = _reachable(module, kernel, listing), []
    for fn in functions:
        out += [v for v in fn.variables if _is_static_shared(v)]
    scoped = [v for v in module.variables if _is_static_shared(v)]
    if scoped:  # the names the functions use: only then worth reading every operand
        names = set(_NAME.findall(" ".join(
            str(op) for fn in functions for insn in listing(fn) for op in insn.operands
            if not (isinstance(op, Register) and op.name[0] == "%"))))  # no name in `%r1`
        out += [v for v in scoped if v.name in names]
    return out


def _is_static_shared(v: Variable) -> bool:
    return v.space == "shared" and not v.is_extern


def _reachable(module: Module, kernel: Function, listing) -> list[Function]:
    """The kernel and the device functions it calls, directly or not (direct calls)."""
    seen, todo = {id(kernel): kernel}, [kernel]
    while todo:
        for insn in listing(todo.pop()):
            if isinstance(insn, Call) and not insn.is_indirect and insn.callee is not None:
                callee = module.function(str(insn.callee))
                if callee is not None and callee.body is not None and id(callee) not in seen:
                    seen[id(callee)] = callee
                    todo.append(callee)
    return list(seen.values())


__all__ = ["SharedMemoryLimit", "static_shared"]
