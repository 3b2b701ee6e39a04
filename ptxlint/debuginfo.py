"""The CUDA names of kernel parameters, read from the DWARF that `nvcc -G` (device
debug) writes into the PTX's `.section .debug_info` and `.debug_abbrev`.

nvcc names a kernel's parameters `<kernel>_param_<i>`; only debug builds keep the
CUDA names, as `DW_TAG_formal_parameter` entries under the kernel's
`DW_TAG_subprogram` (whose `DW_AT_MIPS_linkage_name`, or `DW_AT_name` for an
`extern "C"` kernel, is the PTX name). `-lineinfo` writes `.loc` lines only: no
names. The sections are `.b8`/`.b16`/`.b32`/`.b64` data lines whose values may be
labels (`.b32 .debug_abbrev`, `.b64 $L__func_begin0`, `$L__info_string0+11`): a
label takes its directive's width and is only resolved where a name needs it
(`DW_FORM_strp` into `.debug_str`). Anything this reader does not understand (a form
it does not know, a truncated unit) gives no names rather than wrong ones, and a
subprogram whose parameter count differs from the PTX's is not used.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

_SECTION = re.compile(r"\.section\s+(\.[\w.]+)\s*\{(.*)\}\s*$", re.S)
_DATA = re.compile(r"\.b(8|16|32|64)\s+(.*)")
_LABEL = re.compile(r"^\s*([$%\w.]+)\s*:")

TAG_SUBPROGRAM, TAG_FORMAL_PARAMETER = 0x2E, 0x05
AT_NAME, AT_LINKAGE, AT_MIPS_LINKAGE = 0x03, 0x6E, 0x2007
AT_ABSTRACT_ORIGIN, AT_SPECIFICATION = 0x31, 0x47
# fixed-size forms: bytes (0 for flag_present); the others are read by `_Reader.form`
_FIXED = {0x05: 2, 0x06: 4, 0x07: 8, 0x0B: 1, 0x0C: 1, 0x10: 4, 0x11: 1, 0x12: 2,
          0x13: 4, 0x14: 8, 0x17: 4, 0x19: 0, 0x20: 8}
_REFS = {0x11, 0x12, 0x13, 0x14}  # offsets from the unit's start


class _Unreadable(Exception):
    pass


def _cells(body: str) -> tuple[list, dict[str, int]]:
    """A section's bytes, a label value standing in the first cell of its width (the
    others None), and the offsets of the labels defined in it."""
    cells: list = []
    labels: dict[str, int] = {}
    for raw in body.splitlines():
        line = raw.split("//")[0].strip()
        while (m := _LABEL.match(line)) is not None:
            labels[m.group(1)] = len(cells)
            line = line[m.end():].strip()
        m = _DATA.match(line)
        if not m:
            continue
        width = int(m.group(1)) // 8
        for item in m.group(2).split(","):
            item = item.strip()
            try:
                cells.extend(int(item, 0).to_bytes(width, "little", signed=item.startswith("-")))
            except (ValueError, OverflowError):
                cells.extend([item] + [None] * (width - 1))
    return cells, labels


class _Reader:
    def __init__(self, cells: list, pos: int = 0):
        self.cells, self.pos = cells, pos

    def byte(self) -> int:
        if self.pos >= len(self.cells) or not isinstance(self.cells[self.pos], int):
            raise _Unreadable
        self.pos += 1
        return self.cells[self.pos - 1]

    def fixed(self, n: int):
        """A little-endian number, or the label standing in its first cell."""
        first = self.cells[self.pos] if self.pos < len(self.cells) else None
        if isinstance(first, str):
            self.pos += n
            return first
        return int.from_bytes(bytes(self.byte() for _ in range(n)), "little")

    def uleb(self) -> int:
        out, shift = 0, 0
        while True:
            b = self.byte()
            out |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return out

    def string(self) -> str:
        out = bytearray()
        while (b := self.byte()) != 0:
            out.append(b)
        return out.decode("utf-8", "replace")

    def form(self, form: int, address_size: int):
        if form in _FIXED:
            return self.fixed(_FIXED[form])
        if form == 0x01:
            return self.fixed(address_size)
        if form == 0x08:
            return self.string()
        if form == 0x0E:  # strp: an offset (or label) in .debug_str
            return ("strp", self.fixed(4))
        if form in (0x0A, 0x03, 0x04, 0x09, 0x18):  # blocks and exprloc: skipped
            size = {0x0A: 1, 0x03: 2, 0x04: 4}.get(form)
            n = self.fixed(size) if size else self.uleb()
            if not isinstance(n, int):
                raise _Unreadable
            self.pos += n
            return None
        if form in (0x0D, 0x0F, 0x15):  # sdata, udata, ref_udata (sign not needed)
            return self.uleb()
        if form == 0x16:  # indirect
            return self.form(self.uleb(), address_size)
        raise _Unreadable


def _abbrevs(cells: list) -> dict[int, tuple[int, bool, list[tuple[int, int]]]]:
    r, out = _Reader(cells), {}
    while r.pos < len(cells):
        code = r.uleb()
        if code == 0:
            continue  # the table's end (several tables may follow one another)
        tag, children = r.uleb(), bool(r.byte())
        attrs = []
        while (pair := (r.uleb(), r.uleb())) != (0, 0):
            attrs.append(pair)
        out[code] = (tag, children, attrs)
    return out


def _dies(info: list, abbrevs: dict) -> Iterable[tuple[int, int, int, dict]]:
    """(offset, depth, tag, attributes) of every entry of every unit."""
    r = _Reader(info)
    while r.pos + 11 <= len(info):
        start = r.pos
        length = r.fixed(4)
        if not isinstance(length, int) or length >= 0xFFFFFFF0:
            raise _Unreadable  # a label length, or 64-bit DWARF
        end = r.pos + length
        version = r.fixed(2)
        r.fixed(4)  # the abbreviation table's offset (a label: the one table)
        address_size = r.byte()
        if version not in (2, 3, 4):
            raise _Unreadable
        depth = 0
        while r.pos < end:
            offset = r.pos  # absolute, as references are made
            code = r.uleb()
            if code == 0:
                depth -= 1
                continue
            if code not in abbrevs:
                raise _Unreadable
            tag, children, specs = abbrevs[code]
            attrs = {}
            for name, form in specs:
                value = r.form(form, address_size)
                attrs[name] = ("ref", start + value) if form in _REFS and \
                    isinstance(value, int) else value
            yield offset, depth, tag, attrs
            if children:
                depth += 1
        r.pos = end


def parameter_names(sections: Iterable[str]) -> dict[str, tuple[str | None, ...]]:
    """PTX function name -> the CUDA names of its parameters in order (None for an
    unnamed one), from the module's `.section` blocks; empty without debug info."""
    bodies = {}
    for text in sections:
        m = _SECTION.match(text.strip())
        if m:
            bodies[m.group(1)] = m.group(2)
    if ".debug_info" not in bodies or ".debug_abbrev" not in bodies:
        return {}  # decided before decoding: a -lineinfo build's .debug_str is large
    found = {name: _cells(body) for name, body in bodies.items()}
    strings, string_labels = found.get(".debug_str", ([], {}))
    try:
        abbrevs = _abbrevs(found[".debug_abbrev"][0])
        dies = list(_dies(found[".debug_info"][0], abbrevs))
    except (_Unreadable, IndexError, ValueError):
        return {}
    by_offset = {offset: attrs for offset, _, _, attrs in dies}

    def text(value) -> str | None:
        if isinstance(value, str):
            return value
        if isinstance(value, tuple) and value[0] == "strp":
            where = value[1]
            if isinstance(where, str):
                label, _, plus = where.partition("+")
                if label not in string_labels:
                    return None
                where = string_labels[label] + (int(plus, 0) if plus else 0)
            try:
                return _Reader(strings, where).string()
            except (_Unreadable, IndexError):
                return None
        return None

    def attr(attrs: dict, key: int, hops: int = 3):
        """An attribute, looked up through `abstract_origin`/`specification`."""
        if key in attrs or hops == 0:
            return attrs.get(key)
        for via in (AT_ABSTRACT_ORIGIN, AT_SPECIFICATION):
            ref = attrs.get(via)
            if isinstance(ref, tuple) and ref[0] == "ref" and ref[1] in by_offset:
                return attr(by_offset[ref[1]], key, hops - 1)
        return None

    out: dict[str, tuple[str | None, ...]] = {}
    current, names, depth_of = None, [], -1
    for _, depth, tag, attrs in dies + [(0, -1, 0, {})]:
        if current is not None and depth <= depth_of:
            out.setdefault(current, tuple(names))
            current = None
        if tag == TAG_SUBPROGRAM and current is None:
            linkage = attr(attrs, AT_LINKAGE) or attr(attrs, AT_MIPS_LINKAGE)
            current, names, depth_of = text(linkage) or text(attr(attrs, AT_NAME)), [], depth
        elif tag == TAG_FORMAL_PARAMETER and current is not None and depth == depth_of + 1:
            names.append(text(attr(attrs, AT_NAME)))
    return {k: v for k, v in out.items() if k}


__all__ = ["parameter_names"]
