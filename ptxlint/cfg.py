"""Control-flow graph of one PTX function: basic blocks, a virtual exit, reverse
postorder, loops, dominators, post-dominators and control dependence.

This is the only module that follows branch targets; the interpreter iterates in
`rpo()`, widens at `loop_heads`, and the divergence analysis asks
`reconvergence_point()` and `control_dependence()` where divergent lanes rejoin.

Block 0 is the entry, the last block the virtual exit: it holds no instructions and
is reached from every `ret`/`exit`/`trap` and from falling off the end of the body.
Edges leave a block in a fixed order (branch targets, then the fall-through), and
every traversal is an iterative DFS in that order, so results are deterministic and
a 100k-block function cannot hit Python's recursion limit.

Blocks that cannot reach the exit (an infinite loop) would have no post-dominator.
We add one *virtual edge* to the exit from a block of every sink strongly connected
component of such blocks (its last block in reverse postorder, usually the latch).
That is sound for divergence: a branch with one arm spinning forever gets the exit as
its reconvergence point, so code after the other arm is control dependent on it,
and blocks inside the spinning loop still reconverge where they really do. Virtual
edges shape only the post-dominator tree; `succs`/`preds` stay the real edges.

Most of this is linear; the loops of an irreducible graph (a search of the whole graph
per head), the dominance frontiers and control dependence can grow with blocks x
branches, so they check the kernel's `Deadline` (`deadline.py`) as they go.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable, Iterable, Sequence

from .deadline import Deadline
from .ir.instruction import Instruction
from .ir.module import Function, Label, ListDirective, Statement
from .ir.operands import Symbol
from .ir.traits import Branch, Terminator
from .source import Span

Edge = tuple[int, int]
Step = Callable[[int], Iterable[int]]


class CFGError(ValueError):
    """A branch whose target label the function does not define."""

    def __init__(self, message: str, span: Span | None):
        super().__init__(message)
        self.span = span


@dataclass(eq=False)
class BasicBlock:
    """A maximal run of instructions entered only at the top and left only at the
    bottom; `labels` are all the labels naming its first instruction."""

    index: int
    labels: tuple[str, ...] = ()
    instructions: list[Instruction] = field(default_factory=list)
    succs: tuple[int, ...] = ()
    preds: tuple[int, ...] = ()
    is_exit: bool = False
    # the closing branch, `brx.idx`, `ret`, `exit` or `trap`, if any
    terminator: Instruction | None = None

    @property
    def span(self) -> Span | None:
        """From the first to the last instruction that has a span."""
        spans = [i.span for i in self.instructions if i.span is not None]
        if not spans:
            return None
        a, z = spans[0], spans[-1]
        return Span(a.start, z.end, a.line, a.col, z.end_line, z.end_col)


@dataclass(frozen=True)
class Loop:
    """A cycle found by a retreating edge into `head`. `body` is every block on a
    path head -> ... -> latch that does not pass the head again: the natural loop
    when the graph is reducible; otherwise the cycle entered at more than one block
    (`reducible` is False) and the head is just the first one the DFS met."""

    head: int
    body: frozenset[int]
    latches: tuple[int, ...]
    exits: tuple[Edge, ...]
    reducible: bool


def is_brx(insn: Instruction) -> bool:
    """`brx.idx`, whether the registry keeps `idx` in the opcode or the mods."""
    return insn.opcode == "brx.idx" or (insn.opcode == "brx" and "idx" in insn.mods)


def ends_block(insn: Instruction) -> bool:
    """Branches and terminators close a block; `brkpt` and `call` do not."""
    cls = insn.__class__
    closes = _CLOSES.get(cls)
    if closes is None:
        closes = _CLOSES[cls] = issubclass(cls, (Branch, Terminator))
    return closes or insn.opcode[:3] == "brx" and is_brx(insn)


_CLOSES: dict[type, bool] = {}  # instruction class -> whether it is a branch or terminator


def build_cfg(function: Function, deadline: Deadline | None = None) -> CFG:
    """Split `function.body` into blocks and wire their edges, in linear time.
    `deadline`: the kernel's, checked by the orders, trees and loops computed later."""
    blocks, lists = _split(function.body or [])
    blocks.append(BasicBlock(len(blocks), is_exit=True))
    by_label = {name: b.index for b in blocks for name in b.labels}
    preds: list[list[int]] = [[] for _ in blocks]
    for b in blocks[:-1]:
        out = _successors(b, by_label, lists, len(blocks) - 1)
        b.succs = tuple(dict.fromkeys(out) if len(out) > 1 else out)
        for s in b.succs:
            preds[s].append(b.index)
    for b in blocks:
        b.preds = tuple(preds[b.index])
    return CFG(function, blocks, by_label, deadline)


def _split(body: Sequence[Statement]) -> tuple[list[BasicBlock], dict[str, ListDirective]]:
    """Blocks in body order; labels naming `.branchtargets` lists are data, not code."""
    cur = BasicBlock(0)
    blocks, lists, closed = [cur], {}, False
    for stmt in body:
        if isinstance(stmt, Instruction):
            if closed:
                cur = BasicBlock(len(blocks))
                blocks.append(cur)
            cur.instructions.append(stmt)
            closed = ends_block(stmt)
            if closed:
                cur.terminator = stmt
        elif isinstance(stmt, Label) and stmt.directive is not None:
            lists[stmt.name] = stmt.directive
        elif isinstance(stmt, Label):
            if cur.instructions:
                cur = BasicBlock(len(blocks))
                blocks.append(cur)
            cur.labels += (stmt.name,)
            closed = False
    return blocks, lists


def _successors(block: BasicBlock, by_label: dict[str, int],
                lists: dict[str, ListDirective], exit_: int) -> list[int]:
    """Targets first, then the fall-through (the next block, or the exit after the
    last one), which a guarded branch or terminator keeps and an unguarded loses."""
    last = block.terminator
    fall = [block.index + 1]
    if last is None:
        return fall
    if last.guard is None:
        fall = []
    if isinstance(last, Terminator) and not is_brx(last):
        return [exit_, *fall]
    targets = []
    for name in _target_names(last, lists):
        if name not in by_label:
            raise CFGError(f"branch to undefined label {name}", last.span)
        targets.append(by_label[name])
    return targets + fall


def _target_names(insn: Instruction, lists: dict[str, ListDirective]) -> list[str]:
    """`brx.idx` names a `.branchtargets` label last; a builder that already
    inlined the list leaves it to `Branch.targets`, like `bra`'s one label."""
    table = insn.operands[-1] if is_brx(insn) and insn.operands else None
    if isinstance(table, Symbol) and table.name in lists:
        if lists[table.name].kind == "branchtargets":
            return list(lists[table.name].items)
    names = insn.targets if isinstance(insn, Branch) else []
    if not names:
        what = f"no .branchtargets list {table}" if is_brx(insn) else "no label target"
        raise CFGError(f"{insn.full_opcode} has {what}", insn.span)
    return names


class CFG:
    """Blocks plus lazily computed orders, trees and loops (each computed once)."""

    def __init__(self, function: Function, blocks: list[BasicBlock], by_label: dict[str, int],
                 deadline: Deadline | None = None):
        self.function = function
        self.blocks = blocks
        self.by_label = by_label  # label name -> block index
        self.entry = 0
        self.exit = len(blocks) - 1
        self.deadline = deadline if deadline is not None else Deadline()

    @cached_property
    def _where(self) -> dict[int, tuple[int, int]]:
        return {id(insn): (b.index, i)
                for b in self.blocks for i, insn in enumerate(b.instructions)}

    # --- lookups -----------------------------------------------------------------
    def position(self, insn: Instruction) -> tuple[int, int]:
        """(block index, index within the block) of an instruction of this function."""
        try:
            return self._where[id(insn)]
        except KeyError:
            raise KeyError(f"{insn!r} is not in {self.function.name}") from None

    def block_of(self, insn: Instruction) -> int:
        return self.position(insn)[0]

    def _succ(self, b: int) -> tuple[int, ...]:
        return self.blocks[b].succs

    def _pred(self, b: int) -> tuple[int, ...]:
        return self.blocks[b].preds

    # --- forward order and loops ---------------------------------------------------
    @cached_property
    def _forward_dfs(self) -> tuple[tuple[int, ...], list[Edge]]:
        post, retreating = _dfs([self.entry], self._succ, len(self.blocks))
        return tuple(reversed(post)), retreating

    def rpo(self) -> list[int]:
        """Blocks reachable from the entry, each before its successors except
        along retreating edges; the interpreter's worklist order."""
        return list(self._forward_dfs[0])

    @cached_property
    def rpo_index(self) -> list[int]:
        """Position of each block in `rpo()`, -1 if unreachable."""
        num = [-1] * len(self.blocks)
        for i, b in enumerate(self._forward_dfs[0]):
            num[b] = i
        return num

    def is_reachable(self, b: int) -> bool:
        return self.rpo_index[b] >= 0

    def reaches_avoiding(self, start: int, target: int, avoid: int) -> bool:
        """Whether a path from `start` reaches `target` without passing through `avoid`
        (the branch block whose successors are being told apart)."""
        seen, todo = set(), [start]
        while todo:
            x = todo.pop()
            if x == target:
                return True
            if x in seen or x == avoid:
                continue
            seen.add(x)
            todo.extend(self.blocks[x].succs)
        return False

    @cached_property
    def unreachable_blocks(self) -> tuple[int, ...]:
        """Real blocks no path from the entry reaches (the virtual exit is left out
        even when only an infinite loop precedes it: it holds no code to report)."""
        return tuple(b for b in range(self.exit) if not self.is_reachable(b))

    @cached_property
    def back_edges(self) -> tuple[Edge, ...]:
        """Retreating edges of the DFS from the entry: (latch, head). In a reducible
        graph these are exactly the edges whose head dominates their tail."""
        return tuple(sorted(self._forward_dfs[1]))

    @cached_property
    def loop_heads(self) -> frozenset[int]:
        """Where the interpreter widens; every cycle, irreducible ones too, has one."""
        return frozenset(h for _, h in self.back_edges)

    def natural_loops(self) -> dict[int, Loop]:
        """Loop head -> its loop, heads in index order; nested loops share blocks."""
        return dict(self._loops)

    def loop(self, head: int) -> Loop | None:
        """The natural loop headed by block `head`, None when no back edge enters it."""
        return self._loops.get(head)

    @cached_property
    def _loops(self) -> dict[int, Loop]:
        latches: dict[int, list[int]] = {}
        for t, h in self.back_edges:
            latches.setdefault(h, []).append(t)
        with self.deadline.phase("loops"):
            return {h: self._loop(h, ts) for h, ts in sorted(latches.items())}

    @cached_property
    def _components(self) -> list[int]:
        """Per block, its strongly connected component (Kosaraju: finish order on the
        reversed graph, then forward searches)."""
        n = len(self.blocks)
        post, _ = _dfs(range(n), self._pred, n)
        comp = [-1] * n
        for root in reversed(post):
            if comp[root] < 0:
                for b in _reach([root], lambda b: (s for s in self._succ(b) if comp[s] < 0)):
                    comp[b] = root
        return comp

    def _loop(self, head: int, latches: list[int]) -> Loop:
        # Blocks reaching a latch without passing the head, cut to those the head
        # reaches. Every such block is on a cycle through the (reachable) head, so the
        # backward search stays in the head's strongly connected component: linear in
        # the loop, for irreducible graphs too (a search of the whole graph per head
        # would make a chain of n irreducible loops cost n x blocks).
        tick = self.deadline.tick
        comp = self._components
        home = comp[head]
        reach = _reach([t for t in latches if t != head],
                       lambda b: (p for p in self._pred(b) if p != head and comp[p] == home),
                       tick)
        body = {head} | _reach([s for s in self._succ(head) if s in reach],
                               lambda b: (s for s in self._succ(b) if s in reach), tick)
        exits = tuple(sorted((u, v) for u in body for v in self._succ(u) if v not in body))
        reducible = all(p in body for b in body if b != head
                        for p in self._pred(b) if self.is_reachable(p))
        return Loop(head, frozenset(body), tuple(latches), exits, reducible)

    # --- dominance ---------------------------------------------------------------
    @cached_property
    def idom(self) -> list[int | None]:
        """Immediate dominator per block; None for the entry and unreachable blocks."""
        return _chk(self._forward_dfs[0], self._pred, len(self.blocks), self.deadline)

    @cached_property
    def _dom_ranges(self) -> tuple[list[int], list[int]]:
        return _tree_ranges(self.idom, self.entry)

    def dominates(self, a: int, b: int) -> bool:
        """Every path entry -> b passes a. An unreachable block is in no tree, so it
        only dominates (and is only dominated by) itself."""
        return a == b or _in_subtree(self._dom_ranges, a, b)

    def dominators(self, b: int) -> list[int]:
        """All dominators of b, from b itself up to the entry."""
        return _chain(self.idom, b)

    @cached_property
    def dominance_frontier(self) -> list[frozenset[int]]:
        """Per block: where its dominance ends (SSA phi placement, join points)."""
        def live_preds(b: int) -> Iterable[int]:
            return (p for p in self._pred(b) if self.is_reachable(p))
        return _frontier(self._forward_dfs[0], live_preds, self.idom, len(self.blocks),
                         self.deadline.tick)

    # --- post-dominance ------------------------------------------------------------
    @cached_property
    def virtual_edges(self) -> tuple[Edge, ...]:
        """(block, exit) edges that let infinite loops reach the exit (module doc)."""
        live = _reach([self.exit], self._pred)
        stuck = [b for b in range(self.exit) if b not in live]
        sinks = _sink_components(stuck, self._succ, self._pred, len(self.blocks))
        last = [max(c, key=lambda b: (self.rpo_index[b], b)) for c in sinks]
        return tuple(sorted((b, self.exit) for b in last))

    @cached_property
    def _pdom_graph(self) -> tuple[list[tuple[int, ...]], list[tuple[int, ...]]]:
        """Successors and predecessors with the virtual edges added."""
        succ = [b.succs for b in self.blocks]
        pred = [b.preds for b in self.blocks]
        for u, v in self.virtual_edges:
            succ[u], pred[v] = succ[u] + (v,), pred[v] + (u,)
        return succ, pred

    @cached_property
    def ipdom(self) -> list[int | None]:
        """Immediate post-dominator per block (None only for the exit); every block
        has one thanks to the virtual edges."""
        succ, pred = self._pdom_graph
        post, _ = _dfs([self.exit], pred.__getitem__, len(self.blocks))
        return _chk(tuple(reversed(post)), succ.__getitem__, len(self.blocks), self.deadline)

    @cached_property
    def _pdom_ranges(self) -> tuple[list[int], list[int]]:
        return _tree_ranges(self.ipdom, self.exit)

    def post_dominates(self, a: int, b: int) -> bool:
        """Every path b -> exit (virtual edges included) passes a."""
        return a == b or _in_subtree(self._pdom_ranges, a, b)

    def post_dominators(self, b: int) -> list[int]:
        """All post-dominators of b, from b itself up to the exit."""
        return _chain(self.ipdom, b)

    def reconvergence_point(self, block: int) -> int | None:
        """Where lanes that diverge at `block` run together again: its immediate
        post-dominator (the exit when they only meet at the end)."""
        return self.ipdom[block]

    @cached_property
    def post_dominance_frontier(self) -> list[frozenset[int]]:
        """Per block: the branches that decide whether it runs."""
        n = len(self.blocks)
        return _frontier(range(n), self._pdom_graph[0].__getitem__, self.ipdom, n,
                         self.deadline.tick)

    def control_dependence(self) -> dict[int, frozenset[int]]:
        """Branch block -> blocks whose execution it decides (Ferrante, Ottenstein
        and Warren): b depends on a iff a is in b's post-dominance frontier. Only
        blocks with two or more real successors count: a virtual edge decides nothing."""
        return dict(self._control_dependence)

    def deciders(self, b: int) -> tuple[int, ...]:
        """The branch blocks that decide whether block `b` runs, in block order: the
        inverse of `control_dependence`, computed once per CFG."""
        return self._deciders.get(b, ())

    @cached_property
    def _deciders(self) -> dict[int, tuple[int, ...]]:
        out: dict[int, list[int]] = {}
        tick = self.deadline.tick  # branches x the blocks they decide
        for branch, blocks in self._control_dependence.items():
            for b in blocks:
                tick()
                out.setdefault(b, []).append(branch)
        return {b: tuple(branches) for b, branches in out.items()}

    @cached_property
    def _control_dependence(self) -> dict[int, frozenset[int]]:
        deps: dict[int, set[int]] = {b.index: set() for b in self.blocks if len(b.succs) > 1}
        tick = self.deadline.tick
        for b, frontier in enumerate(self.post_dominance_frontier):
            tick()
            for a in frontier:
                if a in deps:
                    deps[a].add(b)
        return {a: frozenset(s) for a, s in deps.items()}

    # --- debugging ---------------------------------------------------------------
    def to_dot(self) -> str:
        """Graphviz text: retreating edges bold, virtual edges dashed."""
        out = [f'digraph "{_dot_escape(self.function.name)}" {{', "  node [shape=box];"]
        for b in self.blocks:
            head = "exit" if b.is_exit else " ".join([f"b{b.index}", *b.labels])
            text = "".join(_dot_escape(line) + "\\l" for line in [head, *map(str, b.instructions)])
            out.append(f'  b{b.index} [label="{text}"];')
        back = set(self.back_edges)
        for b in self.blocks:
            for s in b.succs:
                style = " [style=bold]" if (b.index, s) in back else ""
                out.append(f"  b{b.index} -> b{s}{style};")
        out += [f"  b{u} -> b{v} [style=dashed];" for u, v in self.virtual_edges]
        return "\n".join(out + ["}"])


def _dot_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


# --- graph algorithms on integer nodes ---------------------------------------------
def _dfs(roots: Iterable[int], succ: Step, n: int) -> tuple[list[int], list[Edge]]:
    """Postorder and retreating edges (to a node still on the stack), iteratively."""
    state = [0] * n  # 0 unseen, 1 on the stack, 2 finished
    post: list[int] = []
    retreating: list[Edge] = []
    for root in roots:
        if state[root]:
            continue
        state[root] = 1
        stack = [(root, iter(succ(root)))]
        while stack:
            node, it = stack[-1]
            for s in it:
                if state[s] == 0:
                    state[s] = 1
                    stack.append((s, iter(succ(s))))
                    break
                if state[s] == 1:
                    retreating.append((node, s))
            else:
                stack.pop()
                state[node] = 2
                post.append(node)
    return post, retreating


def _reach(roots: Iterable[int], step: Step, tick: Callable[[], None] | None = None
           ) -> set[int]:
    seen = set(roots)
    stack = list(seen)
    while stack:
        if tick is not None:
            tick()
        for s in step(stack.pop()):
            if s not in seen:
                seen.add(s)
                stack.append(s)
    return seen


def _chk(order: Sequence[int], preds: Step, n: int, deadline: Deadline
         ) -> list[int | None]:
    """Cooper, Harvey and Kennedy, "A Simple, Fast Dominance Algorithm": iterate
    idom = intersection of processed predecessors' idoms over reverse postorder.
    Terminates on irreducible graphs too, in a few more passes."""
    num = [-1] * n
    for i, b in enumerate(order):
        num[b] = i
    idom: list[int | None] = [None] * n
    if not order:
        return idom
    idom[order[0]] = order[0]
    changed = True
    while changed:
        deadline.check()  # a pass is linear; irreducible graphs take more of them
        changed = False
        for b in order[1:]:
            new = None
            for p in preds(b):
                if idom[p] is not None:
                    new = p if new is None else _intersect(p, new, idom, num)
            if new != idom[b]:
                idom[b], changed = new, True
    idom[order[0]] = None
    return idom


def _intersect(a: int, b: int, idom: list, num: list[int]) -> int:
    while a != b:
        while num[a] > num[b]:
            a = idom[a]
        while num[b] > num[a]:
            b = idom[b]
    return a


def _frontier(nodes: Iterable[int], preds: Step, idom: list[int | None],
              n: int, tick: Callable[[], None]) -> list[frozenset[int]]:
    """CHK's frontier walk: from each predecessor of b up to idom(b), exclusive."""
    df: list[set[int]] = [set() for _ in range(n)]
    for b in nodes:
        for p in preds(b):
            r: int | None = p
            while r is not None and r != idom[b]:
                tick()
                df[r].add(b)
                r = idom[r]
    return [frozenset(s) for s in df]


def _tree_ranges(parent: list[int | None], root: int) -> tuple[list[int], list[int]]:
    """Preorder number and subtree size of each node, so ancestry is O(1)."""
    children: list[list[int]] = [[] for _ in parent]
    for b, p in enumerate(parent):
        if p is not None:
            children[p].append(b)
    pre, order, stack = [-1] * len(parent), [], [root]
    while stack:
        b = stack.pop()
        pre[b] = len(order)
        order.append(b)
        stack.extend(reversed(children[b]))
    size = [1] * len(parent)
    for b in reversed(order):
        if parent[b] is not None:
            size[parent[b]] += size[b]  # type: ignore[index]
    return pre, size


def _in_subtree(ranges: tuple[list[int], list[int]], a: int, b: int) -> bool:
    pre, size = ranges
    return pre[a] >= 0 and pre[b] >= 0 and pre[a] <= pre[b] < pre[a] + size[a]


def _chain(parent: list[int | None], b: int) -> list[int]:
    out = [b]
    while parent[out[-1]] is not None:
        out.append(parent[out[-1]])  # type: ignore[arg-type]
    return out


def _sink_components(nodes: list[int], succ: Step, pred: Step, n: int) -> list[list[int]]:
    """Strongly connected components of `nodes` (closed under succ) that no edge
    leaves. Kosaraju: finish order on the reversed graph, then forward searches,
    which meet the components sinks first."""
    inside = set(nodes)
    post, _ = _dfs(nodes, lambda b: (p for p in pred(b) if p in inside), n)
    comp: dict[int, int] = {}
    members: list[list[int]] = []
    for root in reversed(post):
        if root in comp:
            continue
        found = _reach([root], lambda b: (s for s in succ(b) if s in inside and s not in comp))
        for b in found:
            comp[b] = len(members)
        members.append(sorted(found))
    return [m for i, m in enumerate(members)
            if all(comp[s] == i for b in m for s in succ(b))]
