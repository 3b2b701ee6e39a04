"""`python -m pricing_kernels PRODUCT [options]`: price one product and print the price,
its standard error and 95% interval, the inputs, the time, and with `--reference` an
independent reference value with its own error; `--greeks` adds delta, gamma, vega,
theta and rho, each with its standard error. Lists of strikes and maturities
(`--strike 90,100,110 --maturity 0.5,1`) price the grid: a table, or a JSON array with
one object per (maturity, strike), maturity-major.

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
    p.add_argument("--spot", default="100", help="initial price (default 100); "
                   "the everest note's notional")
    p.add_argument("--strike", default="100", help="strike (default 100); a comma-separated "
                   "list prices each on the same paths (e.g. 90,100,110)")
    p.add_argument("--rate", type=float, default=0.05, help="risk-free rate, continuous "
                   "compounding (default 0.05)")
    p.add_argument("--vol", default="0.2", help="volatility (default 0.2); everest: one for "
                   "all assets or one per asset, comma-separated")
    p.add_argument("--div", default="0", help="continuous dividend yield (default 0); "
                   "everest: one for all assets or one per asset, comma-separated")
    p.add_argument("--maturity", default="1", help="years (default 1); a comma-separated "
                   "list prices each (one launch per maturity)")
    p.add_argument("--greeks", action="store_true", help="also estimate delta, gamma, vega, "
                   "theta and rho with their standard errors")
    p.add_argument("--steps", type=whole, help="Asian monitoring steps (default 64) or lattice "
                   "steps (default 1024); other products take one exact step and refuse it")
    p.add_argument("--paths", type=whole, help="Monte Carlo samples, e.g. 1e6 (default: "
                   "1000000 on the GPU, 200000 on the CPU, 4096 on the emulator)")
    p.add_argument("--assets", type=int, default=4, help="everest: number of assets (default 4)")
    p.add_argument("--corr", default="0.5", help="everest: one correlation for every pair, or "
                   "the upper triangle row by row, comma-separated (default 0.5)")
    p.add_argument("--rng", choices=RNGS, default="philox", help="generator (default philox; "
                   "lcg is statistically weak; mt607: one Mersenne Twister of period "
                   "2^607-1 per thread with its own parameters; sobol: scrambled Sobol "
                   "points (16 digitally shifted replications give the stderr, inverse "
                   "normal transform, Brownian bridge for the Asian, at most 1024 steps)")
    p.add_argument("--normals", choices=NORMALS, default="thread", help="Box-Muller per "
                   "thread or across paired lanes (default thread)")
    p.add_argument("--antithetic", action="store_true", help="antithetic variates")
    p.add_argument("--control-variate", action="store_true", help="European: S_T (the "
                   "forward) as control; asian-call: the geometric-average Asian call "
                   "(closed form); the coefficient is estimated from the same paths and the "
                   "output reports the variance-reduction factor")
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
        spot = _floats(args.spot, "--spot")
        strikes = _floats(args.strike, "--strike")
        maturities = _floats(args.maturity, "--maturity")
        vols, divs = _floats(args.vol, "--vol"), _floats(args.div, "--div")
        if len(spot) != 1:
            raise InputError("--spot takes one value" + (
                " (everest: the notional; the note pays on the performances "
                "S_i(T) / S_i(0), which do not depend on the assets' spot levels)"
                if args.product == "everest" else f", got {len(spot)}"))
        everest = args.product == "everest"
        if len(strikes) > 1 and everest:
            raise InputError("--strike does not apply to everest (the note has no strike)")
        for name, values in (("--strike", strikes), ("--maturity", maturities)):
            twice = sorted({v for v in values if values.count(v) > 1})
            if twice:
                raise InputError(f"{name} lists {', '.join(f'{v:g}' for v in twice)} twice")
        # lists of --vol and --div are per asset (Spec refuses them for other products)
        spec = Spec(args.product, spot[0], strikes[0], args.rate, vols[0], maturities[0],
                    args.steps, args.paths, args.assets, _floats(args.corr, "--corr"),
                    args.rng, args.normals, args.antithetic, args.seed,
                    div=divs[0], vols=vols if len(vols) > 1 else (),
                    divs=divs if len(divs) > 1 else (), greeks=args.greeks,
                    control_variate=args.control_variate)
        from dataclasses import replace  # noqa: PLC0415

        for k in strikes:  # every option of the grid is valid (a lattice's p, for one)
            for t in maturities:
                replace(spec, strike=k, maturity=t)
        _applies(args)
        if args.arch is not None:
            parse_arch(args.arch)
    except (InputError, ValueError, BuildError) as exc:
        return _fail(f"invalid input: {exc}", 2)
    return _price(spec, args, strikes, maturities)


def _applies(args) -> None:
    """Options a product would ignore are refused, not silently dropped."""
    if args.steps is not None and args.product not in STEPPED:
        raise InputError(f"--steps does not apply to {args.product}: it is priced with one "
                         "exact log-normal step to maturity")
    if args.paths is not None and args.product in LATTICE:
        raise InputError(f"--paths does not apply to {args.product}, a lattice (--steps "
                         "sets its size)")


def _price(spec: Spec, args, strikes, maturities) -> int:
    from .emulator import EmulatorError  # noqa: PLC0415
    from .gpu import DeviceUnavailable, GpuError  # noqa: PLC0415
    from .prelaunch import LaunchRefused  # noqa: PLC0415
    from .pricer import PricingError, price_grid  # noqa: PLC0415

    notice = lambda line: print(line, file=sys.stderr)  # noqa: E731
    try:
        with _progress(spec, args.device) as progress:
            results = price_grid(spec, strikes, maturities, args.device,
                                 lint=not args.no_lint, arch=args.arch, progress=progress,
                                 notice=notice, reference=args.reference,
                                 strict=args.strict)
    except LaunchRefused as exc:
        return _fail(exc.render(notes=args.notes), 1)
    except DeviceUnavailable as exc:  # only under --strict
        return _fail(f"error: {exc} (--strict: not falling back to the CPU)", 2)
    except (BuildError, GpuError, EmulatorError, PricingError) as exc:
        return _fail(f"error: {exc}", 1)
    except InputError as exc:
        return _fail(f"invalid input: {exc}", 2)
    batch = len(strikes) > 1 or len(maturities) > 1
    if args.format == "json":
        print(json.dumps([r.to_json() for r in results] if batch else results[0].to_json()))
    else:
        print(render_table(results) if batch else render(results[0]))
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
    if r.greeks is not None:
        for name, g in r.greeks.items():
            line = f"  {name:<10} {g['value']:.6f}"
            if g["stderr"] is not None:
                line += f" ± {g['stderr']:.6f}"
            line += f"  ({g['method']}"
            if r.ref_greeks is not None:
                ref = r.ref_greeks[name]
                line += f"; Black-Scholes {ref:.6f}, difference {g['value'] - ref:+.6f}"
            lines.append(line + ")")
    v = r.variance
    if v is not None and "factor" in v:
        lines.append(f"  control    {v['control']}: beta {v['beta']:.4f}, stderr without "
                     f"{v['stderr_without_control']:.6f}, variance-reduction factor "
                     f"{v['factor']:.1f}")
    if v is not None and "replications" in v:
        lines.append(f"  sobol      stderr from {v['replications']} shifted replications "
                     f"(iid formula would say {v['stderr_iid_formula']:.6f})")
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


def render_table(results) -> str:
    """A batch: one row per (maturity, strike), with the stderr, the reference (when
    asked for) and each Greek as value ± stderr."""
    first = results[0]
    mc = first.stderr is not None
    head = ["maturity", "strike", "price"] + (["stderr"] if mc else [])
    if first.ref is not None:
        head.append("reference")
    if first.greeks is not None:
        head += list(first.greeks)
    rows = []
    for r in results:
        row = [f"{r.spec.maturity:g}", f"{r.spec.strike:g}", f"{r.price:.6f}"]
        if mc:
            row.append(f"{r.stderr:.6f}")
        if r.ref is not None:
            row.append(f"{r.reference:.6f}")
        for g in (r.greeks or {}).values():
            row.append(f"{g['value']:.5f}" + (f" ± {g['stderr']:.5f}"
                                               if g["stderr"] is not None else ""))
        rows.append(row)
    widths = [max(len(x) for x in col) for col in zip(head, *rows)]
    fmt = lambda cells: "  " + "  ".join(c.rjust(w) for c, w in zip(cells, widths))  # noqa: E731
    lines = [f"{first.product}: {PRODUCTS[first.product]}", fmt(head)] + [fmt(r) for r in rows]
    inputs = {k: v for k, v in first.inputs().items() if v is not None and k not in (
        "product", "paths", "rng", "normals", "strike", "maturity")}
    lines.append("  inputs     " + ", ".join(f"{k} {_show(v)}" for k, v in inputs.items()))
    run = f"  device     {first.device}"
    if first.rng is not None:
        run += f", rng {first.rng}, {first.paths:,} paths"
    seconds = sum({id(r.lint_records): r.seconds for r in results}.values())
    lines.append(run + f", {seconds:.4f} s")
    if first.greeks is not None:
        lines.append("  greeks     " + "; ".join(f"{k}: {g['method']}"
                                                for k, g in first.greeks.items()))
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


def _floats(text: str, option: str = "--corr") -> tuple[float, ...]:
    try:
        values = tuple(float(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise InputError(f"{option} takes comma-separated numbers, got '{text}'") from None
    if not values and option != "--corr":
        raise InputError(f"{option} takes at least one number, got '{text}'")
    return values


def _fail(message: str, status: int) -> int:
    print(message, file=sys.stderr)
    return status


__all__ = ["main", "parser", "render", "render_table", "whole"]
