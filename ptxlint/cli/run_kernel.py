"""`ptxlint run FILE.ptx --kernel K --grid X[,Y[,Z]] --block X[,Y[,Z]] --arg NAME=VALUE ...`:
run one kernel on the emulator and print what it observed.

An argument VALUE is an integer (`1024`, `0x400`), a float (`2.5`), `@file.npy` (a global
buffer loaded from a file) or `zeros:DTYPE:N` (a buffer of N zeros, e.g. `zeros:f32:4096`).
NAME is the parameter's name or its 0-based index. With `--out DIR` every buffer is saved
as `DIR/NAME.npy` after the run. Exit status: 0 when the run shows no event, 1 when it
does (out-of-bounds accesses, divergent barriers, ...), 2 when it cannot run.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

EXIT_OK, EXIT_EVENTS, EXIT_ERROR = 0, 1, 2
_DTYPES = {"f32": "float32", "f64": "float64", "f16": "float16", "u8": "uint8", "s8": "int8",
           "u16": "uint16", "s16": "int16", "u32": "uint32", "s32": "int32", "u64": "uint64",
           "s64": "int64"}


class ArgError(ValueError):
    pass


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ptxlint run", description="Run a PTX kernel on the "
                                "CPU emulator and report its memory accesses and events.")
    p.add_argument("file", metavar="FILE.ptx")
    p.add_argument("--kernel", required=True, help="the .entry to run")
    p.add_argument("--grid", required=True, metavar="X[,Y[,Z]]")
    p.add_argument("--block", required=True, metavar="X[,Y[,Z]]")
    p.add_argument("--arg", action="append", default=[], metavar="NAME=VALUE",
                   help="a kernel argument (repeatable): int, float, @file.npy, zeros:DTYPE:N")
    p.add_argument("--dynamic-smem", type=int, default=0, metavar="BYTES")
    p.add_argument("--out", metavar="DIR", help="save every buffer argument as DIR/NAME.npy")
    p.add_argument("--json", action="store_true", help="print the observations as JSON")
    p.add_argument("--trace", action="store_true", help="keep every warp request (JSON only)")
    p.add_argument("--max-steps", type=int, default=20_000_000)
    return p


def parse_value(text: str):
    if text.startswith("@"):
        try:
            return np.load(text[1:], allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise ArgError(f"cannot load {text[1:]}: {exc}") from None
    if text.startswith("zeros:"):
        parts = text.split(":")
        if len(parts) != 3 or parts[1] not in _DTYPES:
            raise ArgError(f"expected zeros:DTYPE:N with DTYPE one of {', '.join(_DTYPES)}, "
                           f"got '{text}'")
        try:
            return np.zeros(int(parts[2], 0), _DTYPES[parts[1]])
        except ValueError:
            raise ArgError(f"bad element count in '{text}'") from None
    try:
        return int(text, 0)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise ArgError(f"cannot read the argument value '{text}'") from None


def parse_args_list(items: list[str]) -> dict:
    out: dict = {}
    for item in items:
        name, eq, value = item.partition("=")
        if not eq or not name:
            raise ArgError(f"expected NAME=VALUE, got '{item}'")
        key = int(name) if name.isdigit() else name
        out[key] = parse_value(value)
    return out


def dims(text: str) -> tuple[int, ...]:
    from ..launch import parse_dims

    try:
        return parse_dims(text)
    except ValueError as exc:
        raise ArgError(str(exc)) from None


def render(result, path: str) -> str:
    obs = result.observations
    lines = [(f"{path}: {result.thread_instructions} thread-instructions in "
              f"{result.seconds:.3f} s ({result.rate:.3g}/s)")]
    if obs.accesses:
        lines.append("memory accesses (line: instruction  requests  sectors/request max  bank ways max):")
        for a in sorted(obs.accesses.values(), key=lambda a: a.pc):
            lines.append(f"  {a.line}: {a.text}  {a.requests}  "
                         f"{a.max_sectors if a.sectors else '-'}  {a.max_ways if a.ways else '-'}")
    if obs.event_counts:
        lines.append("events:")
        for ev in obs.events:
            where = f"{ev.line}: " if ev.line else ""
            extra = ", ".join(f"{k}={v}" for k, v in ev.details.items()
                              if k in ("block", "warp", "lanes", "addresses", "objects"))
            lines.append(f"  {where}{ev.kind}: {ev.message} [{extra}]")
        shown = len(obs.events)
        total = sum(obs.event_counts.values())
        if total > shown:
            lines.append(f"  ... {total - shown} more")
    else:
        lines.append("no events")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else EXIT_ERROR
    try:
        return _run(args)
    except (ArgError, OSError) as exc:
        print(f"ptxlint run: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except Exception as exc:
        from ..emulate.errors import EmulationError

        if os.environ.get("PTXLINT_DEBUG"):
            raise
        kind = "error" if isinstance(exc, EmulationError) else f"internal error: {type(exc).__name__}"
        print(f"ptxlint run: {kind}: {exc}", file=sys.stderr)
        return EXIT_ERROR


def _run(args) -> int:
    from ..emulate import run_kernel

    with open(args.file, encoding="utf-8") as f:
        text = f.read()
    values = parse_args_list(args.arg)
    result = run_kernel(text, args.kernel, dims(args.grid), dims(args.block), values,
                        dynamic_smem=args.dynamic_smem, trace=args.trace,
                        max_steps=args.max_steps)
    if args.json:
        payload = {"thread_instructions": result.thread_instructions,
                   "seconds": result.seconds, **result.observations.to_dict()}
        if not args.trace:
            payload.pop("traces", None)
        else:
            payload["traces"] = result.observations.traces
        print(json.dumps(payload, indent=2, default=str))
    else:
        sys.stdout.write(render(result, args.file))
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        for key, arr in result.outputs.items():
            np.save(os.path.join(args.out, f"{key}.npy"), arr)
    return EXIT_EVENTS if result.observations.event_counts else EXIT_OK
