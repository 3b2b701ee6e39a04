"""Language server latency: from an edit of a ~2,000-line PTX file to the published
diagnostics. Target: under 200 ms for every edit (the median and the slowest edit are
both judged).

    python benchmarks/lsp.py [--lines 2000] [--edits 12] [--no-stdio]
    python benchmarks/lsp.py --startup [--runs 7]

`--startup` measures what opening an editor costs instead: `python -m ptxlint.lsp`
started, `initialize` sent at once (as editors do), then `initialized` and `didOpen` of
a small sample (ptx_samples/cuda/vector_add.ptx) as soon as the answer comes; the clock
runs from the start of the process to the first `publishDiagnostics`. Target: under
1 s (the median of --runs starts is judged).

The file is built from the kernels of ptx_samples/cuda (renamed apart, debug info
dropped) until it has --lines lines. Each edit adds a line inside one kernel, a
different kernel each time, the way typing does. Two measurements:

- in-process: `Analyzer.publishable()` (parse, re-analysis of the edited kernel, LSP
  conversion), the server's work without the transport;
- stdio: `python -m ptxlint.lsp` as a subprocess, `didChange` sent, the clock stopped
  when `publishDiagnostics` for that version arrives (one edit at a time, after a
  quiet spell, so the debounce does not delay it).

The first analysis of the file (open) analyses every kernel and is reported apart.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from queue import Empty, Queue

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ptxlint.ir.build import parse_module  # noqa: E402

HEADER = ".version 9.0\n.target sm_90\n.address_size 64\n"
DROP = re.compile(r"\s*(\.version|\.target|\.address_size|\.loc|\.file)\b")


def kernel_text(path: Path, suffix: str) -> str:
    """A sample's body with its module-level names made unique by `suffix`."""
    text = path.read_text()
    module = parse_module(text, str(path)).module
    names = {f.name for f in module.functions} | {v.name for v in module.variables}
    body = "\n".join(line for line in text.splitlines() if not DROP.match(line))
    body = re.sub(r"\.section\s+\.debug\w*\s*\{.*?\n\s*\}", "", body, flags=re.S)
    if names:
        pattern = re.compile(r"(?<![\w$%])(" + "|".join(
            map(re.escape, sorted(names, key=len, reverse=True))) + r")(?![\w$])")
        body = pattern.sub(lambda m: m.group(1) + suffix, body)
    return body


def build_file(lines: int) -> str:
    samples = sorted((ROOT / "ptx_samples" / "cuda").glob("*.ptx"))
    parts, i = [HEADER], 0
    while sum(p.count("\n") for p in parts) < lines:
        parts.append(kernel_text(samples[i % len(samples)], f"_{i}"))
        i += 1
    return "\n".join(parts) + "\n"


def edit_points(text: str) -> list[int]:
    """0-based line numbers just inside each kernel's opening brace."""
    lines = text.split("\n")
    out = []
    for i, line in enumerate(lines):
        if ".entry" in line:
            out.append(next(j for j in range(i, len(lines)) if lines[j].strip() == "{") + 1)
    return out


def insert_line(text: str, at: int, line: str) -> str:
    lines = text.split("\n")
    lines.insert(at, line)
    return "\n".join(lines)


TARGET_MS = 200  # every edit's diagnostics published within this


def summary(name: str, seconds: list[float]) -> str:
    """One line of figures; the target judged on the median and on the slowest edit
    (the target is for every edit, not a typical one)."""
    ms = sorted(s * 1000 for s in seconds)
    verdict = "ok" if statistics.median(ms) < TARGET_MS else f"OVER the {TARGET_MS} ms target"
    worst = "max ok" if ms[-1] < TARGET_MS else "max over target"
    return (f"{name:<22} median {statistics.median(ms):7.1f} ms   min {ms[0]:7.1f}   "
            f"max {ms[-1]:7.1f}   ({len(ms)} edits; median {verdict}; {worst})")


def in_process(text: str, path: Path, edits: int) -> tuple[float, list[float], str]:
    from ptxlint.lsp import Analyzer

    analyzer, uri = Analyzer(), path.as_uri()
    start = time.perf_counter()
    analyzer.publishable(uri, str(path), text, 1)
    opened = time.perf_counter() - start
    times, kernels = [], []
    for n in range(edits):
        points = edit_points(text)
        text = insert_line(text, points[n % len(points)], f"\t// edit {n}")
        start = time.perf_counter()
        analyzer.publishable(uri, str(path), text, n + 2)
        times.append(time.perf_counter() - start)
        kernels.append(",".join(analyzer.linters[uri].analysed))
    slow = sorted(zip(times, kernels), reverse=True)[:3]
    return opened, times, ", ".join(f"{k} {t * 1000:.0f} ms" for t, k in slow)


class StdioClient:
    def __init__(self):
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        self.proc = subprocess.Popen([sys.executable, "-m", "ptxlint.lsp"], env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.queue: Queue = Queue()
        self.ids = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        while True:
            length = None
            while (line := out.readline().strip()) or length is None:
                if not line and out.closed:
                    return
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            self.queue.put((time.perf_counter(), json.loads(out.read(length))))

    def send(self, message: dict) -> float:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        sent = time.perf_counter()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self.proc.stdin.flush()
        return sent

    def wait(self, predicate, timeout: float = 600) -> float:
        while True:
            try:
                at, message = self.queue.get(timeout=timeout)
            except Empty:
                raise SystemExit("the server did not answer") from None
            if "id" in message and "method" in message:
                self.send({"id": message["id"], "result": None})
            if predicate(message):
                return at

    def published(self, uri: str, version: int) -> float:
        return self.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                         and m["params"]["uri"] == uri and m["params"].get("version") == version)


def over_stdio(text: str, path: Path, edits: int) -> tuple[float, list[float]]:
    client, uri = StdioClient(), path.as_uri()
    client.send({"id": 1, "method": "initialize",
                 "params": {"processId": os.getpid(), "rootUri": None, "capabilities": {}}})
    client.wait(lambda m: m.get("id") == 1)
    client.send({"method": "initialized", "params": {}})
    sent = client.send({"method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri, "languageId": "ptx", "version": 1, "text": text}}})
    opened = client.published(uri, 1) - sent
    times = []
    for n in range(edits):
        points = edit_points(text)
        at = points[n % len(points)]
        text = insert_line(text, at, f"\t// edit {n}")
        time.sleep(0.3)  # a quiet spell: the edit is not part of a typing burst
        sent = client.send({"method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": n + 2},
            "contentChanges": [{"range": {"start": {"line": at, "character": 0},
                                          "end": {"line": at, "character": 0}},
                                "text": f"\t// edit {n}\n"}]}})
        times.append(client.published(uri, n + 2) - sent)
    client.send({"id": 2, "method": "shutdown", "params": None})
    client.wait(lambda m: m.get("id") == 2)
    client.send({"method": "exit", "params": None})
    client.proc.wait(timeout=30)
    return opened, times


STARTUP_SAMPLE = ROOT / "ptx_samples" / "cuda" / "vector_add.ptx"
STARTUP_TARGET_MS = 1000


def cpu_seconds(pid: int) -> float | None:
    """User and system CPU time a process has used so far (Linux's /proc), which other
    load on the machine disturbs less than the wall clock."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def startup_once() -> tuple[float, float, float | None]:
    """(process start to the `initialize` answer, process start to the first
    diagnostics, the server's CPU time by then), in seconds."""
    uri, text = STARTUP_SAMPLE.as_uri(), STARTUP_SAMPLE.read_text()
    started = time.perf_counter()
    client = StdioClient()
    client.send({"id": 1, "method": "initialize",
                 "params": {"processId": os.getpid(), "rootUri": None, "capabilities": {}}})
    initialized = client.wait(lambda m: m.get("id") == 1)
    client.send({"method": "initialized", "params": {}})
    client.send({"method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri, "languageId": "ptx", "version": 1, "text": text}}})
    published = client.published(uri, 1)
    cpu = cpu_seconds(client.proc.pid)
    client.send({"id": 2, "method": "shutdown", "params": None})
    client.wait(lambda m: m.get("id") == 2)
    client.send({"method": "exit", "params": None})
    client.proc.wait(timeout=30)
    return initialized - started, published - started, cpu


def startup(runs: int) -> None:
    answers, firsts, cpus = [], [], []
    for _ in range(runs):
        answer, first, cpu = startup_once()
        answers.append(answer * 1000)
        firsts.append(first * 1000)
        if cpu is not None:
            cpus.append(cpu * 1000)
    med = statistics.median(firsts)
    verdict = "ok" if med < STARTUP_TARGET_MS else f"OVER the {STARTUP_TARGET_MS} ms target"
    print(f"{'initialize answered':<22} median {statistics.median(answers):7.1f} ms   "
          f"min {min(answers):7.1f}   max {max(answers):7.1f}")
    print(f"{'first diagnostics':<22} median {med:7.1f} ms   min {min(firsts):7.1f}   "
          f"max {max(firsts):7.1f}   ({runs} starts; median {verdict})")
    if cpus:
        print(f"{'server CPU by then':<22} median {statistics.median(cpus):7.1f} ms   "
              f"min {min(cpus):7.1f}   max {max(cpus):7.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--edits", type=int, default=12)
    parser.add_argument("--no-stdio", action="store_true")
    parser.add_argument("--startup", action="store_true",
                        help="measure start-up to the first diagnostics instead")
    parser.add_argument("--runs", type=int, default=7, help="starts measured (--startup)")
    args = parser.parse_args()
    if args.startup:
        startup(args.runs)
        return
    text = build_file(args.lines)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.ptx"
        path.write_text(text)
        kernels = len(edit_points(text))
        print(f"file: {text.count(chr(10))} lines, {kernels} kernels")
        opened, times, slowest = in_process(text, path, args.edits)
        print(f"{'open (all kernels)':<22} {opened * 1000:7.1f} ms in-process")
        print(summary("edit, in-process", times))
        print(f"{'slowest edits':<22} {slowest} (the kernel re-analysed)")
        if not args.no_stdio:
            opened, times = over_stdio(text, path, args.edits)
            print(f"{'open (all kernels)':<22} {opened * 1000:7.1f} ms over stdio")
            print(summary("edit, over stdio", times))


if __name__ == "__main__":
    main()
