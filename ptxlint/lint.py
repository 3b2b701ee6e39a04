"""One `lint()` for every front end (CLI, LSP, pre-launch hook): text -> parse ->
analysis per kernel -> rules -> diagnostics."""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field

from . import arch as arch_mod
from .analysis import analyze
from .diagnostics import Diagnostic, Severity
from .interp.worklist import FixpointParams
from .ir.build import PARSE_ERROR, parse_module
from .ir.module import Module
from .launch import LaunchConfig
from .rules.base import RuleContext, canonical, load_rules
from .source import SourceFile

LAUNCH_ERROR = "launch-config"


@dataclass
class LintOptions:
    arch: str | None = None  # overrides the module's .target
    kernels: tuple[str, ...] = ()  # names or fnmatch patterns; empty: every entry
    launch: LaunchConfig | None = None  # for every kernel (command line)
    launches: dict[str, LaunchConfig] = field(default_factory=dict)  # pattern -> config
    enable: frozenset[str] | None = None  # None: every rule
    disable: frozenset[str] = frozenset()
    time_budget: float = 5.0
    rule_options: dict = field(default_factory=dict)  # e.g. {"uncoalesced_ratio": 2.0}

    def launch_for(self, kernel: str) -> LaunchConfig | None:
        if self.launch is not None:
            return self.launch
        for pattern, config in self.launches.items():
            if fnmatch.fnmatchcase(kernel, pattern):
                return config
        return None

    def rule_enabled(self, rule_id: str) -> bool:
        rule_id = canonical(rule_id)
        if rule_id in {canonical(r) for r in self.disable}:
            return False
        return self.enable is None or rule_id in {canonical(r) for r in self.enable}


@dataclass
class LintReport:
    path: str
    diagnostics: list[Diagnostic]
    source: SourceFile
    module: Module | None

    @property
    def parsed(self) -> bool:
        return not any(d.rule == PARSE_ERROR for d in self.diagnostics)


def lint_text(text: str, path: str = "<input>", options: LintOptions | None = None) -> LintReport:
    options = options or LintOptions()
    parsed = parse_module(text, path)
    diagnostics = list(parsed.diagnostics)
    if not parsed.ok:
        return LintReport(path, diagnostics, parsed.source, parsed.module)
    diagnostics.extend(lint_module(parsed.module, options))
    diagnostics.sort(key=Diagnostic.sort_key)
    return LintReport(path, _dedupe(diagnostics), parsed.source, parsed.module)


def lint_module(module: Module, options: LintOptions) -> list[Diagnostic]:
    rules = [cls() for rule_id, cls in sorted(load_rules().items())
             if options.rule_enabled(rule_id)]
    target = arch_mod.get(options.arch or _arch_target(module))
    out: list[Diagnostic] = []
    for fn in module.entries:
        if options.kernels and not any(fnmatch.fnmatchcase(fn.name, k) for k in options.kernels):
            continue
        try:
            result = analyze(fn, options.launch_for(fn.name), module=module,
                             params=FixpointParams(time_budget=options.time_budget))
        except ValueError as exc:  # a launch configuration that does not fit the kernel
            out.append(Diagnostic(LAUNCH_ERROR, Severity.ERROR, str(exc), module.path, fn.span,
                                  kernel=fn.name))
            continue
        out.extend(d for d in result.diagnostics if options.rule_enabled(d.rule))
        if result.complete:
            out.extend(check_rules(rules, module, result, target, options.rule_options))
    return out


def check_rules(rules: list, module: Module, result, target, rule_options: dict
                ) -> list[Diagnostic]:
    """The rules on a finished analysis: every rule on the kernel's facts, the rules that
    judge single instructions (`Rule.checks_callees`) also on the facts of each device
    function it calls, per argument state; of the findings several argument states give
    at one instruction, the first of the highest severity stays."""
    fn, launch = result.function, result.facts.ctx.launch
    rc = RuleContext(module, fn, result.facts, target, launch, rule_options)
    out = [d for rule in rules for d in rule.check(rc)]
    in_callees: dict[tuple, Diagnostic] = {}
    for facts in result.callee_facts:
        crc = RuleContext(module, facts.function, facts, target, launch, rule_options,
                          entry=fn)
        for rule in rules:
            if not rule.checks_callees:
                continue
            for d in rule.check(crc):
                key = (d.rule, d.line, d.column)
                if key not in in_callees or d.severity > in_callees[key].severity:
                    in_callees[key] = d
    return out + list(in_callees.values())


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
