"""`ptxlint run FILE.ptx --kernel K --grid X[,Y[,Z]] --block X[,Y[,Z]] --arg NAME=VALUE ...`:
run one kernel on the emulator and print what it observed.

An argument VALUE is an integer (`1024`, `0x400`), a float (`2.5`), `@file.npy` (a global
buffer loaded from a file) or `zeros:DTYPE:N` (a buffer of N zeros, e.g. `zeros:f32:4096`).
NAME is the parameter's name or its 0-based index. With `--out DIR` every buffer is saved
as `DIR/NAME.npy` after the run. Exit status: 0 when the run shows no event, 1 when it
does (out-of-bounds accesses, divergent barriers, ...), 2 when it cannot run: a usage
error (a launch the hardware refuses, an argument the kernel does not take), a kernel
the emulator cannot run, or a run past one of its limits (steps, time, memory).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys

import numpy as np

from ..emulate.limits import MAX_STEPS

EXIT_OK, EXIT_EVENTS, EXIT_ERROR = 0, 1, 2
_DTYPES = {"f32": "float32", "f64": "float64", "f16": "float16", "u8": "uint8", "s8": "int8",
           "u16": "uint16", "s16": "int16", "u32": "uint32", "s32": "int32", "u64": "uint64",
           "s64": "int64"}
# a huge grid must end with a message, not run for hours (about 10^9 thread-instructions
# a minute on one core for converged code)
DEFAULT_TIME_LIMIT = 60.0
DEFAULT_MAX_MEMORY = "4G"
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_HINTS = {"steps": "--max-steps", "time": "--time-limit", "memory": "--max-memory"}


class ArgError(ValueError):
    pass


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ptxlint run", description="Run a PTX kernel on the "
                                "CPU emulator and report its memory accesses and events.")
    p.add_argument("file", metavar="FILE.ptx")
    p.add_argument("--kernel", required=True, help="the .entry to run")
    p.add_argument("--grid", required=True, metavar="X[,Y[,Z]]",
                   help="blocks: x up to 2^31-1, y and z up to 65535")
    p.add_argument("--block", required=True, metavar="X[,Y[,Z]]",
                   help="threads: x and y up to 1024, z up to 64, 1024 in all")
    p.add_argument("--arg", action="append", default=[], metavar="NAME=VALUE",
                   help="a kernel argument (repeatable): int, float, @file.npy, zeros:DTYPE:N")
    p.add_argument("--dynamic-smem", default="0", metavar="BYTES",
                   help="dynamic shared memory per block: 0 up to the most the module's "
                   ".target allows a block (default 0)")
    p.add_argument("--out", metavar="DIR", help="save every buffer argument as DIR/NAME.npy")
    p.add_argument("--json", action="store_true", help="print the observations as JSON")
    p.add_argument("--trace", action="store_true", help="keep every warp request (JSON only)")
    p.add_argument("--max-steps", type=int, default=MAX_STEPS, metavar="N",
                   help="stop after N steps of the whole launch, a step being one "
                   "instruction run by one group of converged threads (up to a chunk of "
                   "64 Ki threads at once): steps, not threads, are what a run's time "
                   f"grows with (default {MAX_STEPS})")
    p.add_argument("--time-limit", type=float, default=DEFAULT_TIME_LIMIT, metavar="SECONDS",
                   help=f"stop after SECONDS of running (default {DEFAULT_TIME_LIMIT:g})")
    p.add_argument("--max-memory", default=DEFAULT_MAX_MEMORY, metavar="BYTES",
                   help="refuse a launch whose emulated memory (buffers, variables, shared "
                   "memory, registers and stacks of the blocks run at once) would pass "
                   f"BYTES; K, M, G suffixes (default {DEFAULT_MAX_MEMORY})")
    return p


def byte_count(text: str, option: str) -> int:
    m = re.fullmatch(r"\s*(\d+)\s*([KMGT]?)i?B?\s*", text, re.IGNORECASE)
    if m is None or int(m.group(1)) < 1:
        raise ArgError(f"{option} expects a positive number of bytes like 4G or 512M, "
                       f"got '{text}'")
    return int(m.group(1)) * _UNITS[m.group(2).upper()]


def parse_value(text: str, budget: list[int]):
    """An argument's value; buffers count against `budget[0]` bytes."""
    if text.startswith("@"):
        return _load(text[1:], budget)
    if text.startswith("zeros:"):
        parts = text.split(":")
        if len(parts) != 3 or parts[1] not in _DTYPES:
            raise ArgError(f"expected zeros:DTYPE:N with DTYPE one of {', '.join(_DTYPES)}, "
                           f"got '{text}'")
        try:
            n = int(parts[2], 0)
        except ValueError:
            n = -1
        if n < 0:
            raise ArgError(f"bad element count in '{text}'")
        _spend(budget, n * np.dtype(_DTYPES[parts[1]]).itemsize, text)
        return np.zeros(n, _DTYPES[parts[1]])
    try:
        return int(text, 0)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise ArgError(f"cannot read the argument value '{text}'") from None


def _load(path: str, budget: list[int]) -> np.ndarray:
    try:
        _spend(budget, os.path.getsize(path), f"@{path}")
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise ArgError(f"cannot load {path}: {exc}") from None


def _spend(budget: list[int], nbytes: int, what: str) -> None:
    if nbytes > budget[0]:
        raise ArgError(f"the buffer {what} ({nbytes} bytes) does not fit in what is left of "
                       f"--max-memory ({budget[0]} bytes)")
    budget[0] -= nbytes


def parse_args_list(items: list[str], max_memory: int) -> dict:
    out: dict = {}
    budget = [max_memory]
    for item in items:
        name, eq, value = item.partition("=")
        if not eq or not name:
            raise ArgError(f"expected NAME=VALUE, got '{item}'")
        key = int(name) if name.isascii() and name.isdigit() else name
        out[key] = parse_value(value, budget)
    return out


def launch_shape(grid: str, block: str) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """`--grid` and `--block`, within the hardware's limits."""
    from ..emulate.errors import EmulationError
    from ..emulate.limits import check_launch
    from ..launch import parse_dims

    shape = []
    for option, text in (("--grid", grid), ("--block", block)):
        try:
            shape.append(parse_dims(text))
        except ValueError as exc:
            raise ArgError(f"{option}: {exc}") from None
    try:
        check_launch(shape[0], shape[1])
    except EmulationError as exc:
        raise ArgError(str(exc)) from None
    return shape[0], shape[1]


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
        return _error(str(exc))
    except KeyboardInterrupt:
        print("ptxlint run: interrupted", file=sys.stderr)
        return 130
    except MemoryError:
        return _error("out of memory: lower --max-memory below what this machine has")
    except Exception as exc:
        from ..emulate.errors import EmulationError
        from ..emulate.limits import LimitExceeded

        if os.environ.get("PTXLINT_DEBUG"):
            raise
        if isinstance(exc, LimitExceeded):
            return _error(f"{exc}; raise it with {_HINTS[exc.limit]}")
        if isinstance(exc, EmulationError):
            return _error(str(exc))
        return _error(str(exc), f"internal error: {type(exc).__name__}")


def _error(message: str, kind: str = "error") -> int:
    print(f"ptxlint run: {kind}: {message}", file=sys.stderr)
    return EXIT_ERROR


def _run(args) -> int:
    from ..emulate import run_kernel
    from ..emulate.api import load_module
    from .run import _read  # as the linter reads files: a stray non-UTF-8 byte is no error

    if args.max_steps < 1 or not args.time_limit > 0:
        raise ArgError("--max-steps and --time-limit must be positive")
    max_memory = byte_count(args.max_memory, "--max-memory")
    grid, block = launch_shape(args.grid, args.block)
    try:
        text = _read(args.file)
    except OSError as exc:
        raise ArgError(f"cannot read {args.file}: {exc.strerror or exc}") from None
    module = load_module(text)
    values = parse_args_list(args.arg, max_memory)
    smem = dynamic_smem(args.dynamic_smem, module)
    fn = module.function(args.kernel)
    if fn is not None and fn.is_entry:
        check_arguments(fn, values)
    result = run_kernel(module, args.kernel, grid, block, values, dynamic_smem=smem,
                        trace=args.trace, max_steps=args.max_steps,
                        time_limit=args.time_limit, max_memory=max_memory)
    _report(args, result)
    return EXIT_EVENTS if result.observations.event_counts else EXIT_OK


def _report(args, result) -> None:
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


def dynamic_smem(text: str, module) -> int:
    """`--dynamic-smem`: an integer from 0 to the most shared memory a block may have
    on the module's target (with the opt-in carve-out; sm_90 when unknown)."""
    from .. import arch

    try:
        target = arch.get(module.target)
    except ValueError:
        target = arch.get(None)
    top = target.max_shared_per_block
    try:
        n = int(text, 0)
    except ValueError:
        n = -1
    if not 0 <= n <= top:
        raise ArgError(f"--dynamic-smem expects an integer from 0 to {top} (the most shared "
                       f"memory a block may have on {target.name}), got '{text}'")
    return n


def check_arguments(fn, values: dict) -> None:
    """Each argument names a parameter of the kernel and has a value of its kind; every
    parameter has one."""
    params = fn.params
    names = ", ".join(p.name for p in params) or "none"
    given = set()
    for key, value in values.items():
        p = fn.param(key)
        if p is None:
            raise ArgError(f"--arg {key}: kernel '{fn.name}' has no parameter {key!r} "
                           f"(its parameters, by name or 0-based index: {names})")
        if p.name in given:
            raise ArgError(f"--arg {key}: parameter '{p.name}' is given twice")
        given.add(p.name)
        problem = _mismatch(p, value)
        if problem:
            raise ArgError(f"--arg {key}: parameter '{p.name}' is {_describe(p)}: {problem}")
    missing = [p.name for p in params if p.name not in given]
    if missing:
        raise ArgError(f"no --arg gives {', '.join(missing)} (kernel '{fn.name}' takes: "
                       f"{names})")


def _describe(p) -> str:  # `.u32`, `.u64 .ptr.global`, `.b8[16]`
    shape = "".join(f"[{d}]" for d in p.dims)
    ptr = f" .ptr.{p.ptr_space}" if p.ptr_space else (" .ptr" if "ptr" in p.attributes else "")
    vec = f" .v{p.vector}" if p.vector > 1 else ""
    return f"{vec} {p.type}{ptr}{shape}".strip()


def _mismatch(p, value) -> str | None:
    """What is wrong with `value` for parameter `p`, or None."""
    if p.type is None:
        return None
    scalar = p.dims == () and p.vector == 1
    if isinstance(value, np.ndarray):
        if scalar and p.type.is_integer and p.type.bits == 64:
            return None  # the buffer's address
        want = "a float" if scalar and p.type.is_float else "an integer"
        return f"expected {want}, got an array (buffers go to 64-bit integer parameters)"
    if p.ptr_space is not None or "ptr" in p.attributes:
        return f"expected a buffer (@FILE.npy or zeros:DTYPE:N), got the number {value}"
    if scalar and p.type.is_float:
        return None
    if isinstance(value, float) and not value.is_integer():
        return f"expected an integer, got {value}"
    bits = p.type.bits if scalar else 8 * (p.byte_size or 0)
    if bits and not -(1 << (bits - 1)) <= int(value) < 1 << bits:
        return f"expected an integer that fits in {bits} bits, got {int(value)}"
    return None
