"""Drawings of one warp's memory request, as inline SVG, from a diagnostic's
`details` only (a reporter never analyses):

- `bank-conflict`: the 32 lanes above the 32 shared-memory banks, the n words the
  worst bank must deliver stacked in its column (one per pass), the lanes of the
  conflict joined to it, and the phases the access is served in;
- `uncoalesced-access`: the lanes above the 128-byte lines and 32-byte sectors they
  touch, lane i at `stride_bytes * i` from lane 0, which is drawn at the start of a
  line (the rule's count is the worst over the alignments lane 0 may have).

What the details hold today is `ways` and `bank` (bank-conflict) and
`sectors_per_request`, `ideal_sectors_per_request` and `stride_bytes`
(uncoalesced-access). `lanes` (the lanes of the conflict), `addresses` (each lane's
byte offset, None for an inactive lane) and `width` (bytes per lane) are drawn when a
rule gives them; `width` is otherwise read from the instruction's type (`.v2.f32`:
8 bytes), the only thing taken from the PTX text.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from html import escape
from typing import Any

from ..arch import BANK_BYTES, BANKS, LINE_BYTES as LINE, SECTOR_BYTES as SECTOR, \
    WARP_SIZE as WARP

CELL = 22  # px: one lane or one bank
LEFT = 64  # px: room for the row titles
TYPE_BYTES = {"8": 1, "16": 2, "32": 4, "64": 8, "128": 16}
_TYPE = re.compile(r"^(?:[bsuf](8|16|32|64|128)|bf16|e4m3x2|e5m2x2|f16x2|bf16x2)$")


def access_width(instruction: str) -> int | None:
    """Bytes one lane moves, from the opcode's type and vector suffixes."""
    words = instruction.split("//")[0].split()
    opcode = next((w for w in words if not w.startswith("@")), "")
    vector, size = 1, None
    for part in opcode.split(".")[1:]:
        if part in ("v2", "v4", "v8"):
            vector = int(part[1:])
        elif _TYPE.match(part):
            size = 4 if part.endswith("x2") else 2 if part == "bf16" else TYPE_BYTES[part[1:]]
    return size * vector if size else None


def lanes_of(value: Any) -> list[int] | None:
    """`details["lanes"]`: lane numbers, or a text like `0-3, 8-11`."""
    if isinstance(value, (list, tuple, set, frozenset)):
        lanes = sorted(int(v) for v in value if isinstance(v, int) and 0 <= v < WARP)
        return lanes or None
    if isinstance(value, str):
        out: list[int] = []
        for part in value.split(","):
            lo, _, hi = part.strip().partition("-")
            if lo.isdigit() and (not hi or hi.isdigit()):
                out.extend(range(int(lo), int(hi or lo) + 1))
        return sorted({v for v in out if 0 <= v < WARP}) or None
    return None


def _text(x: float, y: float, text: str, cls: str = "", anchor: str = "middle") -> str:
    return (f'<text x="{x:g}" y="{y:g}" text-anchor="{anchor}"'
            f'{f" class={chr(34)}{cls}{chr(34)}" if cls else ""}>{escape(text)}</text>')


def _rect(x: float, y: float, w: float, h: float, cls: str, title: str = "") -> str:
    tip = f"<title>{escape(title)}</title>" if title else ""
    return (f'<rect class="{cls}" x="{x:g}" y="{y:g}" width="{w:g}" height="{h:g}" '
            f'rx="2">{tip}</rect>')


def _svg(kind: str, width: float, height: float, body: list[str], caption: str) -> str:
    return (f'<figure class="warp-figure"><svg class="warp {kind}" role="img" '
            f'xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width:g} {height:g}" '
            f'width="{width:g}" height="{height:g}"><title>{escape(caption)}</title>'
            + "".join(body) + f"</svg><figcaption>{escape(caption)}</figcaption></figure>")


def _lane_row(y: float, lanes: set[int], width: int | None) -> list[str]:
    """The 32 lanes, those of the finding filled, and the phases of a wide access."""
    body = [_text(LEFT - 8, y + 15, "lanes", "row-title", "end")]
    for lane in range(WARP):
        cls = "lane hit" if lane in lanes else "lane"
        body.append(_rect(LEFT + lane * CELL, y, CELL - 2, CELL - 2, cls, f"lane {lane}"))
        body.append(_text(LEFT + lane * CELL + (CELL - 2) / 2, y + 14, str(lane), "small"))
    per_phase = WARP // max(1, min(4, (width or BANK_BYTES) // BANK_BYTES)) \
        if width and width > BANK_BYTES else WARP
    if per_phase < WARP:
        for phase in range(WARP // per_phase):
            x0 = LEFT + phase * per_phase * CELL
            body.append(f'<path class="phase" '
                        f'd="M{x0 + 1:g} {y - 4:g} h{per_phase * CELL - 4:g}"/>')
            body.append(_text(x0 + per_phase * CELL / 2, y - 8,
                              f"phase {phase + 1}: lanes {phase * per_phase}-"
                              f"{(phase + 1) * per_phase - 1}", "small"))
    return body


# ---------------------------------------------------------------- bank conflicts
def bank_conflict(details: Mapping[str, Any], instruction: str = "") -> str:
    ways = details.get("ways")
    if not isinstance(ways, int) or ways < 1:
        return ""
    width = details.get("width") if isinstance(details.get("width"), int) \
        else access_width(instruction)
    bank, words, lanes = _conflict(details, ways, width)
    tallest = max([ways] + [len(w) for w in words.values()])
    slot = max(6.0, min(16.0, 260 / tallest))
    top, banks_y = 22, 120
    height = banks_y + CELL + tallest * slot + 34
    body = _lane_row(top, lanes, width)
    body.append(_text(LEFT - 8, banks_y + 15, "banks", "row-title", "end"))
    for b in range(BANKS):
        x = LEFT + b * CELL
        cls = "bank worst" if b == bank else "bank"
        body.append(_rect(x, banks_y, CELL - 2, CELL - 2, cls, f"bank {b}"))
        body.append(_text(x + (CELL - 2) / 2, banks_y + 14, str(b), "small"))
        for row, (word, users) in enumerate(sorted(words.get(b, {}).items())):
            y = banks_y + CELL + row * slot
            who = f" (lanes {', '.join(map(str, users))})" if users else ""
            body.append(_rect(x + 2, y + 1, CELL - 6, slot - 2,
                              "word worst" if b == bank else "word",
                              f"bank {b}, pass {row + 1}: word {word}{who}"
                              if users else f"bank {b}, pass {row + 1}"))
    for lane in sorted(lanes):
        target = bank if isinstance(bank, int) else None
        for b, ws in words.items():
            if any(lane in users for users in ws.values()):
                target = b
        if target is not None:
            body.append(f'<path class="link" d="M{LEFT + lane * CELL + 10:g} {top + CELL - 2:g} '
                        f'L{LEFT + target * CELL + 10:g} {banks_y:g}"/>')
    where = f"bank {bank}" if isinstance(bank, int) else "one bank"
    who = (f"lanes {_ranges(sorted(lanes))}" if lanes else
           "the finding does not record which lanes")
    caption = (f"{ways}-way conflict: {where} holds {ways} different words the warp asks "
               f"for, served in {ways} passes; {who}")
    if not isinstance(bank, int):
        caption += "; the bank number depends on where ptxas places the array"
    body.append(_text(LEFT, height - 10, f"{ways} passes", "row-title", "start"))
    return _svg("bank-conflict", LEFT + BANKS * CELL + 8, height, body, caption)


def _conflict(details: Mapping[str, Any], ways: int, width: int | None):
    """(the worst bank, bank -> {word: lanes}, the lanes of the conflict): from each
    lane's address when the details have them, else from `bank`, `ways` and `lanes`."""
    addresses = details.get("addresses")
    if isinstance(addresses, (list, tuple)) and len(addresses) == WARP:
        words = _words_by_bank(addresses, width or BANK_BYTES)
        bank = max(words, key=lambda b: len(words[b])) if words else details.get("bank")
        return bank, words, {lane for w in words.get(bank, {}).values() for lane in w}
    bank = details.get("bank")
    words = {bank: {i: [] for i in range(ways)}} if isinstance(bank, int) else {}
    lanes = set(lanes_of(details.get("lanes")) or ())
    if not lanes and ways == WARP and (width or BANK_BYTES) <= BANK_BYTES:
        lanes = set(range(WARP))  # 32 different words in one bank: one per lane
    return bank, words, lanes


def _words_by_bank(addresses, width: int) -> dict[int, dict[int, list[int]]]:
    """bank -> {word: lanes} for the phase whose busiest bank has the most words: an
    8-byte access is served a half-warp at a time, a 16-byte one a quarter-warp, and
    only lanes of one phase compete for a bank."""
    per_phase = WARP // max(1, min(4, width // BANK_BYTES))
    best: dict[int, dict[int, list[int]]] = {}
    for start in range(0, WARP, per_phase):
        banks: dict[int, dict[int, list[int]]] = {}
        for lane in range(start, start + per_phase):
            address = addresses[lane]
            if not isinstance(address, int):
                continue
            last = (address + max(width, 1) - 1) // BANK_BYTES
            for word in range(address // BANK_BYTES, last + 1):
                banks.setdefault(word % BANKS, {}).setdefault(word, []).append(lane)
        worst = max((len(w) for w in banks.values()), default=0)
        if worst > max((len(w) for w in best.values()), default=0):
            best = banks
    return best


# ---------------------------------------------------------------- sectors
def uncoalesced(details: Mapping[str, Any], instruction: str = "") -> str:
    sectors, ideal = details.get("sectors_per_request"), details.get("ideal_sectors_per_request")
    if not isinstance(sectors, int) or not isinstance(ideal, int):
        return ""
    stride = details.get("stride_bytes")
    width = details.get("width") if isinstance(details.get("width"), int) \
        else access_width(instruction)
    addresses = details.get("addresses")
    if isinstance(addresses, (list, tuple)) and len(addresses) == WARP and \
            any(isinstance(a, int) for a in addresses):
        offsets = [a if isinstance(a, int) else None for a in addresses]
    elif isinstance(stride, int) and width:
        offsets = [stride * lane for lane in range(WARP)]
    else:
        return _sector_bars(sectors, ideal, details.get("parameter"))
    return _sector_map(offsets, width or 1, sectors, ideal)


def _sector_map(offsets: list[int | None], width: int, sectors: int, ideal: int) -> str:
    base = min(o for o in offsets if o is not None)
    touched: dict[int, dict[int, list[int]]] = {}  # line -> {sector in line: lanes}
    for lane, offset in enumerate(offsets):
        if offset is None:
            continue
        first, last = (offset - base) // SECTOR, (offset - base + width - 1) // SECTOR
        for s in range(first, last + 1):
            touched.setdefault(s * SECTOR // LINE, {}).setdefault(s % (LINE // SECTOR), []) \
                .append(lane)
    lines = sorted(touched)
    per_row, sw, gap = 8, CELL, 10
    box = sw * (LINE // SECTOR)
    top, lines_y = 22, 110
    rows = (len(lines) + per_row - 1) // per_row
    height = lines_y + rows * (CELL + 30) + 24
    lanes = {lane for line in touched.values() for users in line.values() for lane in users}
    body = _lane_row(top, lanes, None)
    body.append(_text(LEFT - 8, lines_y + 15, "sectors", "row-title", "end"))
    centre: dict[int, tuple[float, float]] = {}
    for i, line in enumerate(lines):
        x = LEFT + (i % per_row) * (box + gap)
        y = lines_y + (i // per_row) * (CELL + 30)
        body.append(_rect(x - 2, y - 2, box + 2, CELL + 2, "line",
                          f"128-byte line at +{line * LINE} bytes"))
        body.append(_text(x + box / 2, y + CELL + 12, f"+{line * LINE} B", "small"))
        for s in range(LINE // SECTOR):
            users = touched[line].get(s)
            body.append(_rect(x + s * sw, y, sw - 2, CELL - 2,
                              "sector hit" if users else "sector",
                              f"sector {line * 4 + s}: lanes {_ranges(users)}"
                              if users else f"sector {line * 4 + s}: not needed"))
            for lane in users or ():
                centre.setdefault(lane, (x + s * sw + sw / 2 - 1, y))
    for lane, (cx, cy) in sorted(centre.items()):
        body.append(f'<path class="link" d="M{LEFT + lane * CELL + 10:g} {top + CELL - 2:g} '
                    f'L{cx:g} {cy:g}"/>')
    drawn = sum(len(v) for v in touched.values())
    caption = (f"{drawn} sectors of 32 bytes in {len(lines)} lines of 128 bytes, with lane 0 "
               f"at the start of a line; ideal {ideal}")
    if drawn != sectors:
        caption += f"; up to {sectors} for the alignments lane 0 may have"
    width_px = LEFT + max(WARP * CELL, min(len(lines), per_row) * (box + gap)) + 8
    return _svg("uncoalesced-access", width_px, height, body, caption)


def _sector_bars(sectors: int, ideal: int, parameter: Any) -> str:
    """No stride known: the count of sectors against the ideal, as cells."""
    body, sw, top, y = [], CELL, 16, 16
    for title, count, cls in (("needed", sectors, "sector hit"), ("ideal", ideal, "sector ideal")):
        body.append(_text(LEFT - 8, y + 15, title, "row-title", "end"))
        for i in range(count):
            body.append(_rect(LEFT + (i % WARP) * sw, y + (i // WARP) * sw, sw - 2, sw - 2, cls))
        y += ((count + WARP - 1) // WARP) * sw + 10
    caption = f"up to {sectors} sectors per request against an ideal {ideal}; the stride " \
              "between lanes is known only at run time"
    if isinstance(parameter, str):
        caption += f" (parameter `{parameter}`)"
    return _svg("uncoalesced-access", LEFT + WARP * sw + 8, y + 4, body, caption)


def _ranges(lanes: list[int] | None) -> str:
    runs: list[list[int]] = []
    for lane in lanes or []:
        if runs and lane == runs[-1][-1] + 1:
            runs[-1].append(lane)
        else:
            runs.append([lane])
    return ", ".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs)


DRAWINGS = {"bank-conflict": bank_conflict, "uncoalesced-access": uncoalesced}


def drawing(rule: str, details: Mapping[str, Any], instruction: str = "") -> str:
    """The SVG figure for a finding of `rule`, or '' when there is none to draw."""
    draw = DRAWINGS.get(rule)
    return draw(details, instruction) if draw else ""


__all__ = ["drawing", "bank_conflict", "uncoalesced", "access_width", "lanes_of", "DRAWINGS"]
