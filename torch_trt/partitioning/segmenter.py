"""Segmenter: decide where each node of the top block runs and group the nodes into segments.

Nodes fall in three groups. Constants are copied into each engine that reads them. Glue nodes
are evaluator nodes with only non-tensor outputs (sizes, int arithmetic, lists, tuples): they
run in PyTorch where PyTorch reads them, and the "rebuilt" ones also run in each engine that
reads them (materialize.py), so they neither split segments nor cross a boundary: those with
the same value in every shape analysis run become the engine's own constants or tensor lists,
and sizes of dynamic dims with the int arithmetic and lists built on them become shape tensors
computed inside the engine, which then takes the tensors whose shapes they read. An int read
from tensor data is never rebuilt (support.py). Every other node is placed: ENGINE, or TORCH
with a Reason.

Placed nodes are list-scheduled in a topological order that keeps one kind going while it can,
and segments are the runs of that order; being contiguous runs of a topological order, they
cannot form a cycle. Nodes that write memory, have side effects or sub-blocks, or draw random
numbers are barriers no node is moved across. Engine runs with fewer than min_block_size
converted ops, engine nodes that would pass a non-tensor across their run's boundary, and engine
nodes that need exact an int8/uint8 value their run computes only modulo 256 (boundary.py) go to
PyTorch and the schedule is redone until nothing changes (each round only moves nodes to PyTorch,
so it ends).
"""

import heapq
from collections import defaultdict
from dataclasses import dataclass

from ..conversion.evaluators.aten import RUNTIME_INT_OPS
from ..lowering.mutation import writes_in_place, written_inputs
from .boundary import overflow_demotions
from .segment import Segment, SegmentKind, top_level_node, used_values
from .support import (Code, Reason, boundary_problem, engine_reason, is_converted, is_tensor, layout_reasons,
                      unsupported_reason)

ENGINE, TORCH = SegmentKind.ENGINE, SegmentKind.TORCH
_SIDE_EFFECTS = {"prim::Print", "prim::RaiseException", "aten::warn", "prim::SetAttr", "prim::TimePoint"}


@dataclass
class Placement:
    """The segments in execution order, the glue nodes (graph order), which glue engines rebuild, and the barriers."""

    segments: list
    glue: list
    rebuilt: set
    barriers: set


@dataclass
class _Facts:
    """What engine_reason may ask about values: shape analysis and alias analysis."""

    infos: dict
    alias_db: object

    def info(self, value):
        """The TensorInfo of a tensor value, else None."""
        return self.infos.get(value) if is_tensor(value) else None

    def has_writers(self, value):
        return self.alias_db.has_writers(value)


def segment_graph(graph, settings, infos, refused):
    """The Placement of `graph`'s nodes: every placed node in exactly one segment, segments in a valid order.

    `refused` maps nodes that conversion or an engine build refused to their Reason: they run in PyTorch.
    """
    nodes = [n for n in graph.nodes() if n.kind() != "prim::Constant"]
    facts = _Facts(infos, graph.alias_db())
    layouts = layout_reasons(nodes, infos)
    base = {n: refused.get(n) or layouts.get(n) or engine_reason(n, settings, facts) for n in nodes}
    glue = [n for n in nodes if not any(map(is_tensor, n.outputs())) and not is_converted(n)
            and unsupported_reason(n, settings) is None and n not in refused]
    rebuilt, glue_set = _rebuilt(glue, base, infos), set(glue)
    placed = [n for n in nodes if n not in glue_set]
    deps = _dependencies(nodes, set(placed))
    barriers = {n for n in placed if _is_barrier(n)}
    forced = {}
    while True:
        reasons = _classify(placed, base, forced, rebuilt, infos, settings)
        runs = _best_runs(placed, deps, reasons, barriers)
        demoted = _demotions(runs, reasons, rebuilt, infos, settings)
        if not demoted:
            break
        forced.update(demoted)
    segments = [Segment(kind, run, reasons={n: reasons[n] for n in run} if kind == TORCH else {})
                for kind, run in runs]
    return Placement(segments, glue, rebuilt, barriers)


def _is_barrier(node):
    """Nodes whose order against every other node matters: writes, side effects, control flow, randomness."""
    return bool(list(node.blocks())) or written_inputs(node) or node.kind() in _SIDE_EFFECTS or node.isNondeterministic()


def _rebuilt(glue, base, infos):
    """The glue an engine can compute itself: engine-worthy, reading constants, tensors and rebuilt glue, never
    written in place afterwards (a list a loop appends to holds its final value only after the loop), and either
    the same in every shape-analysis run (evaluated when the engine is built) or of a kind that computes runtime
    ints (RUNTIME_INT_OPS: sizes of dynamic dims and int arithmetic on them, computed when the engine runs)."""
    rebuilt = set()
    for node in glue:
        sources = all(is_tensor(v) or v.node().kind() == "prim::Constant" or v.node() in rebuilt for v in node.inputs())
        fixed = all(infos[v].constant for v in node.outputs() if v in infos)
        written = any(writes_in_place(use.user) for v in node.outputs() for use in v.uses())
        if base[node] is None and sources and not written and (fixed or node.kind() in RUNTIME_INT_OPS):
            rebuilt.add(node)
    return rebuilt


def _dependencies(nodes, placed):
    """For each placed node, the placed nodes it reads from, directly or through glue."""
    sources, deps = {}, {}
    for node in nodes:
        found = set()
        for value in used_values(node):
            producer = value.node()
            found |= {producer} if producer in placed else sources.get(producer, set())
        (deps if node in placed else sources)[node] = found
    return deps


def _classify(placed, base, forced, rebuilt, infos, settings):
    """Each placed node's Reason (None: engine), in graph order, so each input sees its producer's fate."""
    reasons = {}
    for node in placed:
        reason = base[node] or forced.get(node)
        for value in [] if reason else _entering(node, rebuilt, infos):
            producer = value.node()
            if producer not in reasons or reasons[producer] is not None:
                reason = boundary_problem(value, infos.get(value), settings)
                if reason:
                    break
        reasons[node] = reason
    return reasons


def _entering(node, rebuilt, infos):
    """The values a node in an engine takes from outside the engine's own copies: its inputs, except constants
    and rebuilt glue of one value (engine constants), with rebuilt tensor lists and runtime ints replaced by what
    they read."""
    for value in node.inputs():
        producer = value.node()
        if producer in rebuilt and not (value in infos and infos[value].constant):  # computed in the engine from
            yield from _entering(producer, rebuilt, infos)  # what it reads
        elif producer.kind() != "prim::Constant" and producer not in rebuilt:
            yield value


def _best_runs(placed, deps, reasons, barriers):
    """The runs of the kind-greedy schedule, starting with whichever kind gives fewer runs."""
    kinds = {n: ENGINE if reasons[n] is None else TORCH for n in placed}
    index = {n: i for i, n in enumerate(placed)}
    candidates = [_runs(_schedule(placed, deps, kinds, barriers, index, start), kinds) for start in (ENGINE, TORCH)]
    return min(candidates, key=len)


def _schedule(placed, deps, kinds, barriers, index, start):
    """A topological order of the placed nodes that switches kind only when no node of the current kind is ready."""
    order, current, region = [], start, []
    for node in placed + [None]:
        if node is None or node in barriers:
            part, current = _greedy(region, deps, kinds, index, current)
            order += part + ([node] if node is not None else [])
            current, region = (kinds[node] if node is not None else current), []
        else:
            region.append(node)
    return order


def _greedy(region, deps, kinds, index, current):
    """Kind-greedy list scheduling of one barrier-free region; ties go to the earlier node in the graph."""
    members = set(region)
    waiting = {n: len(deps[n] & members) for n in region}
    users = defaultdict(list)
    for node in region:
        for dep in deps[node] & members:
            users[dep].append(node)
    ready = {ENGINE: [], TORCH: []}
    for node in region:
        if not waiting[node]:
            heapq.heappush(ready[kinds[node]], (index[node], node))
    order = []
    while len(order) < len(region):
        if not ready[current]:
            current = TORCH if current == ENGINE else ENGINE
        node = heapq.heappop(ready[current])[1]
        order.append(node)
        for user in users[node]:
            waiting[user] -= 1
            if not waiting[user]:
                heapq.heappush(ready[kinds[user]], (index[user], user))
    return order, current


def _runs(order, kinds):
    """[(kind, [nodes])] for the maximal same-kind runs of `order`."""
    runs = []
    for node in order:
        if runs and runs[-1][0] == kinds[node]:
            runs[-1][1].append(node)
        else:
            runs.append((kinds[node], [node]))
    return runs


def _demotions(runs, reasons, rebuilt, infos, settings):
    """Engine nodes to move to PyTorch: non-tensors crossing their run's boundary, int8/uint8 values needed exact
    that their run computes modulo 256, or too small a run."""
    demoted = {}
    for kind, run in runs:
        if kind != ENGINE:
            continue
        inside = set(run)
        for node in run:
            for value in node.outputs():
                if not is_tensor(value) and any(top_level_node(u.user) not in inside for u in value.uses()):
                    demoted[node] = Reason(Code.NON_TENSOR, f"its non-tensor output %{value.debugName()} is "
                                                            "read outside its engine segment")
            for value in _entering(node, rebuilt, infos):
                problem = value.node() in reasons and value.node() not in inside and \
                    boundary_problem(value, infos.get(value), settings)
                if problem:
                    demoted[node] = problem
        demoted.update(overflow_demotions(run, infos))
        converted = sum(map(is_converted, run))
        if not demoted.keys() & inside and converted < settings.min_block_size \
                and not settings.require_full_compilation:
            for node in run:
                demoted[node] = Reason(Code.SMALL_BLOCK, f"in an engine block of {converted} converted op(s), "
                                                         f"fewer than min_block_size={settings.min_block_size}")
    return demoted
