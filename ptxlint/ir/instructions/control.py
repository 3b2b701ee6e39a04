"""Control flow: branches, calls, returns, thread exit, traps and debug events."""
from __future__ import annotations

from ..instruction import Instruction
from ..operands import Operand, ParenList, Symbol, Vector
from ..traits import Branch, Call, Terminator


class Bra(Branch, opcode="bra"):
    """bra{.uni} tgt: jump to label tgt (conditional under a guard); .uni: the warp agrees"""

    __slots__ = ()
    arity = (1, 1)
    allowed_mods = frozenset({"uni"})


class BrxIdx(Branch, opcode="brx.idx"):
    """brx.idx{.uni} index, tlist: jump to entry index of the .branchtargets list tlist"""

    __slots__ = ()
    arity = (2, 2)
    target_index = 1
    allowed_mods = frozenset({"uni"})

    @property
    def index(self) -> Operand | None:
        return self.operands[0] if self.operands else None

    @property
    def target_list(self) -> str | None:
        """Name of the `.branchtargets` declaration the IR builder resolves."""
        op = self.operands[1] if len(self.operands) > 1 else None
        return op.name if isinstance(op, Symbol) else None

    @property
    def targets(self) -> list[str]:
        """The labels, once the builder has replaced tlist by its `{L1, L2, ...}`
        (a Vector or ParenList of symbols); empty while only the list name is known."""
        op = self.operands[1] if len(self.operands) > 1 else None
        if isinstance(op, (Vector, ParenList)):
            items = op.elements if isinstance(op, Vector) else op.items
            return [s.name for s in items if isinstance(s, Symbol)]
        return []


class CallInst(Call, opcode="call"):
    """call{.uni} {(ret-params),} func{, (params)}{, proto|targets}: call a device function (direct or through a register)"""

    __slots__ = ()
    arity = (1, 4)
    allowed_mods = frozenset({"uni"})


class Ret(Terminator, opcode="ret"):
    """ret{.uni}: return from the current function"""

    __slots__ = ()
    arity = (0, 0)
    allowed_mods = frozenset({"uni"})


class Exit(Terminator, opcode="exit"):
    """exit: terminate the executing thread"""

    __slots__ = ()
    arity = (0, 0)
    allowed_mods = frozenset()


class Trap(Terminator, opcode="trap"):
    """trap: abort execution (the launch fails with an error)"""

    __slots__ = ()
    arity = (0, 0)
    allowed_mods = frozenset()


class Brkpt(Instruction, opcode="brkpt"):
    """brkpt: suspend execution for the debugger"""

    __slots__ = ()
    arity = (0, 0)
    allowed_mods = frozenset()


class Pmevent(Instruction, opcode="pmevent"):
    """pmevent a | pmevent.mask a: signal performance-monitor event(s) a"""

    __slots__ = ()
    arity = (1, 1)
    allowed_mods = frozenset({"mask"})
