"""One `lint()` for every front end (CLI, LSP, pre-launch hook): text -> parse ->
analysis per kernel -> rules -> diagnostics -> `finish` (inline suppressions, kernel
names demangled); `jobs > 1` shares a large file's kernels among forked worker
processes. The front ends group the findings of one CUDA line (`grouping.group`,
`LintReport.grouped`) when they report them."""
from __future__ import annotations

import fnmatch
import functools
import multiprocessing
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from . import arch as arch_mod
from . import analysis, demangle, grouping, launches, suppress
from .analysis import INCOMPLETE, analyze, incomplete
from .deadline import Deadline, DeadlineExceeded
from .diagnostics import Diagnostic, Related, Severity
from .gcpause import collector_paused, kernel_sweeps
from .interp.facts import FixpointParams
from .ir.build import PARSE_ERROR, parse_module
from .ir.module import Module
from .launch import LaunchConfig
from .replay import Replay
from .parse.lexer import blank_comments, split_statements
from .rules.base import ALIASES, RuleContext, canonical, load_rules
from .source import SourceFile
from .workers import worker_pool

UNKNOWN_TARGET = "unknown-target"
LAUNCH_ERROR = launches.LAUNCH_ERROR
# the diagnostics the tool itself makes (report._BUILTIN documents each)
TOOL_IDS = frozenset({PARSE_ERROR, LAUNCH_ERROR, UNKNOWN_TARGET, INCOMPLETE, suppress.UNUSED,
                      "unmodelled-instruction", "config-error", "internal-error"})
# Below this many lines of kernel bodies a file is linted in one process: starting a
# worker costs more than it saves.
PARALLEL_MIN_LINES = 2000


@dataclass
class LintOptions:
    arch: str | None = None  # overrides the module's .target
    # names (PTX or demangled) or fnmatch patterns; empty: every entry
    kernels: tuple[str, ...] = ()
    # for every kernel, as given (the API, the hook): the file's launch comments are
    # not read; None: the comments, with `launches` on top (`launches.plan`)
    launch: LaunchConfig | None = None
    launches: dict[str, LaunchConfig] = field(default_factory=dict)  # pattern -> config
    enable: frozenset[str] | None = None  # None: every rule; ids or fnmatch patterns
    disable: frozenset[str] = frozenset()
    time_budget: float = 5.0  # seconds per kernel: analysis, rules and replays together
    rule_options: dict = field(default_factory=dict)  # e.g. {"uncoalesced_ratio": 2.0}

    def launch_for(self, kernel: str) -> LaunchConfig | None:
        if self.launch is not None:
            return self.launch
        for pattern, config in self.launches.items():
            if demangle.matches(kernel, pattern):
                return config
        return None

    def selects(self, kernel: str) -> bool:
        """Whether `kernels` lets this entry be analysed (by its PTX or demangled name)."""
        return not self.kernels or any(demangle.matches(kernel, k) for k in self.kernels)

    def rule_enabled(self, rule_id: str) -> bool:
        rule_id = canonical(rule_id)
        if any(rule_matches(rule_id, r) for r in self.disable):
            return False
        return self.enable is None or any(rule_matches(rule_id, r) for r in self.enable)


def rule_matches(rule_id: str, pattern: str) -> bool:
    """`pattern` (an id, an old name or an fnmatch pattern like `bank-*`) names the rule."""
    return fnmatch.fnmatchcase(rule_id, canonical(pattern))


@dataclass
class LintReport:
    path: str
    diagnostics: list[Diagnostic]
    source: SourceFile
    module: Module | None  # None when workers parsed it (`jobs > 1`)
    entries: tuple[str, ...] = ()  # the kernels' names

    @property
    def parsed(self) -> bool:
        return not any(d.rule == PARSE_ERROR for d in self.diagnostics)

    @property
    def grouped(self) -> list[Diagnostic]:
        """The diagnostics as reports show them: a CUDA line's findings made one."""
        return grouping.group(self.diagnostics)


def lint_text(text: str, path: str = "<input>", options: LintOptions | None = None,
              jobs: int = 1) -> LintReport:
    """`jobs > 1`: the kernels of a large file are shared among that many processes
    (`_lint_parallel`); the report is the same as with one."""
    options = options or LintOptions()
    if jobs > 1 and "fork" in multiprocessing.get_all_start_methods():
        code = blank_comments(text)
        shares = _shares(code, jobs)
        if len(shares) > 1:
            return _lint_parallel(text, path, options, code, shares)
    parsed = parse_module(text, path)
    entries = tuple(f.name for f in parsed.module.entries)
    diagnostics = list(parsed.diagnostics)
    if not parsed.ok:
        return LintReport(path, diagnostics, parsed.source, parsed.module, entries)
    diagnostics.extend(d for ds in lint_module(parsed.module, options) for d in ds)
    return LintReport(path, finish(diagnostics, parsed.source, _functions(parsed.module),
                                   options), parsed.source, parsed.module, entries)


def _functions(module: Module) -> tuple[str, ...]:
    return tuple(f.name for f in module.functions)


def finish(diagnostics: list[Diagnostic], source: SourceFile, functions: Iterable[str],
           options: LintOptions) -> list[Diagnostic]:
    """A parsed file's findings as every front end reports them: those its inline
    suppressions cover removed (and a note for each suppression that covers none),
    the names of its `functions` demangled in the wording, sorted, without repeats."""
    partial = bool(options.kernels) or any(d.rule == INCOMPLETE for d in diagnostics)

    def unused_wanted(pattern: str) -> bool:
        """Report a suppression of `pattern` that covers nothing: every kernel ran to
        the end and some rule it names ran (or it names none: a typo)."""
        if partial or not options.rule_enabled(suppress.UNUSED):
            return False
        named = [r for r in (*load_rules(), *TOOL_IDS) if rule_matches(r, pattern)]
        return not named or any(options.rule_enabled(r) for r in named)

    def known(pattern: str) -> bool:
        return any(rule_matches(r, pattern) for r in (*load_rules(), *ALIASES, *TOOL_IDS))

    out = suppress.apply(diagnostics, source, canonical=canonical, known=known,
                         unused_wanted=unused_wanted)
    names = {f: demangle.demangle(f) for f in functions if f.startswith("_Z")}
    names = {k: v for k, v in names.items() if v != k}
    if names:
        out = [_demangled(d, names) for d in out]
    out.sort(key=Diagnostic.sort_key)
    return _dedupe(out)


_NAME = re.compile(r"(?<![\w$])_Z[\w$]+")


def _demangled(d: Diagnostic, names: dict[str, str]) -> Diagnostic:
    """`d` with the module's mangled function names in its wording demangled."""
    def text(t: str | None) -> str | None:
        if not t or "_Z" not in t:
            return t
        return _NAME.sub(lambda m: names.get(m.group(), m.group()), t)

    changed = replace(d, message=text(d.message), label=text(d.label),
                      notes=tuple(text(n) for n in d.notes), help=text(d.help),
                      related=tuple(Related(r.span, text(r.label)) for r in d.related))
    return d if changed == d else changed


def lint_module(module: Module, options: LintOptions, skipped=()) -> list[list[Diagnostic]]:
    """Per entry of the module, in order, its findings (none for the `skipped` ones)."""
    rules = [cls() for rule_id, cls in sorted(load_rules().items())
             if options.rule_enabled(rule_id)]
    target, unknown = _target(module, options)
    plans, errors = launches.plan(module, options)
    skipped = {id(fn) for fn in skipped}
    out: list[list[Diagnostic]] = []
    left = sum(len(fn.instructions) for fn in module.entries if id(fn) not in skipped)
    with collector_paused(), kernel_sweeps() as sweep:
        for fn in module.entries:
            if id(fn) in skipped:
                out.append([])
                continue
            out.append(lint_entry(module, fn, options, rules, target, plans[id(fn)]))
            left -= len(fn.instructions)
            sweep(len(fn.instructions), left)
    first = next((found for fn, found in zip(module.entries, out) if id(fn) not in skipped),
                 None)
    if first is not None:  # file-level findings: reported once, by the first share
        first[:0] = ([unknown] if unknown is not None else []) + errors
    return out


def _target(module: Module, options: LintOptions) -> tuple[arch_mod.Arch, Diagnostic | None]:
    """The architecture the rules judge by: `--arch` (checked where it was given), else
    the module's `.target`; one ptxlint has no figures for (a newer GPU) falls back to
    the default, with a note saying so."""
    name = options.arch or _arch_target(module)
    try:
        return arch_mod.get(name, "--arch" if options.arch else ".target"), None
    except ValueError as exc:
        fallback = arch_mod.get(None)
        return fallback, Diagnostic(
            UNKNOWN_TARGET, Severity.NOTE, f"{exc}: the hardware figures of {fallback.name} "
            "are used", module.path, module.target_span, details={"target": name,
                                                     "assumed": fallback.name},
            help="give a known architecture with --arch")


def lint_entry(module: Module, fn, options: LintOptions, rules: list, target,
               plan: launches.Plan | None = None) -> list[Diagnostic]:
    """One kernel, within its time budget: one `Deadline` for every phase (the
    analysis and its pre-passes, each rule, the re-analyses and replays rules ask for).
    Past it, an `analysis-incomplete` note names the phase; the analysis's own notes and
    the findings the rules made on the final facts stay. `plan`: its launch
    (`launches.plan`; by default `options.launch_for` it)."""
    if not options.selects(fn.name):
        return []
    if plan is None:
        plan = launches.Plan(options.launch_for(fn.name))
    if plan.error is not None:
        return [Diagnostic(LAUNCH_ERROR, Severity.ERROR, plan.error, module.path, fn.span,
                           kernel=fn.name)]
    out = [launches.not_applied(module, fn, plan.skipped)] if plan.skipped else []
    deadline = Deadline(options.time_budget)
    try:
        result = analyze(fn, plan.launch, module=module,
                         params=analysis_params(options.time_budget), deadline=deadline)
    except ValueError as exc:  # a launch configuration that does not fit the kernel
        return [Diagnostic(LAUNCH_ERROR, Severity.ERROR, str(exc), module.path, fn.span,
                           kernel=fn.name)]
    out += [d for d in result.diagnostics if options.rule_enabled(d.rule)]
    try:
        if result.complete:
            found = check_rules(rules, module, result, target, options.rule_options, deadline)
            out.extend(d for d in found if d.rule != INCOMPLETE or options.rule_enabled(d.rule))
    finally:  # what the rules built on the facts goes with the kernel (`Facts.release`)
        for facts in (result.facts, *result.callee_facts):
            if facts is not None:  # none when the analysis stopped at the budget
                facts.release()
    return out


def analysis_params(time_budget: float = 5.0) -> FixpointParams:
    """The fixpoint as the lint runs it: only what the rules can observe is interpreted
    (`interp/relevance.py`), the other registers stay unknown. (`time_budget` serves
    callers that give `analyze` no deadline.)"""
    return FixpointParams(time_budget=time_budget, rules_only=True)


def check_rules(rules: list, module: Module, result, target, rule_options: dict,
                deadline: Deadline | None = None) -> list[Diagnostic]:
    """The rules on a finished analysis: every rule on the kernel's facts, the rules that
    judge single instructions (`Rule.checks_callees`) also on the facts of each device
    function it calls, per argument state; of the findings several argument states give
    at one instruction, the first of the highest severity stays.

    `deadline`: the kernel's (the analysis's by default). When it runs out, the
    findings made so far stay (each was computed on the final facts) and an
    `analysis-incomplete` note names the rule and those that did not finish."""
    fn, launch = result.function, result.facts.ctx.launch
    deadline = deadline if deadline is not None else result.facts.deadline
    rc = rule_context(module, fn, result.facts, target, launch, rule_options,
                      deadline=deadline)
    out: list[Diagnostic] = []
    in_callees: dict[tuple, Diagnostic] = {}
    unfinished = [rule.id for rule in rules]
    try:
        for rule in rules:
            with deadline.phase(f"rule {rule.id}"):
                out.extend(rule.check(rc))  # what a generator yielded before it stopped stays
            if not rule.checks_callees or not result.callee_facts:
                unfinished.remove(rule.id)
        for facts in result.callee_facts:
            crc = rule_context(module, facts.function, facts, target, launch, rule_options,
                               entry=fn, deadline=deadline)
            for rule in rules:
                if rule.checks_callees:
                    with deadline.phase(f"rule {rule.id} in {facts.function.name}"):
                        _keep_worst(in_callees, rule.check(crc))
        unfinished.clear()
    except DeadlineExceeded as exc:
        out.append(incomplete(module, fn, exc, tuple(unfinished)))
    return out + list(in_callees.values())


def rule_context(module: Module, function, facts, target, launch, rule_options: dict, *,
                 entry=None, deadline: Deadline | None = None) -> RuleContext:
    """The context the rules get, with lint's services: `rc.reanalyze` (the function
    analysed again under another launch, within the kernel's `deadline`) and
    `rc.replay()` (the kernel run on the emulator under its exact launch, `replay.py`)."""
    extra = {} if deadline is None else {"deadline": deadline}
    return RuleContext(module, function, facts, target, launch, rule_options, entry=entry,
                       reanalysis=functools.partial(_reanalysis, module), replayer=Replay,
                       **extra)


def _reanalysis(module: Module, function, launch, params: FixpointParams,
                deadline: Deadline):
    """`RuleContext.reanalyze`'s service: the same analysis the lint ran, under
    `launch` and `params`, on the kernel's deadline (`analysis.analyze` looked up at the
    call: a test may watch the re-analyses a rule asks for)."""
    return analysis.analyze(function, launch, module=module, params=params,
                            deadline=deadline)


def _keep_worst(found: dict[tuple, Diagnostic], diagnostics) -> None:
    for d in diagnostics:
        key = (d.rule, d.line, d.column)
        if key not in found or d.severity > found[key].severity:
            found[key] = d



# ---- one file, several processes -------------------------------------------------------
_TOP_LEVEL = re.compile(r"[{};]|\.entry\b")


def _shares(code: str, jobs: int) -> list[list[tuple[int, int]]]:
    """The kernel bodies (offsets of their `{` and `}` in comment-blanked text) shared
    among at most `jobs` workers by lines, largest first to the least loaded; one share
    when the file is small or has fewer than two kernels. A kernel body is a top-level
    `{...}` after a header that says `.entry`; device functions are not shared out: every
    worker builds them (the kernels that call them need them)."""
    bodies: list[tuple[int, int]] = []
    depth, header, start = 0, False, -1
    for m in _TOP_LEVEL.finditer(code):
        t = m.group()
        if t == "{":
            if depth == 0 and header:
                start = m.start()
            depth += 1
        elif t == "}":
            depth = max(depth - 1, 0)
            if depth == 0:
                if start >= 0:
                    bodies.append((start, m.start()))
                header, start = False, -1
        elif depth == 0:
            header = t != ";"
    lines = {b: code.count("\n", *b) for b in bodies}
    if len(bodies) < 2 or sum(lines.values()) < PARALLEL_MIN_LINES:
        return [bodies]
    loads: list[list] = [[0, []] for _ in range(min(jobs, len(bodies)))]
    for body in sorted(bodies, key=lambda b: -lines[b]):
        least = min(loads, key=lambda load: load[0])
        least[0] += lines[body]
        least[1].append(body)
    return [sorted(share) for _, share in loads]


def _without(code: str, bodies: list[tuple[int, int]]) -> str:
    """`code` with the insides of these bodies blanked (lengths and newlines kept, so
    every offset, line and column stays true)."""
    pieces, pos = [], 0
    for open_, close in sorted(bodies):
        pieces.append(code[pos:open_ + 1])
        pieces.append("\n".join(" " * len(line) for line in code[open_ + 1:close].split("\n")))
        pos = close
    pieces.append(code[pos:])
    return "".join(pieces)


def _lint_share(text: str, path: str, options: LintOptions, code: str, shares, i: int
                ) -> tuple:
    """Worker i: lex and parse with the other workers' kernel bodies blanked, lint its
    own kernels. (parse diagnostics, findings per entry or None when the parse failed,
    entry names)."""
    others = [b for j, share in enumerate(shares) if j != i for b in share]
    mine = _without(code, others)
    parsed = parse_module(text, path, lexed=(mine, list(split_statements(mine))),
                          skip=frozenset(open_ for open_, _ in others))
    names = tuple(f.name for f in parsed.module.entries)
    if not parsed.ok:
        return parsed.diagnostics, None, names, ()
    return (parsed.diagnostics, lint_module(parsed.module, options, parsed.skipped), names,
            _functions(parsed.module))


# the file `_lint_parallel` shares out, set before its workers fork (they inherit it)
_SHARED: tuple | None = None


def _inherited_share(i: int) -> tuple:
    return _lint_share(*_SHARED, i)  # type: ignore[misc]


def _lint_parallel(text: str, path: str, options: LintOptions, code: str, shares
                   ) -> LintReport:
    """Shares 1.. on forked workers (`workers.worker_pool`: they inherit the text,
    nothing is pickled on the way in), share 0 here; a share whose worker failed or died
    is done here too. The findings merge in entry order, as `lint_text` orders them in
    one process."""
    global _SHARED
    _SHARED = (text, path, options, code, shares)
    try:
        with worker_pool(len(shares) - 1) as pool:
            futures = [pool.submit(_inherited_share, i) for i in range(1, len(shares))]
            results = [_lint_share(text, path, options, code, shares, 0)]
            for i, future in enumerate(futures, 1):
                try:
                    result = future.result()
                except Exception:  # noqa: BLE001  (the worker failed or died)
                    result = None
                results.append(result or _lint_share(text, path, options, code, shares, i))
    finally:
        _SHARED = None
    if any(per_entry is None for _, per_entry, _, _ in results):
        # a syntax error: report the parse of the whole file, as one process would
        parsed = parse_module(text, path)
        return LintReport(path, list(parsed.diagnostics), parsed.source, None,
                          tuple(f.name for f in parsed.module.entries))
    diagnostics = [d for parse, _, _, _ in results for d in parse]
    names = results[0][2]
    for k in range(len(names)):
        for _, per_entry, _, _ in results:
            diagnostics.extend(per_entry[k])
    source = SourceFile(path, text)
    return LintReport(path, finish(diagnostics, source, results[0][3], options), source,
                      None, names)


def _arch_target(module: Module) -> str | None:
    sms = [t for t in module.targets if t.startswith("sm_")]
    return sms[-1] if sms else None


def _dedupe(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    seen, out = set(), []
    for d in diagnostics:
        key = (d.rule, d.line, d.column, d.message)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out
