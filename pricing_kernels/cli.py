"""`python -m pricing_kernels PRODUCT [options]`: price one product and print the price,
its standard error and 95% interval, the inputs, the time, and with `--reference` an
independent reference value with its own error.

Exit status: 0 priced; 1 the launch was refused by the pre-launch check, or building or
running a kernel failed, or the kernel's result was not finite; 2 invalid input (the
message says which), or under `--strict` no usable GPU.
"""
from __future__ import annotations

import argparse
import json
import logging
import sys
from contextlib import contextmanager
from decimal import Decimal, InvalidOperation

from .build import BuildError, parse_arch
from .spec import DEVICES, LATTICE, NORMALS, PRODUCTS, RNGS, STEPPED, InputError, Spec

# normals drawn (or lattice nodes) past which a run gets a progress bar on a terminal
LONG_RUN = {"cpu": 1 << 24, "gpu": 1 << 24, "emulator": 1 << 20}


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m pricing_kernels",
        description="Price an option with the pricing kernels (GPU, ptxlint's emulator, or "
                    "numpy on the CPU); every kernel launch is checked by ptxlint first.",
        epilog="products: " + "; ".join(f"{k}: {v}" for k, v in PRODUCTS.items()))
    p.add_argument("product", choices=list(PRODUCTS), metavar="PRODUCT",
                   help=f"one of {', '.join(PRODUCTS)}")
    p.add_argument("--version", action=_Version, help="show the version and exit")
    p.add_argument("--spot", type=float, default=100.0, help="initial price (default 100); "
                   "the everest note's notional")
    p.add_argument("--strike", type=float, default=100.0, help="strike (default 100)")
    p.add_argument("--rate", type=float, default=0.05, help="risk-free rate, continuous "
                   "compounding (default 0.05)")
    p.add_argument("--vol", type=float, default=0.2, help="volatility (default 0.2)")
    p.add_argument("--maturity", type=float, default=1.0, help="years (default 1)")
    p.add_argument("--steps", type=whole, help="Asian monitoring steps (default 64) or lattice "
                   "steps (default 1024); other products take one exact step and refuse it")
    p.add_argument("--paths", type=whole, help="Monte Carlo samples, e.g. 1e6 (default: "
                   "1000000 on the GPU, 200000 on the CPU, 4096 on the emulator)")
    p.add_argument("--assets", type=int, default=4, help="everest: number of assets (default 4)")
    p.add_argument("--corr", default="0.5", help="everest: one correlation for every pair, or "
                   "the upper triangle row by row, comma-separated (default 0.5)")
    p.add_argument("--rng", choices=RNGS, default="philox", help="generator (default philox; "
                   "lcg is statistically weak)")
    p.add_argument("--normals", choices=NORMALS, default="thread", help="Box-Muller per "
                   "thread or across paired lanes (default thread)")
    p.add_argument("--antithetic", action="store_true", help="antithetic variates")
    p.add_argument("--device", choices=DEVICES, default="gpu", help="where to run (default "
                   "gpu; without a usable one, the CPU path)")
    p.add_argument("--strict", action="store_true", help="with --device gpu: fail (exit 2) "
                   "instead of taking the CPU path when no GPU is usable")
    p.add_argument("--arch", help="target for the emulator's PTX (default sm_80)")
    p.add_argument("--seed", type=int, default=1234, help="generator seed (default 1234)")
    p.add_argument("--reference", action="store_true", help="also compute an independent "
                   "reference value (Black-Scholes, a numpy Monte Carlo or a trinomial "
                   "lattice) and show the difference")
    p.add_argument("--no-lint", action="store_true", help="skip the pre-launch check")
    p.add_argument("--notes", action="store_true", help="show the pre-launch check's notes "
                   "too when it refuses a launch (default: errors and warnings)")
    p.add_argument("--format", choices=("text", "json"), default="text")
    return p


def whole(text: str) -> int:
    """A count as a whole number: `1000000`, `1_000_000` or `1e6` (scientific notation
    whose value is an integer)."""
    try:
        value = Decimal(text.strip().replace("_", ""))
    except InvalidOperation:
        value = None
    if value is None or not value.is_finite() or value != value.to_integral_value():
        raise argparse.ArgumentTypeError(f"expected a whole number (e.g. 1000000 or 1e6), "
                                         f"got '{text}'")
    return int(value)


class _Version(argparse.Action):
    def __init__(self, option_strings, dest, **kw):
        super().__init__(option_strings, dest, nargs=0, **kw)

    def __call__(self, parser, namespace, values, option_string=None):
        from ptxlint import __version__  # noqa: PLC0415

        from .build import available  # noqa: PLC0415

        print(f"pricing_kernels (ptxlint {__version__}; compiler: "
              f"{available() or 'none found'})")
        parser.exit()


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    try:
        spec = Spec(args.product, args.spot, args.strike, args.rate, args.vol, args.maturity,
                    args.steps, args.paths, args.assets, _floats(args.corr), args.rng,
                    args.normals, args.antithetic, args.seed)
        _applies(args)
        if args.arch is not None:
            parse_arch(args.arch)
    except (InputError, ValueError, BuildError) as exc:
        return _fail(f"invalid input: {exc}", 2)
    return _price(spec, args)


def _applies(args) -> None:
    """Options a product would ignore are refused, not silently dropped."""
    if args.steps is not None and args.product not in STEPPED:
        raise InputError(f"--steps does not apply to {args.product}: it is priced with one "
                         "exact log-normal step to maturity")
    if args.paths is not None and args.product in LATTICE:
        raise InputError(f"--paths does not apply to {args.product}, a lattice (--steps "
                         "sets its size)")


def _price(spec: Spec, args) -> int:
    from .emulator import EmulatorError  # noqa: PLC0415
    from .gpu import DeviceUnavailable, GpuError  # noqa: PLC0415
    from .prelaunch import LaunchRefused  # noqa: PLC0415
    from .pricer import PricingError, price  # noqa: PLC0415

    notice = lambda line: print(line, file=sys.stderr)  # noqa: E731
    try:
        with _progress(spec, args.device) as progress:
            result = price(spec, args.device, lint=not args.no_lint, arch=args.arch,
                           progress=progress, notice=notice, reference=args.reference,
                           strict=args.strict)
    except LaunchRefused as exc:
        return _fail(exc.render(notes=args.notes), 1)
    except DeviceUnavailable as exc:  # only under --strict
        return _fail(f"error: {exc} (--strict: not falling back to the CPU)", 2)
    except (BuildError, GpuError, EmulatorError, PricingError) as exc:
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
    if r.ref is not None:
        lines.append(f"  reference  {r.reference:.6f}  ({r.reference_method}, its error "
                     f"{r.reference_error:.2g}; difference {r.price - r.reference:+.6f})")
    inputs = {k: v for k, v in r.inputs().items()
              if v is not None and k not in ("product", "paths", "rng", "normals")}
    lines.append("  inputs     " + ", ".join(f"{k} {_show(v)}" for k, v in inputs.items()))
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


def _show(value) -> str:
    if isinstance(value, list):
        return ",".join(f"{v:g}" for v in value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value).lower() if isinstance(value, bool) else str(value)


@contextmanager
def _progress(spec: Spec, device: str):
    """A progress callback for long runs: the bar (on stderr, only on a terminal)
    appears at the first report of the CPU path or the emulator (GPU runs are short)."""
    from rich.console import Console  # noqa: PLC0415
    from rich.progress import (  # noqa: PLC0415
        BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn)

    console = Console(stderr=True)
    if not console.is_terminal or _work(spec, device) < LONG_RUN[device]:
        yield None
        return
    bar = Progress(TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(),
                   TimeElapsedColumn(), console=console, transient=True)
    task = None

    def update(done: int, total: int) -> None:
        nonlocal task
        if task is None:
            bar.start()
            task = bar.add_task(f"{spec.product} ({device})", total=total)
        bar.update(task, completed=done, total=total)

    try:
        yield update
    finally:
        if task is not None:
            bar.stop()


def _work(spec: Spec, device: str) -> int:
    """Normals a Monte Carlo run draws (lattice: nodes), to decide on a progress bar."""
    from .catalog import draws_per_item  # noqa: PLC0415

    if spec.lattice:
        return spec.steps_or_default() ** 2 // 2
    paths = spec.paths_or_default("cpu" if device == "gpu" else device)
    return paths * (1 if spec.product.startswith("european") else 4 * draws_per_item(spec))


def _floats(text: str) -> tuple[float, ...]:
    try:
        return tuple(float(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise InputError(f"--corr takes comma-separated numbers, got '{text}'") from None


def _fail(message: str, status: int) -> int:
    print(message, file=sys.stderr)
    return status


__all__ = ["main", "parser", "render", "whole"]
