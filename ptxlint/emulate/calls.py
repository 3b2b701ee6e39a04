"""Calls to `.func`s: parameter passing through `.param` cells, return values, frames,
recursion, and indirect calls through function addresses.

A call opens the callee's frame on each calling thread's stack, copies every argument
(a caller `.param` cell, or a register or immediate) into the callee's parameter cell
(or `.reg` parameter), and jumps to the callee's entry. `ret` copies the callee's return
cells into the caller's cells named by the call, closes the frame and resumes at the
instruction after the call. A function that can reach itself also saves and restores
its registers per activation (they live on the call stack in `Frames`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir.operands import Immediate, Register, Symbol
from .errors import EmulationError
from .operands import np_type
from .program import FnInfo

# How a call argument reaches the callee: ("cell", caller frame offset, size) or
# ("value", reader, numpy dtype).
Arg = tuple


@dataclass
class CallData:
    callee: FnInfo | None  # None: indirect
    target: object = None  # indirect: reader of the function address (uint64)
    args: tuple[Arg, ...] = ()
    # where return values go: ("cell", caller frame offset, size) or ("reg", writer, dtype)
    returns: tuple[tuple, ...] = ()


def compile_call(program, pc: int, insn) -> CallData:
    ctx = program.context_of(pc)
    ops = program.operands(pc)
    callee = insn.callee
    info = target = None
    if isinstance(callee, Symbol):
        info = program.infos.get(program.aliases.get(callee.name, callee.name))
        if info is None:
            raise EmulationError(f"call to '{callee.name}', which has no body in this module",
                                 insn.span)
    elif isinstance(callee, Register):
        target = ops.read(callee, np.dtype(np.uint64))
    else:
        raise EmulationError(f"'{insn.full_opcode}' with callee '{callee}' is not supported "
                             "by the emulator", insn.span)
    args = []
    for a in insn.arguments:
        if isinstance(a, Symbol):
            kind, _space, off = ctx.resolve(a.name)
            if kind != "frame":
                raise EmulationError(f"call argument '{a.name}' is not a .param cell", insn.span)
            args.append(("cell", off, ctx.info.frame.offsets[a.name][1]))
        elif isinstance(a, (Register, Immediate)):
            dt = ctx.register_type(a) if isinstance(a, Register) else np.dtype(np.uint64)
            args.append(("value", ops.read(a, dt), dt))
        else:
            raise EmulationError(f"call argument '{a}' is not supported by the emulator", insn.span)
    rets = []
    for r in insn.returns:
        if isinstance(r, Register):  # a `.reg` return value
            dt = ctx.register_type(r)
            rets.append(("reg", ops.write(r, dt), dt))
            continue
        if not isinstance(r, Symbol):
            raise EmulationError(f"return value '{r}' is not supported by the emulator", insn.span)
        kind, _space, off = ctx.resolve(r.name)
        rets.append(("cell", off, ctx.info.frame.offsets[r.name][1]))
    return CallData(info, target, tuple(args), tuple(rets))


def enter(m, program, info: FnInfo, data: CallData, threads: np.ndarray, return_pc: int) -> None:
    """Open `info`'s frame for `threads` and pass the arguments (the caller's frame is
    still current while the argument values are read)."""
    frames = m.frames
    fn = info.function
    if len(data.args) != len(fn.params):
        raise EmulationError(f"call of '{fn.name}' with {len(data.args)} arguments, "
                             f"it takes {len(fn.params)}")
    saved_idx = m.idx
    m.idx = threads
    values = [a[1](m) if a[0] == "value" else None for a in data.args]
    caller_fp = frames.fp[threads].copy()
    frames.push(threads, info.frame, return_pc)
    if info.recursive:
        frames.save_registers(threads, m.regs, info.registers)
    ctx = program.contexts[fn.name]
    for arg, value, param in zip(data.args, values, fn.params):
        if param.space == "reg":
            reg = Register(param.name, param.name)
            write = ctx.program.operands(info.entry).write(reg, arg[2] if arg[0] == "value"
                                                           else np_type(param.type))
            if arg[0] == "value":
                write(m, value)
            continue
        off, size, _ = info.frame.offsets[param.name]
        if arg[0] == "cell":
            frames.copy_from(threads, caller_fp + arg[1], frames.fp[threads] + off,
                             min(arg[2], size))
        else:
            raw = np.ascontiguousarray(np.broadcast_to(np.asarray(value, arg[2]), (len(threads),)))
            frames.write_bytes(threads, frames.fp[threads] + off, raw.view(np.uint8).reshape(
                len(threads), -1)[:, :size])
    m.idx = saved_idx


def leave(m, program, info: FnInfo, threads: np.ndarray) -> np.ndarray:
    """Return from `info` for `threads`: copy return values, close the frame, restore
    saved registers; returns each thread's resume pc. A `.reg` return value is written
    to the caller's register last: in a recursive function that register is one the
    restore brings back."""
    frames = m.frames
    ret_pc = frames.ret_pc[frames.depth[threads] - 1, threads]
    callee_fp = frames.fp[threads].copy()
    caller_fp = frames.saved_fp[frames.depth[threads] - 1, threads]
    fn = info.function
    to_registers = []  # (writer, values, threads)
    for pc in np.unique(ret_pc):
        sel = np.flatnonzero(ret_pc == pc)
        call = program.steps[int(pc) - 1].data
        for dst, ret in zip(call.returns, fn.returns):
            if dst[0] == "reg":
                key = program.contexts[fn.name].key(Register(ret.name, ret.name))
                to_registers.append((dst[1], m.regs[key][threads[sel]].astype(dst[2]),
                                     threads[sel]))
                continue
            off, rsize, _ = info.frame.offsets[ret.name]
            frames.copy_from(threads[sel], callee_fp[sel] + off, caller_fp[sel] + dst[1],
                             min(dst[2], rsize))
    frames.pop(threads, info.frame)
    if info.recursive:
        frames.restore_registers(threads, m.regs, info.registers)
    saved = m.idx
    for write, values, t in to_registers:
        m.idx = t
        write(m, values)
    m.idx = saved
    return ret_pc
