"""IR -> PTX text that `ptxas` accepts. Debug `.section`s are printed back verbatim;
without them `.loc` loses `function_name`/`inlined_at`, which point into them."""
from __future__ import annotations

from .instruction import DebugLoc, Instruction
from .module import Function, Label, ListDirective, Module, Param, Pragma, ScopeMarker, Variable


def print_module(module: Module) -> str:
    out: list[str] = []
    if module.version:
        out.append(f".version {module.version}")
    if module.targets:
        out.append(".target " + ", ".join(module.targets))
    out.append(f".address_size {module.address_size}")
    for index, name in sorted(module.files.items()):
        out.append(f'.file {index} "{name}"')
    out.append("")
    for item in module.items:
        if isinstance(item, Function):
            out.extend(_function(item, bool(module.files), bool(module.sections)))
        elif isinstance(item, Variable):
            out.append(variable_text(item) + ";")
        elif isinstance(item, Pragma):
            out.append(".pragma " + ", ".join(item.values) + ";")
        out.append("")
    for a, b in module.aliases:
        out.append(f".alias {a}, {b};")
    out.extend(module.sections)
    return "\n".join(out) + "\n"


def variable_text(v: Variable) -> str:
    parts = [f".{x}" for x in v.linkage]
    parts.append("." + (v.space_mod or v.space))
    for attr in v.attributes:
        if attr != "ptr":
            parts.append("." + attr)
    if v.align is not None:
        parts.append(f".align {v.align}")
    if v.vector > 1:
        parts.append(f".v{v.vector}")
    parts.append(str(v.type))
    if isinstance(v, Param) and "ptr" in v.attributes:  # `.u64 .ptr.global.align 16`
        parts.append(".ptr")
        if v.ptr_space:
            parts.append("." + v.ptr_space)
        if v.ptr_align:
            parts.append(f".align {v.ptr_align}")
    name = v.name
    if v.range_count is not None:
        name += f"<{v.range_count}>"
    name += "".join("[]" if d is None else f"[{d}]" for d in v.dims)
    parts.append(name)
    text = " ".join(parts)
    if v.initializer is not None:
        text += " = " + v.initializer
    return text


def _loc_text(loc: DebugLoc, full: bool) -> str:
    text = f".loc {loc.file} {loc.line} {loc.column}"
    if full and loc.function_name:
        text += f", function_name {loc.function_name}"
    if full and loc.inlined_at:
        at = loc.inlined_at
        text += f", inlined_at {at.file} {at.line} {at.column}"
    return text


def _function(fn: Function, with_locs: bool, full_locs: bool) -> list[str]:
    head = " ".join([*(f".{x}" for x in fn.linkage), f".{fn.kind}"])
    if fn.returns:
        head += " (" + ", ".join(variable_text(p) for p in fn.returns) + ")"
    head += f" {fn.name}"
    if fn.params or fn.kind == "entry":
        head += "(" + ", ".join(variable_text(p) for p in fn.params) + ")"
    lines = [head]
    for name, values in fn.directives.items():
        lines.append(f"\t.{name} " + ", ".join(map(str, values)) if values else f"\t.{name}")
    if fn.body is None:
        lines[-1] += ";"
        return lines
    lines.append("{")
    depth, last_loc = 1, None
    printed_locs: set[tuple[int, int, int]] = set()
    for s in fn.body:
        indent = "\t" * depth
        if isinstance(s, Instruction):
            if with_locs and s.loc is not None and s.loc is not last_loc:
                at = s.loc.inlined_at
                if full_locs and at and (at.file, at.line, at.column) not in printed_locs:
                    # ptxas wants an inlined_at location to appear in an earlier .loc
                    lines.append(indent + _loc_text(at, False))
                    printed_locs.add((at.file, at.line, at.column))
                lines.append(indent + _loc_text(s.loc, full_locs))
                printed_locs.add((s.loc.file, s.loc.line, s.loc.column))
                last_loc = s.loc
            lines.append(indent + str(s))
        elif isinstance(s, Label):
            lines.append(str(s) if s.directive is None else f"{s} {s.directive.text}")
        elif isinstance(s, ListDirective):
            continue  # printed with its label
        elif isinstance(s, Variable):
            lines.append(indent + variable_text(s) + ";")
        elif isinstance(s, ScopeMarker):
            if s.opening:
                lines.append(indent + "{")
                depth += 1
            else:
                depth -= 1
                lines.append("\t" * depth + "}")
        elif isinstance(s, Pragma):
            lines.append(indent + ".pragma " + ", ".join(s.values) + ";")
    lines.append("}")
    return lines
