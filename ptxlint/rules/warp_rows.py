"""The condition of a warp-level divergence finding on an unknown block shape.

`%tid.x / 32` is one value per warp when each warp is 32 consecutive `%tid.x` of one
row: `%ntid.x` a multiple of 32, or a one-dimensional block (`interp/transfer/warp_uniform.py`).
The analysis proves that only from an exact block shape (the launch, `.reqntid`);
`.maxntid` bounds the thread count, not `%ntid.x`, and a kernel linted without a launch
may run in a 48x2 block. So with the shape unknown, a `bra.uni` or `__syncwarp` that
depends on the warp index would be reported as possibly divergent, an error, although
it only diverges in such blocks. The divergence rules re-analyse the kernel once,
assuming whole-row warps (`LaunchConfig.warps_in_rows`, everything else unchanged,
sound for every such launch); a finding that goes away there is reported as a note
with its condition instead of an error.
"""
from __future__ import annotations

from dataclasses import replace

from ..interp.facts import Facts, FixpointParams
from .base import RuleContext

#: what a finding that only whole-row warps avoid depends on
CONDITION = "when the block is 2-D or 3-D and `%ntid.x` is not a multiple of 32"
NOTE = ("with `%ntid.x` a multiple of 32, or a one-dimensional block, each warp is 32 "
        "consecutive `%tid.x` of one row and `%tid.x / 32` is the same in all its lanes: "
        "re-analysed under that assumption, the lanes agree here")
HELP = "give the block shape (--block X,Y,Z, or .reqntid) to settle it"
WORK_FACTOR = 4  # the re-analysis may interpret this many times the kernel's own work

def shape_known(rc: RuleContext) -> bool:
    launch = rc.launch
    return launch is not None and launch.block_or_limits(rc.kernel).exact


def rows_facts(rc: RuleContext) -> Facts | None:
    """The kernel's facts assuming whole-row warps; None when the shape is known (the
    facts are exact already), for a device function, or when the re-analysis does not
    finish within its share of work."""
    if shape_known(rc) or rc.entry is not None or rc.launch is None:
        return None
    params = FixpointParams(rules_only=True, max_work=WORK_FACTOR * rc.facts.work + 10_000)
    # once per kernel for every rule that asks; past the kernel's budget this raises:
    # the rule stops, as in any phase
    return rc.facts.derived("warp_rows", lambda _: rc.reanalyze(
        replace(rc.launch, warps_in_rows=True), params, "re-analysis with whole-row warps"))


__all__ = ["CONDITION", "NOTE", "HELP", "rows_facts", "shape_known"]
