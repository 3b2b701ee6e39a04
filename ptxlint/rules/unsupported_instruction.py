"""`unsupported-instruction`: an instruction the target architecture does not have
(`arch.FEATURES`)."""
from __future__ import annotations

from collections.abc import Iterator

from ..arch import Arch, Feature
from ..diagnostics import Certainty, Diagnostic, Severity
from .base import Rule, RuleContext

# how the message names where the target came from (`Arch.origin`)
_ORIGIN = {"--arch": "the arch option: --arch, [tool.ptxlint] arch or the API's arch=",
           ".target": "the module's .target"}


class UnsupportedInstruction(Rule, id="unsupported-instruction", severity=Severity.ERROR,
        checks_callees=True):
    """An instruction the target architecture does not have.

    ## What it does
    Compares every instruction of a kernel (and of the device functions it calls)
    with the PTX ISA's "Target ISA notes": `redux.sync` and `cp.async` need sm_80,
    `mma` on FP8 sm_89, `elect.sync`, `stmatrix`, `cp.async.bulk` (TMA), the `mbarrier`
    transaction counts and the cluster instructions sm_90, `wgmma` the arch-specific
    target sm_90a, `tcgen05` sm_100a (or an sm_100f family target), and so on
    (`FEATURES` in `ptxlint/arch.py`; each entry is checked against ptxas). The target is
    `--arch` when given, else the module's `.target`; the message says which, names the
    instruction and the first target that has it.

    Arch-specific features (`wgmma`, `setmaxnreg`, `tcgen05`, `tensormap.replace`) exist
    only on the targets with an `a` (or `f`) suffix that list them: sm_90 lacks `wgmma`
    although sm_90a has it, and sm_100a lacks it too.

    Details: `opcode` (the full dotted opcode), `feature`, `target`, `minimum` (the
    first target that has it), `origin` (`--arch` or `.target`).

    ## Why is this bad?
    ptxas rejects the module for that target ("Feature 'redux' requires .target sm_80
    or higher", "Instruction 'wgmma.fence' not supported on .target 'sm_90'"), and a
    driver JIT-compiling the PTX for an older GPU fails the same way at load time. The
    usual cause is a target that is too low for the code (an `-arch` left at an old
    default) or inline `asm` written for a newer GPU without an architecture guard.

    ## Certainty
    An error, always definite: whether the target has the instruction does not depend
    on the execution. Nothing is reported when neither `--arch` nor `.target` names a
    target ptxlint knows (a kernel without a target is not judged against the default).

    ## Example
    ```ptx
    // .target sm_75
    redux.sync.add.u32  %r2, %r1, 0xffffffff;   // needs sm_80
    ```

    ## Use instead
    ```ptx
    // .target sm_80
    redux.sync.add.u32  %r2, %r1, 0xffffffff;
    ```

    - Raise the target (`.target sm_80`, `nvcc -arch=sm_80`), or keep the instruction
      out of builds for older GPUs (`#if __CUDA_ARCH__ >= 800` around the inline `asm`)
      and use an equivalent there (a `shfl.sync` reduction for `redux.sync`).
    - For an arch-specific feature, compile for the suffixed target (`sm_90a`): the code
      then runs on that GPU only.

    ## Limitations
    - Only the instructions and forms `FEATURES` lists are judged; an instruction it
      does not list is taken to exist on every target.
    - The PTX ISA version a feature needs (`.version`) is not checked, only the target.
    - Special registers (`%clusterid`) and directives (`.maxnreg`, `.reqnctapercluster`)
      are not checked.

    ## Samples
    Under `ptx_samples/unsupported-instruction/`, each with a clean twin at the right
    target (the `.bad` samples do not assemble, which is their point):

    - `redux_below_sm80.bad` (hand-written): a warp sum with `redux.sync` on sm_75.
    - `elect_below_sm90.bad` (hand-written): `elect.sync` on sm_80.

    ## Suppress
    `--disable unsupported-instruction` on the command line, or
    `disable = ["unsupported-instruction"]` in `[tool.ptxlint]`; one line:
    `// ptxlint: disable=unsupported-instruction` (`docs/suppression.md`).
    """

    def check(self, rc: RuleContext) -> Iterator[Diagnostic]:
        target = rc.arch
        if target.origin not in _ORIGIN:
            return  # no target was given: nothing to judge the kernel against
        lacks: dict[tuple, Feature | None] = {}  # per spelling: few, and asked per insn
        for insn in rc.facts.function.instructions:
            spelling = (insn.opcode, insn.mods)
            feature = lacks.get(spelling, False)
            if feature is False:
                feature = lacks[spelling] = target.lacks(insn.full_opcode)
            if feature is not None:
                yield self._report(rc, insn, feature, target)

    def _report(self, rc: RuleContext, insn, feature: Feature, target: Arch) -> Diagnostic:
        origin = _ORIGIN[target.origin]
        if feature.targets:
            needs = f"an arch-specific target ({feature.minimum})"
            notes = [f"`{feature.name}` exists only on "
                     f"{', '.join(sorted(feature.targets, key=_order))}"]
            help = f"compile for {feature.minimum} (the code then runs on that GPU only)"
        else:
            needs, notes = f"{feature.minimum} or higher", []
            help = (f"raise the target to {feature.minimum}, or keep this code out of "
                    f"builds for {target.name} (`#if __CUDA_ARCH__ >= "
                    f"{feature.since[0] * 100 + feature.since[1] * 10}`)")
        return self.diagnostic(
            rc, insn.span, f"`{insn.full_opcode}` needs {needs}; the target is "
            f"{target.target} ({origin})", certainty=Certainty.DEFINITE,
            label=f"`{feature.name}` is not available on {target.target}", notes=notes,
            help=help, details={"opcode": insn.full_opcode, "feature": feature.name,
                                "target": target.target, "minimum": feature.minimum,
                                "origin": target.origin})


def _order(target: str) -> tuple[int, str]:
    return int(target[3:-1]), target[-1]


__all__ = ["UnsupportedInstruction"]
