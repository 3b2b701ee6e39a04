"""What kind of defect each rule finds and how far its findings can be trusted, as
SARIF's rule `properties` carry them (`tags`, `precision`): GitHub code scanning shows
the tags as filters and sorts alerts by precision.

Precision is one of SARIF's `very-high`, `high`, `medium`, `low`, taken from the
share of each rule's findings that a run on the emulator confirms (docs/soundness.md,
"Precision per rule"): 95% and over is `very-high`, 80% `high`, else `medium`; a rule
the emulator cannot judge (`shared-memory-race`, `address-space-mismatch`) is `high`,
a preview rule `medium`. The tool's own diagnostics (a parse error, a broken
configuration) are facts about the input: `very-high`."""
from __future__ import annotations

CORRECTNESS, PERFORMANCE, TOOL = "correctness", "performance", "tool"

# rule id -> (tags, precision)
RULES: dict[str, tuple[tuple[str, ...], str]] = {
    "address-space-mismatch": ((CORRECTNESS, "memory"), "high"),
    "bank-conflict": ((PERFORMANCE, "shared-memory"), "very-high"),
    "barrier-divergence": ((CORRECTNESS, "synchronization"), "high"),
    "divergent-bra-uni": ((CORRECTNESS, "divergence"), "very-high"),
    "global-memory-race": ((CORRECTNESS, "global-memory", "synchronization"), "medium"),
    "misaligned-access": ((CORRECTNESS, "memory"), "very-high"),
    "out-of-bounds": ((CORRECTNESS, "memory"), "medium"),
    "shared-memory-race": ((CORRECTNESS, "shared-memory", "synchronization"), "high"),
    "uncoalesced-access": ((PERFORMANCE, "global-memory"), "very-high"),
    "uninitialized-read": ((CORRECTNESS, "memory"), "very-high"),
    "uniform-branch": ((PERFORMANCE, "divergence"), "medium"),
}
UNKNOWN = ((), "medium")


def tags(rule_id: str, stage: str) -> list[str]:
    """`ptx` first, then the kind of defect; the tool's own diagnostics are `tool`."""
    if stage == "built-in":
        return ["ptx", TOOL]
    return ["ptx", *RULES.get(rule_id, UNKNOWN)[0], *(["preview"] if stage == "preview" else [])]


def precision(rule_id: str, stage: str) -> str:
    if stage == "built-in":
        return "very-high"
    return RULES.get(rule_id, UNKNOWN)[1]


__all__ = ["tags", "precision", "RULES"]
