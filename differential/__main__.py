"""`python -m differential --report docs/soundness.md`: run the soundness corpus
(every kernel of the samples but the parser's, every pricing launch) and rewrite the
generated part of the report; exit status 1 when any run contradicts the analysis."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .case import run_case
from .corpus import PRICING_PATHS, all_pricing_cases, all_sample_cases, not_run
from .report import render, splice

UNSUPPORTED = "not supported by the emulator"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m differential",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--report", metavar="FILE.md", help="rewrite the generated block of FILE")
    ap.add_argument("--no-pricing", action="store_true", help="samples only")
    ap.add_argument("--paths", type=int, default=PRICING_PATHS,
                    help="Monte Carlo paths of the pricing launches")
    args = ap.parse_args(argv)
    cases, note = all_sample_cases(), ""
    if not args.no_pricing:
        try:
            cases += all_pricing_cases(args.paths)
        except Exception as exc:  # no NVRTC and no nvcc: BuildError, ImportError
            note = f"Pricing kernels not run: {exc}"
    results, skipped = [], []
    for case in cases:
        why = not_run(case)
        if why is not None:  # the launch needs what the emulator lacks
            skipped.append((case.name, why))
            continue
        result = run_case(case)
        if result.error is not None and UNSUPPORTED in result.error:
            skipped.append((case.name, result.error))
            continue
        results.append(result)
    text = render(results, skipped, note)
    if args.report:
        path = Path(args.report)
        path.write_text(splice(path.read_text() if path.exists() else "", text))
    else:
        sys.stdout.write(text)
    broken = sum(1 for r in results if not r.sound)
    sys.stderr.write(f"{len(results)} cases run, {len(skipped)} not run, {broken} with "
                     "contradictions\n")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
