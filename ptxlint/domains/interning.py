"""Interning for the domains' frozen values (`StridedInterval`, `Affine`, `Congruence`,
`Region`, `Value`): constructor arguments -> the instance, so that equal values built
independently (a block interpreted again) are usually the same object and the
interpreter's joins and comparisons stop at `is`. Only a speed-up: equality never
relies on it. A table is emptied when it reaches its limit (bounded memory).
"""
from __future__ import annotations

from typing import Any

#: a bare instance of a slotted frozen dataclass, its fields set one by one (`set_field`)
new_instance = object.__new__
set_field = object.__setattr__


class InternTable(dict):
    """Arguments (raw or normal, or the components by identity) -> the instance."""

    __slots__ = ("limit",)

    def __init__(self, limit: int):
        super().__init__()
        self.limit = limit

    def keep(self, key: Any, value: Any) -> None:
        """Remember `value` under `key`, emptying the table first when it is full."""
        if len(self) >= self.limit:
            self.clear()
        self[key] = value


__all__ = ["InternTable", "new_instance", "set_field"]
