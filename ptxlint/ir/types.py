"""PTX fundamental types (`.u32`, `.f16x2`, `.pred`, ...): width and kind."""
from __future__ import annotations

import enum
import struct
from dataclasses import dataclass


class Kind(enum.Enum):
    BITS = "b"
    UNSIGNED = "u"
    SIGNED = "s"
    FLOAT = "f"
    PRED = "pred"
    OPAQUE = "opaque"  # .texref .samplerref .surfref


@dataclass(frozen=True, slots=True)
class DataType:
    name: str  # without the leading dot: "u32"
    bits: int  # storage width of one element (packed pairs count both halves)
    kind: Kind

    @property
    def bytes(self) -> int:
        return max(1, self.bits // 8)

    @property
    def is_float(self) -> bool:
        return self.kind is Kind.FLOAT

    @property
    def is_signed(self) -> bool:
        return self.kind is Kind.SIGNED

    @property
    def is_integer(self) -> bool:
        return self.kind in (Kind.BITS, Kind.UNSIGNED, Kind.SIGNED)

    def __str__(self) -> str:
        return "." + self.name


def _table() -> dict[str, DataType]:
    t: dict[str, DataType] = {}
    for bits in (8, 16, 32, 64, 128):
        t[f"b{bits}"] = DataType(f"b{bits}", bits, Kind.BITS)
    for bits in (4, 8, 16, 32, 64):
        t[f"u{bits}"] = DataType(f"u{bits}", bits, Kind.UNSIGNED)
        t[f"s{bits}"] = DataType(f"s{bits}", bits, Kind.SIGNED)
    t["b1"] = DataType("b1", 1, Kind.BITS)
    t["u2"] = DataType("u2", 2, Kind.UNSIGNED)
    t["s2"] = DataType("s2", 2, Kind.SIGNED)
    floats = {
        "f16": 16, "f16x2": 32, "bf16": 16, "bf16x2": 32, "f32": 32, "f64": 64,
        "tf32": 32, "e4m3": 8, "e5m2": 8, "e4m3x2": 16, "e5m2x2": 16,
        "e4m3x4": 32, "e5m2x4": 32, "e2m3": 8, "e3m2": 8, "e2m3x2": 16, "e3m2x2": 16,
        "e2m1": 4, "e2m1x2": 8, "e2m1x4": 16, "ue8m0": 8, "ue8m0x2": 16, "ue4m3": 8,
        "f32x2": 64, "e8m0": 8, "s2f6x2": 16, "e2m3x4": 32, "e3m2x4": 32, "e2m1p4x4": 32,
        "ue8m0x4": 32, "ue5m3x2": 16,
    }
    for name, bits in floats.items():
        t[name] = DataType(name, bits, Kind.FLOAT)
    t["u16x2"] = DataType("u16x2", 32, Kind.UNSIGNED)
    t["s16x2"] = DataType("s16x2", 32, Kind.SIGNED)
    t["u8x4"] = DataType("u8x4", 32, Kind.UNSIGNED)
    t["s8x4"] = DataType("s8x4", 32, Kind.SIGNED)
    t["pred"] = DataType("pred", 1, Kind.PRED)
    for name in ("texref", "samplerref", "surfref"):
        t[name] = DataType(name, 64, Kind.OPAQUE)
    return t


TYPES: dict[str, DataType] = _table()


def lookup(name: str) -> DataType | None:
    """The type for a modifier such as "u32" or ".u32", else None."""
    return TYPES.get(name[1:] if name.startswith(".") else name)


def float_bits(v: float, bits: int) -> int:
    """The IEEE bit pattern of a float immediate at 16, 32 or 64 bits."""
    if bits == 64:
        return struct.unpack("<Q", struct.pack("<d", v))[0]
    if bits == 16:
        return struct.unpack("<H", struct.pack("<e", v))[0]
    return struct.unpack("<I", struct.pack("<f", v))[0]
