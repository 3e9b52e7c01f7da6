"""Dynamic dims -> Input ranges, and inputs of other sizes to check that a trace does not depend on them.

A dim that dynamo made symbolic (dynamic=True, mark_dynamic, automatic dynamic) gets
- min: the symbol's lower bound; 1 instead of dynamo's own 0/1-specialization bound (2) when the
  graph traces the same with that symbol at 1 (`min_one`), so the graph dynamo specializes for
  size 1 can reuse the engine (engine_cache.py);
- opt: its size in this call;
- max: the symbol's upper bound capped by `dynamic_shape_max`, or when that is unset by
  max(2 * opt, DEFAULT_MAX_FLOOR).
A call with a dim outside its range rebuilds the engine with the range widened to include it.
"""

import sympy
import torch

from .._input import Input
from .graph_signature import SIZE

DEFAULT_MAX_FLOOR = 64


def input_specs(signature, tensors, settings, static=False, previous=None, min_one=None):
    """One Input per user tensor; `static` pins every dim, `previous` specs are widened to include this call.

    `min_one`: the symbols whose dims may go down to 1 (None: all of them). The dims of tied symbols (tied_groups:
    the graph may need them equal, or a fixed distance apart) get ranges that are one range moved.
    """
    ranges = {}
    for k, tensor in enumerate(tensors):
        for d, size in enumerate(tensor.shape):
            expr = signature.input_dims[k][d]
            if expr is not None and not static:
                one = min_one is None or expr.free_symbols <= min_one
                ranges[k, d] = _range(signature.shape_env, expr, size, settings, one)
    _move_tied_dims_together(signature, tensors, ranges)
    specs = []
    for k, tensor in enumerate(tensors):
        lows, highs = [], []
        for d, size in enumerate(tensor.shape):
            low, high = ranges.get((k, d), (size, size))
            if previous is not None:
                low, high = min(low, previous[k].min_shape[d]), max(high, previous[k].max_shape[d])
            lows.append(low)
            highs.append(high)
        specs.append(Input(min_shape=lows, opt_shape=tuple(tensor.shape), max_shape=highs, dtype=tensor.dtype))
    return specs


def halfway_to_opt(specs):
    """The specs with each max shape moved halfway to the opt shape (tied dims keep their distances: they are one
    move from the opt shapes), or None where every max is its opt already."""
    if all(spec.max_shape == spec.opt_shape for spec in specs):
        return None
    return [Input(min_shape=spec.min_shape, opt_shape=spec.opt_shape, dtype=spec.dtype,
                  max_shape=[opt + (high - opt) // 2 for opt, high in zip(spec.opt_shape, spec.max_shape)])
            for spec in specs]


def _move_tied_dims_together(signature, tensors, ranges):
    """Narrow the ranges of each tied group's dims (guards' order included) to one range moved: the dims of its symbols
    move by one amount within all their ranges, and a dim of a size expression of them (a mask of s0 + 1) spans that
    expression's values over the move, so the ranges' min and max shapes are shapes the graph can run at."""
    sizes = {symbol: tensors[k].shape[d] for symbol, (k, d) in signature.symbols.items()}
    for group in tied_groups(signature, sizes, ordered_too=True):
        symbol_dims = [(k, d) for k, d in ranges if signature.input_dims[k][d] in group]
        if not symbol_dims:
            continue
        lowest = max(ranges[k, d][0] - tensors[k].shape[d] for k, d in symbol_dims)
        highest = min(ranges[k, d][1] - tensors[k].shape[d] for k, d in symbol_dims)
        for k, d in ranges:
            expr = signature.input_dims[k][d]
            if expr.free_symbols <= set(group):
                ends = [int(expr.xreplace({symbol: sizes[symbol] + move for symbol in group}))
                        for move in (lowest, highest)]
                ranges[k, d] = min(ends), max(ends)


def _range(shape_env, expr, size, settings, min_one):
    lower, upper = None, None
    if shape_env is not None:
        bounds = shape_env.bound_sympy(expr)
        lower, upper = _finite(bounds.lower), _finite(bounds.upper)
    if lower is not None and lower > 2:
        low = lower
    else:
        low = 1 if min_one else 2
    cap = settings.dynamic_shape_max or max(2 * size, DEFAULT_MAX_FLOOR)
    high = cap if upper is None else min(upper, cap)
    return min(low, size), max(high, size)


def _finite(bound):
    """An int for a finite sympy bound, None for an infinite or huge one."""
    if not isinstance(bound, (int, sympy.Integer)) or not -(2 ** 62) < int(bound) < 2 ** 62:
        return None
    return int(bound)


def sizes_of(signature, args):
    """Each symbol's size in these arguments."""
    return {symbol: args[signature.input_positions[k]].shape[d] for symbol, (k, d) in signature.symbols.items()}


def alternate_args(signature, args, specs, symbols, size_values=()):
    """The arguments with the dims of `symbols` (a tied group) moved by one amount to other sizes in range that pass
    dynamo's guards: the first such move, then more until each of `size_values` (the graph's size expressions) that
    depends on `symbols` takes another value at one of them. A trace records some size values as constants (the shift
    of x.roll(x.size(1) // 2, 1)), and a trace at a size where such a value is the same (9 for 8) cannot show it.

    Values of the resized tensors repeat along the grown dims, so indices and masks stay valid.
    """
    sizes = sizes_of(signature, args)
    places = [(symbol, signature.symbols[symbol]) for symbol in symbols]
    base = min(sizes[symbol] for symbol in symbols)
    low = base + max(max(specs[k].min_shape[d], 2) - sizes[symbol] for symbol, (k, d) in places)
    high = base + min(specs[k].max_shape[d] - sizes[symbol] for symbol, (k, d) in places)
    unchanged = [expr for expr in size_values if expr.free_symbols & set(symbols) and expr.free_symbols <= sizes.keys()]
    near_constants = sorted({int(c) + step for expr in unchanged for c in expr.atoms(sympy.Integer) if abs(c) > 1
                             for step in (-1, 0, 1)})  # x.size(1) == 512 differs at 512 only
    chosen = []
    for change in (*_CHANGES, lambda n: low, lambda n: high, *[lambda n, c=c: c for c in near_constants]):
        if not low <= change(base) <= high or change(base) == base:
            continue
        values = {**sizes, **{symbol: sizes[symbol] + change(base) - base for symbol in symbols}}
        changed = [expr for expr in unchanged if _value(expr, values) != _value(expr, sizes)]
        if chosen and not changed:
            continue
        other = resized_args(signature, args, values)
        if other is not None and _guards_pass(signature, other):
            chosen.append(other)
            unchanged = [expr for expr in unchanged if expr not in changed]
    return chosen


def _value(expr, sizes):
    """A size expression's value at these sizes; None where it is undefined (a division by a size // 4 of 0)."""
    try:
        return expr.xreplace(sizes)
    except ZeroDivisionError:
        return None


def size_values(gm):
    """The sympy expressions of the size values an FX graph from dynamo computes (x.size(1) // 2, float(n))."""
    return [value.node.expr for node in gm.graph.nodes
            if isinstance(value := node.meta.get("example_value"), (torch.SymInt, torch.SymFloat))]


def tied_groups(signature, sizes, ordered_too=False):
    """The symbols grouped to change together, by one amount: dims that dynamo gave two symbols may still have to be
    equal for the graph to run (a batch of ids and a batch of masks), which sizes equal here suggest, and dynamo's
    guards may hold two symbols a fixed distance apart (an attention mask one longer than the KV cache, guarded as
    s1 <= s0 + 1 and s1 >= s0 + 1), so that no size of one alone passes them. `sizes`: each symbol's size.

    `ordered_too`: also symbols that one guard orders (s1 >= s0 + 1): moved together from sizes that pass it, they
    pass it at every move, so ranges moved together keep their min and max shapes within the guards."""
    group_of = {symbol: {symbol} for symbol in sizes}
    ties = [(a, b) for a in sizes for b in sizes if a != b and sizes[a] == sizes[b]]
    if signature.shape_env is not None:
        ties += _fixed_distances(signature.shape_env, sizes.keys(), both_ways=not ordered_too)
    for a, b in ties:
        if group_of[a] is not group_of[b]:
            merged = group_of[a] | group_of[b]
            for symbol in merged:
                group_of[symbol] = merged
    groups = {id(group): group for group in group_of.values()}.values()
    return [sorted(group, key=str) for group in groups]


def _fixed_distances(shape_env, symbols, both_ways=True):
    """The pairs of `symbols` that guards hold at a fixed distance, a guard `a - b + c <= 0` and its converse, or (not
    `both_ways`) at least or at most one."""
    at_most_zero = set()  # e with a guard e <= 0
    for guard in shape_env.guards:
        expr = shape_env.replace(guard.expr)  # in terms of the symbols dynamo kept
        if isinstance(expr, (sympy.Le, sympy.Lt, sympy.Eq)):
            difference = expr.lhs - expr.rhs + (1 if isinstance(expr, sympy.Lt) else 0)
        elif isinstance(expr, (sympy.Ge, sympy.Gt)):
            difference = expr.rhs - expr.lhs + (1 if isinstance(expr, sympy.Gt) else 0)
        else:
            continue
        at_most_zero.add(sympy.expand(difference))
        if isinstance(expr, sympy.Eq):
            at_most_zero.add(sympy.expand(-difference))
    pairs = []
    for difference in at_most_zero:
        free = difference.free_symbols
        if len(free) == 2 and free <= symbols and (not both_ways or sympy.expand(-difference) in at_most_zero):
            a, b = sorted(free, key=str)
            if {difference.coeff(a), difference.coeff(b)} == {1, -1}:
                pairs.append((a, b))
    return pairs


_CHANGES = (lambda n: n + 1, lambda n: n + 2, lambda n: n - 1, lambda n: 2 * n, lambda n: n + 4, lambda n: n + 8)


def resized_args(signature, args, values):
    """The graph's arguments with the dims of each symbol set to `values[symbol]`, or None if that is impossible."""
    other = list(args)
    for k, position in enumerate(signature.input_positions):
        tensor = args[position]
        for d, expr in enumerate(signature.input_dims[k]):
            if expr is None:
                continue
            if not expr.free_symbols <= values.keys():
                return None
            new_size = int(expr.xreplace(values))
            if new_size < 1:
                return None
            tensor = tensor.index_select(d, torch.arange(new_size, device=tensor.device) % tensor.shape[d])
        other[position] = tensor
    for position, (kind, ref) in enumerate(signature.args):
        if kind == SIZE:
            other[position] = other[signature.input_positions[ref[0]]].shape[ref[1]]
    return other


def _guards_pass(signature, args):
    if signature.shape_env is None or any(f is None for f in signature.fakes):
        return True
    try:
        return signature.shape_env.evaluate_guards_for_args(signature.fakes, args)
    except Exception:  # a guard dynamo cannot evaluate outside its own frame: do not trust the other sizes
        return False
