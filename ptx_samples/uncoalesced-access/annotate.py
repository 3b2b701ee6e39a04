#!/usr/bin/env python3
"""Turn nvcc's PTX for a rule sample into an annotated sample, so build.sh can regenerate
samples without hand edits.

    annotate.py SOURCE.cu OUT.ptx [--launch SPEC] [--no-expect | --expect 'REGEX => ...']

The header of OUT.ptx gets the `// ptxlint:` lines of SOURCE.cu (`--launch` replaces the
launch line), then the CUDA source itself as comments. Each line of SOURCE.cu of the form

    // ptx-expect: REGEX => RULE key=value ...

appends `// expect: RULE key=value ...` to every PTX instruction line REGEX matches
(`// ptx-expect[N]: ...`: only to the N-th, counting from 1); a pattern that matches
nothing is an error (the compiler changed the code: review it).
`--no-expect` writes no expectations (a clean twin built from the same source);
`--expect` (repeatable) replaces the source's `ptx-expect` lines (another launch of the
same source expects other details).
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

_RULE = re.compile(r"//\s*ptx-expect(?:\[(\d+)\])?:\s*(.+?)\s*=>\s*(.+?)\s*$")
_HEADER = re.compile(r"//\s*ptxlint:\s*(\w+)")


def annotate(source: Path, ptx: Path, launch: str | None, expect: bool,
             override: list[str] | None = None) -> None:
    cu = source.read_text().splitlines()
    header = [line for line in cu if _HEADER.match(line.strip())]
    if launch is not None:
        header = [h for h in header if _HEADER.match(h).group(1) != "launch"]
        header.insert(0, f"// ptxlint: launch {launch}")
    lines = cu if not override else [f"// ptx-expect: {o}" for o in override]
    rules = [(re.compile(m.group(2)), m.group(3), int(m.group(1) or 0))
             for m in map(_RULE.match, lines) if m]
    quoted = [line for line in cu if not _HEADER.match(line.strip()) and not _RULE.match(line)]
    out = header + [f"// CUDA ({source.name}, compiled by build.sh):"]
    out += [f"//   {line}".rstrip() for line in quoted] + [""]
    hits = [0] * len(rules)
    for line in ptx.read_text().splitlines():
        code = line.split("//", 1)[0]
        notes = []
        for i, (pattern, text, nth) in enumerate(rules):
            if expect and code.strip() and pattern.search(code):
                hits[i] += 1
                if not nth or hits[i] == nth:
                    notes.append(text)
        out.append(f"{line}\t// expect: {', '.join(notes)}" if notes else line)
    missing = [rules[i][0].pattern for i, n in enumerate(hits)
               if expect and n < max(1, rules[i][2])]
    if missing:
        sys.exit(f"annotate: {source.name}: no PTX line matches {missing}")
    ptx.write_text("\n".join(out) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source", type=Path)
    ap.add_argument("ptx", type=Path)
    ap.add_argument("--launch", help="launch spec replacing the source's launch line")
    ap.add_argument("--no-expect", action="store_true", help="write no expectations")
    ap.add_argument("--expect", action="append", metavar="'REGEX => RULE ...'",
                    help="replaces the source's ptx-expect lines")
    args = ap.parse_args()
    annotate(args.source, args.ptx, args.launch, not args.no_expect, args.expect)


if __name__ == "__main__":
    main()
