"""Test harness: one-instruction kernels over arrays of operands.

`elementwise(body, inputs, outputs, values)` builds a kernel in which thread i loads
`inputs[k][i]` into register `%k` (declared with the input's type), runs `body`, and
stores each output register `%k` to its buffer; it returns the output arrays. Types are
PTX type names (`u32`, `f16`, `pred`); 8-bit values live in 16-bit registers, as PTX
requires, and predicates travel through bytes.
"""
from __future__ import annotations

import functools

import numpy as np

from ptxlint.emulate import run_kernel
from ptxlint.emulate.api import load_module

HEADER = ".version 8.5\n.target sm_90\n.address_size 64\n\n"
NP = {"u8": np.uint8, "s8": np.int8, "b8": np.uint8, "u16": np.uint16, "s16": np.int16,
      "b16": np.uint16, "f16": np.uint16, "bf16": np.uint16, "u32": np.uint32,
      "s32": np.int32, "b32": np.uint32, "f32": np.float32, "u64": np.uint64,
      "s64": np.int64, "b64": np.uint64, "f64": np.float64, "pred": np.uint8,
      "f16x2": np.uint32, "bf16x2": np.uint32}


def _reg_type(t: str) -> str:
    if t == "pred":
        return ".pred"
    if t in ("u8", "s8", "b8"):
        return ".b16"
    if t in ("f16", "bf16"):
        return ".b16"
    if t in ("f16x2", "bf16x2"):
        return ".b32"
    return "." + t


def _mem_type(t: str) -> str:
    return {"f16": "b16", "bf16": "b16", "f16x2": "b32", "bf16x2": "b32"}.get(t, t)


def kernel_text(body: str, inputs: dict[str, str], outputs: dict[str, str],
                extra_regs: str = "") -> str:
    names = list(inputs) + list(outputs)
    params = ",\n".join(f"  .param .u64 p_{k}" for k in names)
    lines = [f".visible .entry k(\n{params}\n)", "{",
             "  .reg .b32 %tid_, %ntid_, %cta_, %i_;", "  .reg .b64 %off_, %base_, %addr_;",
             "  .reg .b16 %byte_;", extra_regs]
    for k, t in {**inputs, **outputs}.items():
        lines.append(f"  .reg {_reg_type(t)} %{k};")
    lines += ["  mov.u32 %tid_, %tid.x;", "  mov.u32 %ntid_, %ntid.x;", "  mov.u32 %cta_, %ctaid.x;",
              "  mad.lo.u32 %i_, %cta_, %ntid_, %tid_;"]
    for k, t in inputs.items():
        size = np.dtype(NP[t]).itemsize
        lines += [f"  ld.param.u64 %base_, [p_{k}];", f"  mul.wide.u32 %off_, %i_, {size};",
                  "  add.u64 %addr_, %base_, %off_;"]
        if t == "pred":
            lines += ["  ld.global.u8 %byte_, [%addr_];", f"  setp.ne.b16 %{k}, %byte_, 0;"]
        else:
            lines.append(f"  ld.global.{_mem_type(t)} %{k}, [%addr_];")
    lines.append(body)
    for k, t in outputs.items():
        size = np.dtype(NP[t]).itemsize
        lines += [f"  ld.param.u64 %base_, [p_{k}];", f"  mul.wide.u32 %off_, %i_, {size};",
                  "  add.u64 %addr_, %base_, %off_;"]
        if t == "pred":
            lines += [f"  selp.u16 %byte_, 1, 0, %{k};", "  st.global.u8 [%addr_], %byte_;"]
        else:
            lines.append(f"  st.global.{_mem_type(t)} [%addr_], %{k};")
    lines += ["  ret;", "}"]
    return HEADER + "\n".join(lines) + "\n"


@functools.lru_cache(maxsize=512)
def module_of(text: str):
    return load_module(text)


def _as_array(vals, t: str) -> np.ndarray:
    dt = np.dtype(NP[t])
    if t == "pred":
        return np.asarray(vals, bool).astype(dt)
    if dt.kind in "iu" and not isinstance(vals, np.ndarray):
        bits = dt.itemsize * 8
        u = np.dtype(f"u{dt.itemsize}")
        return np.array([int(v) % (1 << bits) for v in vals], u).view(dt)
    return np.asarray(vals).astype(dt)


def elementwise(body: str, inputs: dict[str, str], outputs: dict[str, str],
                values: dict[str, object], extra_regs: str = "", block: int = 64):
    """Run `body` once per element; returns {output name: numpy array}."""
    text = kernel_text(body, inputs, outputs, extra_regs)
    n = len(next(iter(values.values()))) if values else 1
    grid = -(-n // block)
    total = grid * block
    args = {}
    for k, t in inputs.items():
        arr = np.zeros(total, NP[t])
        arr[:n] = _as_array(values[k], t)
        args[f"p_{k}"] = arr
    outs = {k: np.zeros(total, NP[t]) for k, t in outputs.items()}
    args.update({f"p_{k}": v for k, v in outs.items()})
    res = run_kernel(module_of(text), "k", grid=grid, block=block, args=args, observe=False)
    assert not res.observations.event_counts, res.observations.events[:3]
    return {k: (v[:n].astype(bool) if outputs[k] == "pred" else v[:n]) for k, v in outs.items()}


def run_ptx(text: str, kernel: str = "k", grid=1, block=32, args=None, **kw):
    return run_kernel(module_of(text), kernel, grid=grid, block=block, args=args or {}, **kw)
