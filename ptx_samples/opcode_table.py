"""Write ptx_samples/opcodes_seen.txt: every instruction opcode in the samples and CCCL corpus.

For the parser and IR teams: which opcodes (bare, e.g. ``ld``) and which full dotted
forms (e.g. ``ld.global.nc.v4.f32``) actually occur, how often, and where. The scan is
deliberately crude (comments and strings removed, statements split at ``;`` and at block
braces, leading directives, labels and guards dropped); it needs no PTX parser, so it can
be used to check one.

    python ptx_samples/opcode_table.py            # samples + CCCL corpus (sm_90)
    python ptx_samples/opcode_table.py --no-cccl  # samples only
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUTPUT = HERE / "opcodes_seen.txt"

_COMMENT_OR_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|//[^\n]*|/\*.*?\*/', re.S)
_LABEL = re.compile(r"^\s*[$%\w.]+\s*:(?!:)")
_GUARD = re.compile(r"^@!?%?[\w.]+\s+")
_OPCODE = re.compile(r"[a-z][\w.:]*")


def _strip(text: str) -> str:
    # Strings become "" (a .file path or .pragma may hold `//`); comments become a space.
    return _COMMENT_OR_STRING.sub(lambda m: '""' if m.group(0).startswith('"') else " ", text)


def _block_braces_to_semicolons(text: str) -> str:
    # A brace opens or closes a block when it stands alone on its line or ends a directive
    # line (`.section .debug_str {`); braces elsewhere delimit vector operands and
    # initialisers ({%r1, %r2}, = {1, 2}) and must stay.
    out = []
    for line in text.splitlines():
        s = line.strip()
        if s in ("{", "}"):
            line = ";"
        elif s.startswith(".") and s.endswith("{"):
            line = s[:-1] + ";"
        out.append(line)
    return "\n".join(out)


def opcodes(text: str) -> list[str]:
    """Full dotted opcodes of the instructions in ``text``, in order of appearance."""
    found = []
    for fragment in _block_braces_to_semicolons(_strip(text)).split(";"):
        lines = [ln.strip() for ln in fragment.splitlines() if ln.strip()]
        while lines:
            # Braces left at a statement's edge belong to one-line blocks such as
            # `{ .reg .pred p; setp.ne.u32 p, %r1, 0; }` (inline asm); drop them.
            line = _LABEL.sub("", lines[0].lstrip("{} \t")).strip().lstrip("{} \t")
            if not line or line.startswith("."):      # directive, data line, or a bare label
                lines.pop(0)
                continue
            line = _GUARD.sub("", line)
            m = _OPCODE.match(line)
            if m:
                found.append(m.group(0))
            break
    return found


def _sample_files() -> list[Path]:
    return sorted(p for p in HERE.rglob("*.ptx") if ".cache" not in p.parts)


def _cccl_ptx(arch: str) -> Path | None:
    sys.path.insert(0, str(HERE / "cccl"))
    try:
        from generate import generate  # noqa: PLC0415  (sibling script, not a package)
    finally:
        sys.path.pop(0)
    return generate(arch)


def build_table(sources: dict[str, Path]) -> str:
    forms: Counter[str] = Counter()
    where: dict[str, set[str]] = defaultdict(set)
    per_origin: dict[str, Counter[str]] = defaultdict(Counter)
    for label, path in sources.items():
        origin = "cccl" if label.startswith("cccl:") else "samples"
        for op in opcodes(path.read_text()):
            forms[op] += 1
            where[op].add(label)
            per_origin[origin][op.split(".", 1)[0]] += 1
    bare: dict[str, Counter[str]] = defaultdict(Counter)
    for form, n in forms.items():
        bare[form.split(".", 1)[0]][form] = n

    out = ["# Instruction opcodes seen in ptx_samples/ and the generated CCCL corpus.",
           "# Regenerate: python ptx_samples/opcode_table.py",
           "# Sources: " + ", ".join(sources), "",
           f"## Bare opcodes ({len(bare)}): total, in CCCL PTX, in samples, distinct forms, examples",
           f"{'opcode':<28}{'total':>7}{'cccl':>7}{'samples':>8}{'forms':>6}  examples (most frequent first)"]
    for name in sorted(bare):
        c = bare[name]
        examples = " ".join(f for f, _ in sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[:6])
        out.append(f"{name:<28}{sum(c.values()):>7}{per_origin['cccl'][name]:>7}"
                   f"{per_origin['samples'][name]:>8}{len(c):>6}  {examples}")
    out += ["", f"## Full dotted forms ({len(forms)}): count, files (up to 3)"]
    for form in sorted(forms):
        files = sorted(where[form])
        more = f" +{len(files) - 3}" if len(files) > 3 else ""
        out.append(f"{form:<72}{forms[form]:>7}  {' '.join(files[:3])}{more}")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-cccl", action="store_true", help="skip the generated CCCL PTX")
    parser.add_argument("--arch", default="sm_90", help="architecture of the CCCL PTX")
    parser.add_argument("-o", "--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    sources = {str(p.relative_to(HERE)): p for p in _sample_files()}
    if not args.no_cccl:
        cccl = _cccl_ptx(args.arch)
        if cccl is None:
            print("nvcc not found: CCCL corpus left out", file=sys.stderr)
        else:
            sources[f"cccl:cub_algorithms.{args.arch}.ptx"] = cccl
    args.output.write_text(build_table(sources))
    print(args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
