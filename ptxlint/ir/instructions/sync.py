"""Parallel synchronisation and communication: CTA and cluster barriers, memory
fences, mbarrier objects, warp votes/matches/reductions, launch control."""
from __future__ import annotations

from ..instruction import Instruction
from ..operands import Operand
from ..traits import Barrier, Call, HasDest, HasStateSpace, HasType, MemoryAccess
from .memory import SCOPES, SYNC_ALIGNED, Ordered, immediate, mods

SHARED_CTA = frozenset({"shared", "shared::cta"})
MBAR_SPACES = SHARED_CTA | {"shared::cluster"}
MBAR_SCOPES = frozenset({"cta", "cluster"})
SYNC_RESTRICT = frozenset({"sync_restrict::shared::cta", "sync_restrict::shared::cluster"})


class CtaBarrier(Barrier):
    """`bar`/`barrier` `.sync a{, b}`, `.arrive a, b`, `.red.op d, a{, b}, {!}c`:
    only the `.red` form writes a destination."""

    __slots__ = ()

    def _n_written(self) -> int:
        return 1 if "red" in self.mods else 0

    @property
    def dests(self) -> tuple[Operand, ...]:
        return self.operands[: self._n_written()]

    @property
    def sources(self) -> tuple[Operand, ...]:
        return self.operands[self._n_written():]

    @property
    def waits(self) -> bool:  # type: ignore[override]
        """`.arrive` signals without waiting for the other participants."""
        return "arrive" not in self.mods

    @property
    def barrier_id(self) -> Operand | None:
        srcs = self.sources
        return srcs[0] if srcs else None

    @property
    def thread_count(self) -> Operand | None:
        """Operand b; None when every thread of the CTA participates."""
        srcs = self.sources
        limit = 3 if "red" in self.mods else 2
        return srcs[1] if len(srcs) >= limit else None


BAR_MODS = frozenset({"cta", "sync", "arrive", "red", "popc", "and", "or", "u32", "pred"})


class Bar(CtaBarrier, opcode="bar"):
    """bar{.cta}.sync a{, b} | bar{.cta}.arrive a, b | bar{.cta}.red.op.type d, a{, b}, {!}c: aligned CTA barrier a over b threads"""

    __slots__ = ()
    arity = (1, 4)
    allowed_mods = BAR_MODS


class BarrierCta(CtaBarrier, opcode="barrier"):
    """barrier{.cta}.sync|.arrive|.red{.aligned} ...: CTA barrier; without .aligned threads of a warp may reach it separately"""

    __slots__ = ()
    arity = (1, 4)
    allowed_mods = BAR_MODS | {"aligned"}


class BarWarpSync(Instruction, opcode="bar.warp.sync"):
    """bar.warp.sync membermask: wait until every lane in membermask reaches this barrier"""

    __slots__ = ()
    arity = (1, 1)
    allowed_mods = frozenset()

    @property
    def member_mask(self) -> Operand | None:
        return self.operands[0] if self.operands else None


class BarrierCluster(Barrier, Ordered, opcode="barrier.cluster"):
    """barrier.cluster.arrive{.release|.relaxed}{.aligned} | barrier.cluster.wait{.acquire}{.aligned}: split barrier across the threads of a cluster"""

    __slots__ = ()
    arity = (0, 0)
    allowed_mods = frozenset({"arrive", "wait", "release", "relaxed", "acquire", "aligned"})

    @property
    def waits(self) -> bool:  # type: ignore[override]
        return "wait" in self.mods

    @property
    def is_aligned(self) -> bool:
        return "aligned" in self.mods


class Membar(Instruction, opcode="membar"):
    """membar.level | membar.proxy.proxykind: order this thread's memory accesses at cta/gl/sys level"""

    __slots__ = ()
    arity = (0, 0)
    allowed_mods = frozenset({"cta", "gl", "sys", "proxy", "alias"})


class Fence(Ordered, opcode="fence"):
    """fence{.sem}.scope | fence.acquire|release.sync_restrict::space.cluster | fence.mbarrier_init.release.cluster: memory-model fence"""

    __slots__ = ()
    arity = (0, 0)
    default_semantics = "acq_rel"
    allowed_mods = mods("sc", "acq_rel", "acquire", "release", SCOPES, "mbarrier_init",
                        SYNC_RESTRICT)


class FenceProxy(Ordered, HasStateSpace, opcode="fence.proxy"):
    """fence.proxy.proxykind{.space} | fence.proxy.to::from.sem.scope{ [a], size}: order accesses made through different memory proxies"""

    __slots__ = ()
    arity = (0, 2)
    allowed_mods = mods("alias", "async", "global", MBAR_SPACES, "async::generic",
                        "tensormap::generic", "fabric::fabric",
                        "fabric::generic", "generic::fabric", "acquire", "release", SCOPES,
                        SYNC_RESTRICT)


class Mbarrier(MemoryAccess, Ordered):
    """An operation on a 64-bit mbarrier object in shared memory."""

    __slots__ = ()
    access_kind = "atomic"
    address_index = 0


MBAR_OP_MODS = mods("relaxed", "release", MBAR_SCOPES, MBAR_SPACES, "b64",
                    "multicast::cluster::32b")


class MbarrierInit(Mbarrier, opcode="mbarrier.init"):
    """mbarrier.init{.shared{::cta}}.b64 [addr], count: initialise an mbarrier for count arrivals"""

    __slots__ = ()
    arity = (2, 2)
    access_kind = "store"
    allowed_mods = mods(SHARED_CTA, "b64", "layout::v0", "layout::v1")


class MbarrierInval(Mbarrier, opcode="mbarrier.inval"):
    """mbarrier.inval{.shared{::cta}}.b64 [addr]: invalidate an mbarrier so its memory can be reused"""

    __slots__ = ()
    arity = (1, 1)
    access_kind = "store"
    allowed_mods = mods(SHARED_CTA, "b64")


class MbarrierArrive(HasDest, Mbarrier, opcode="mbarrier.arrive"):
    """mbarrier.arrive{.expect_tx}{.noComplete}{.sem}{.scope}{.space}.b64 state|_, [addr]{, count|txCount}: arrive on an mbarrier, state = its phase token"""

    __slots__ = ()
    arity = (2, 4)
    address_index = 1
    default_semantics = "release"
    default_scope = "cta"
    allowed_mods = MBAR_OP_MODS | {"expect_tx", "noComplete"}

    @property
    def count(self) -> Operand | None:
        return self.operands[2] if len(self.operands) > 2 else None


class MbarrierArriveDrop(HasDest, Mbarrier, opcode="mbarrier.arrive_drop"):
    """mbarrier.arrive_drop{.expect_tx}{.noComplete}{.sem}{.scope}{.space}.b64 state|_, [addr]{, count}: arrive and leave the participant set"""

    __slots__ = ()
    arity = (2, 4)
    address_index = 1
    default_semantics = "release"
    default_scope = "cta"
    allowed_mods = MBAR_OP_MODS | {"expect_tx", "noComplete"}


class MbarrierExpectTx(Mbarrier, opcode="mbarrier.expect_tx"):
    """mbarrier.expect_tx{.sem}{.scope}{.space}.b64 [addr], txCount: raise the pending transaction count"""

    __slots__ = ()
    arity = (2, 3)
    allowed_mods = MBAR_OP_MODS


class MbarrierCompleteTx(Mbarrier, opcode="mbarrier.complete_tx"):
    """mbarrier.complete_tx{.sem}{.scope}{.space}.b64 [addr], txCount: retire txCount transaction bytes"""

    __slots__ = ()
    arity = (2, 3)
    allowed_mods = MBAR_OP_MODS


WAIT_MODS = mods("parity", "acquire", "relaxed", MBAR_SCOPES, SHARED_CTA, "b64")


class MbarrierTestWait(HasDest, Mbarrier, opcode="mbarrier.test_wait"):
    """mbarrier.test_wait{.parity}{.sem}{.scope}{.shared{::cta}}.b64 p, [addr], state|parity: p = the phase has completed (non-blocking)"""

    __slots__ = ()
    arity = (3, 4)
    access_kind = "load"
    address_index = 1
    default_semantics = "acquire"
    default_scope = "cta"
    allowed_mods = WAIT_MODS


class MbarrierTryWait(HasDest, Mbarrier, opcode="mbarrier.try_wait"):
    """mbarrier.try_wait{.parity}{.sem}{.scope}{.shared{::cta}}.b64 p, [addr], state|parity{, suspendTimeHint}: wait (bounded time) for the phase to complete"""

    __slots__ = ()
    arity = (3, 5)
    access_kind = "load"
    address_index = 1
    default_semantics = "acquire"
    default_scope = "cta"
    allowed_mods = WAIT_MODS


class MbarrierPendingCount(HasDest, HasType, opcode="mbarrier.pending_count"):
    """mbarrier.pending_count.b64 count, state: pending arrivals recorded in a state token"""

    __slots__ = ()
    arity = (2, 2)
    allowed_mods = frozenset({"b64", "layout::v0", "layout::v1"})


class MbarrierCheckLayout(HasDest, Mbarrier, opcode="mbarrier.check_layout"):
    """mbarrier.check_layout.layout.shared::cta.b64 p, [addr]: p = the mbarrier object uses the given layout"""

    __slots__ = ()
    arity = (2, 2)
    access_kind = "load"
    address_index = 1
    allowed_mods = mods("layout::v0", "layout::v1", SHARED_CTA, "b64")


class Vote(HasDest, HasType, opcode="vote"):
    """vote.all|any|uni.pred d, {!}a | vote.ballot.b32 d, {!}a: warp vote (deprecated, no member mask); ptxas also takes `vote.ballot.sync.b32 d, a, membermask` (CUB writes it)"""

    __slots__ = ()
    arity = (2, 3)
    allowed_mods = frozenset({"all", "any", "uni", "ballot", "sync", "pred", "b32"})


class VoteSync(HasDest, HasType, opcode="vote.sync"):
    """vote.sync.all|any|uni.pred d, {!}a, membermask | vote.sync.ballot.b32 d, {!}a, membermask: vote across the lanes of membermask"""

    __slots__ = ()
    arity = (3, 3)
    allowed_mods = frozenset({"all", "any", "uni", "ballot", "pred", "b32"})


class MatchSync(HasDest, HasType, opcode="match"):
    """match.any.sync.type d, a, membermask | match.all.sync.type d{|p}, a, membermask: lanes holding the same value"""

    __slots__ = ()
    arity = (3, 3)
    allowed_mods = frozenset({"any", "all", "sync", "b32", "b64"})


class ReduxSync(HasDest, HasType, opcode="redux.sync"):
    """redux.sync.op{.abs}{.NaN}.type d, a, membermask: d = reduction of a over the lanes of membermask"""

    __slots__ = ()
    arity = (3, 3)
    allowed_mods = frozenset({"add", "min", "max", "and", "or", "xor", "abs", "NaN", "u32",
                              "s32", "b32", "f32"})


class Redux(ReduxSync, opcode="redux"):
    """redux.op.sync.type d, a, membermask: redux.sync with `.sync` written later (ptxas accepts either order)"""

    __slots__ = ()
    allowed_mods = ReduxSync.allowed_mods | {"sync"}


class Activemask(HasDest, HasType, opcode="activemask"):
    """activemask.b32 d: d = mask of the currently active lanes of the warp"""

    __slots__ = ()
    arity = (1, 1)
    allowed_mods = frozenset({"b32"})


class ElectSync(HasDest, opcode="elect.sync"):
    """elect.sync d|p, membermask: elect one leader lane; d = its lane id, p = this lane is the leader"""

    __slots__ = ()
    arity = (2, 2)
    allowed_mods = frozenset()


class Griddepcontrol(Instruction, opcode="griddepcontrol"):
    """griddepcontrol.launch_dependents | griddepcontrol.wait: programmatic dependent launch control"""

    __slots__ = ()
    arity = (0, 0)
    allowed_mods = frozenset({"launch_dependents", "wait"})


class Setmaxnreg(HasType, opcode="setmaxnreg"):
    """setmaxnreg.inc|dec.sync.aligned.u32 imm-reg-count: raise or lower the warp's register budget"""

    __slots__ = ()
    arity = (1, 1)
    allowed_mods = mods("inc", "dec", SYNC_ALIGNED, "u32")

    @property
    def register_count(self) -> int | None:
        return immediate(self.operands[0] if self.operands else None)


class ClusterlaunchcontrolTryCancel(MemoryAccess, opcode="clusterlaunchcontrol.try_cancel"):
    """clusterlaunchcontrol.try_cancel.async{.shared::cta}.mbarrier::complete_tx::bytes{.multicast::cluster::all}.b128 [addr], [mbar]: ask to cancel a not-yet-launched cluster; 16-byte response to addr"""

    __slots__ = ()
    arity = (2, 2)
    access_kind = "store"
    address_index = 0
    allowed_mods = frozenset({"async", "shared", "shared::cta", "mbarrier::complete_tx::bytes",
                              "multicast::cluster::all", "b128"})


class ClusterlaunchcontrolQueryCancel(HasDest, HasType, opcode="clusterlaunchcontrol.query_cancel"):
    """clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 p, resp | .get_first_ctaid{::x|::y|::z}{.v4}.b32.b128 d, resp: decode a try_cancel response"""

    __slots__ = ()
    arity = (2, 2)
    allowed_mods = frozenset({"is_canceled", "get_first_ctaid", "get_first_ctaid::x",
                              "get_first_ctaid::y", "get_first_ctaid::z", "v4", "pred", "b32",
                              "b128"})


#: opcodes whose lanes act together or on the whole program: a lane that runs one is
#: seen by the others (warp collectives, matrix instructions, barriers, traps)
NOT_SILENT = ("shfl", "vote", "match", "redux", "elect", "bar", "barrier",
              "mma", "wmma", "wgmma", "ldmatrix", "stmatrix", "movmatrix", "tcgen05",
              "setmaxnreg", "trap", "brkpt", "pmevent", "griddepcontrol", "clusterlaunchcontrol")


def is_silent(insn: Instruction) -> bool:
    """Whether a lane that runs `insn` on its way out of the kernel is, to the other
    lanes of its warp, as if it had already exited: `bar.warp.sync`, `shfl.sync` and the
    other `.sync` collectives wait only for lanes of the mask that have not exited, so a
    lane that leaves through loads, register arithmetic and branches alone never makes
    them wait for nothing. Stores, atomics, calls, barriers, warp collectives and
    unmodelled instructions are not silent."""
    if insn.is_unmodelled or isinstance(insn, Call) or insn.opcode.startswith(NOT_SILENT):
        return False
    return not isinstance(insn, MemoryAccess) or insn.access_kind == "load"


class Nanosleep(HasType, opcode="nanosleep"):
    """nanosleep.u32 t: suspend the thread for about t nanoseconds (at most 1 ms)"""

    __slots__ = ()
    arity = (1, 1)
    allowed_mods = frozenset({"u32"})
