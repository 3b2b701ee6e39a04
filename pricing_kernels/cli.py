"""`python -m pricing_kernels PRODUCT [options]`: price one product and print the price,
its standard error and 95% interval, the reference value and the time.

Exit status: 0 priced; 1 the launch was refused by the pre-launch check, or building or
running a kernel failed; 2 invalid input (the message says which).
"""
from __future__ import annotations

import argparse
import json
import logging
import sys
from contextlib import contextmanager

from .build import BuildError, parse_arch
from .spec import DEVICES, NORMALS, PRODUCTS, RNGS, InputError, Spec

LONG_RUN = 1 << 24  # normals; a CPU run drawing more gets a progress bar


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m pricing_kernels",
        description="Price an option with the pricing kernels (GPU, ptxlint's emulator, or "
                    "numpy on the CPU); every kernel launch is checked by ptxlint first.",
        epilog="products: " + "; ".join(f"{k}: {v}" for k, v in PRODUCTS.items()))
    p.add_argument("product", choices=list(PRODUCTS), metavar="PRODUCT",
                   help=f"one of {', '.join(PRODUCTS)}")
    p.add_argument("--spot", type=float, default=100.0, help="initial price (default 100); "
                   "the everest note's notional")
    p.add_argument("--strike", type=float, default=100.0, help="strike (default 100)")
    p.add_argument("--rate", type=float, default=0.05, help="risk-free rate, continuous "
                   "compounding (default 0.05)")
    p.add_argument("--vol", type=float, default=0.2, help="volatility (default 0.2)")
    p.add_argument("--maturity", type=float, default=1.0, help="years (default 1)")
    p.add_argument("--steps", type=int, help="Asian monitoring steps (default 64) or lattice "
                   "steps (default 1024)")
    p.add_argument("--paths", type=int, help="Monte Carlo samples (default: 1000000 on the "
                   "GPU, 200000 on the CPU, 4096 on the emulator)")
    p.add_argument("--assets", type=int, default=4, help="everest: number of assets (default 4)")
    p.add_argument("--corr", default="0.5", help="everest: one correlation for every pair, or "
                   "the upper triangle row by row, comma-separated (default 0.5)")
    p.add_argument("--rng", choices=RNGS, default="philox", help="generator (default philox; "
                   "lcg is statistically weak)")
    p.add_argument("--normals", choices=NORMALS, default="thread", help="Box-Muller per "
                   "thread or across paired lanes (default thread)")
    p.add_argument("--antithetic", action="store_true", help="antithetic variates")
    p.add_argument("--device", choices=DEVICES, default="gpu", help="where to run (default "
                   "gpu; without one, the CPU path)")
    p.add_argument("--arch", help="target for the emulator's PTX (default sm_80)")
    p.add_argument("--seed", type=int, default=1234, help="generator seed (default 1234)")
    p.add_argument("--no-lint", action="store_true", help="skip the pre-launch check")
    p.add_argument("--format", choices=("text", "json"), default="text")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    try:
        spec = Spec(args.product, args.spot, args.strike, args.rate, args.vol, args.maturity,
                    args.steps, args.paths, args.assets, _floats(args.corr), args.rng,
                    args.normals, args.antithetic, args.seed)
        if args.arch is not None:
            parse_arch(args.arch)
    except (InputError, ValueError, BuildError) as exc:
        return _fail(f"invalid input: {exc}", 2)
    return _price(spec, args)


def _price(spec: Spec, args) -> int:
    from ptxlint import PreLaunchError  # noqa: PLC0415

    from .emulator import EmulatorError  # noqa: PLC0415
    from .gpu import GpuError  # noqa: PLC0415
    from .pricer import price  # noqa: PLC0415

    notice = lambda line: print(line, file=sys.stderr)  # noqa: E731
    try:
        with _progress(spec) as progress:
            result = price(spec, args.device, lint=not args.no_lint, arch=args.arch,
                           progress=progress, notice=notice)
    except PreLaunchError as exc:
        return _fail(str(exc), 1)
    except (BuildError, GpuError, EmulatorError) as exc:
        return _fail(f"error: {exc}", 1)
    except InputError as exc:
        return _fail(f"invalid input: {exc}", 2)
    if args.format == "json":
        print(json.dumps(result.to_json()))
    else:
        print(render(result))
    return 0


def render(r) -> str:
    lines = [f"{r.product}: {PRODUCTS[r.product]}"]
    if r.stderr is not None:
        lo, hi = r.ci95
        lines += [f"  price      {r.price:.6f}  (stderr {r.stderr:.6f})",
                  f"  95% CI     [{lo:.6f}, {hi:.6f}]"]
    else:
        lines.append(f"  price      {r.price:.6f}")
    lines.append(f"  reference  {r.reference:.6f}  ({r.reference_method}; "
                 f"difference {r.price - r.reference:+.6f})")
    run = f"  device     {r.device}"
    if r.rng is not None:
        run += f", rng {r.rng}, {r.paths:,} paths"
    lines.append(run + f", {r.seconds:.4f} s")
    if r.lint is None:
        lines.append("  lint       no kernel launched")
    elif not r.lint.get("enabled"):
        lines.append("  lint       skipped (--no-lint)")
    else:
        n = len(r.lint["launches"])
        lines.append(f"  lint       {n} launch{'es' if n != 1 else ''} checked in "
                     f"{r.lint['seconds']:.3f} s, {r.lint['warnings']} warning(s)")
    return "\n".join(lines)


@contextmanager
def _progress(spec: Spec):
    """A progress callback for long CPU runs: the bar (on stderr, only on a terminal)
    appears at the first round the CPU path reports, so GPU runs never show one."""
    from rich.console import Console  # noqa: PLC0415
    from rich.progress import Progress  # noqa: PLC0415

    from .catalog import draws_per_item  # noqa: PLC0415

    console = Console(stderr=True)
    work = 0 if spec.lattice else spec.paths_or_default("cpu") * 4 * draws_per_item(spec)
    if work < LONG_RUN or not console.is_terminal:
        yield None
        return
    bar = Progress(console=console, transient=True)
    task = None

    def update(done: int, total: int) -> None:
        nonlocal task
        if task is None:
            bar.start()
            task = bar.add_task(f"{spec.product} on the CPU", total=total)
        bar.update(task, completed=done)

    try:
        yield update
    finally:
        if task is not None:
            bar.stop()


def _floats(text: str) -> tuple[float, ...]:
    try:
        return tuple(float(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise InputError(f"--corr takes comma-separated numbers, got '{text}'") from None


def _fail(message: str, status: int) -> int:
    print(message, file=sys.stderr)
    return status


__all__ = ["main", "parser", "render"]
