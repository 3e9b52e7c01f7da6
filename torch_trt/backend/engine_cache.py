"""Compiled modules of this process, reused when the same graph with the same weights and settings comes again.

The key hashes the frozen graph's canonical text, its weights, the settings that shape an
engine, the device and the identities and versions of the tensors lent to its engines: engines
reading one model's tensors must not serve another model with equal weights, whose caller would
not see writes to the first model's tensors. Those tensors' bytes are not hashed: their versions
change with every write. Under one key sit the modules built for different input
ranges; a lookup returns one whose ranges contain the requested ones, so a graph that dynamo
specialized to a static shape reuses the engine of its dynamic twin when their traces match.
Entries whose lent tensors were written since are dropped at the next store: a model whose weights are
updated between evaluations does not pile up engines. `clear()` empties it (torch._dynamo.reset() calls it
through the backend's `reset`).
"""

import hashlib
import threading
import weakref
from typing import NamedTuple

from .fx_to_script import constants_digest
from .graph_text import canonical_text

_NOT_IN_KEY = {"debug", "pass_through_build_failures", "dynamic_shape_max"}
_LOCK = threading.Lock()  # graphs rebuild on their callers' threads


class _Entry(NamedTuple):
    """The modules built under one key, and the tensors lent to their engines (weakly) with their versions then."""

    modules: list  # (input specs, compiled ScriptModule)
    lent: list
    versions: list

    def stale(self):
        """Whether a lent tensor was written since (or is gone): the key, which holds the versions, cannot come
        again."""
        return [getattr(reference(), "_version", None) for reference in self.lent] != self.versions


_entries = {}  # key -> _Entry


def cache_key(graph, settings, device, lent):
    """The key of a frozen graph compiled with `settings` on `device`, its engines lent the tensors `lent`."""
    options = {name: sorted(map(str, value)) if isinstance(value, set) else value
               for name, value in vars(settings).items() if name not in _NOT_IN_KEY}
    text = (f"{canonical_text(graph)}\nweights: {constants_digest(graph, known=lent)}\n{sorted(options.items())}\n"
            f"{device}\nlent: {[(id(t), t._version) for t in lent]}")
    return hashlib.sha256(text.encode()).hexdigest()


def lookup(key, specs):
    """(specs, module) of an entry whose ranges contain `specs`, or None."""
    with _LOCK:
        modules = list(_entries[key].modules) if key in _entries else []
    for entry_specs, module in modules:
        if len(entry_specs) == len(specs) and all(_contains(e, s) for e, s in zip(entry_specs, specs)):
            return entry_specs, module
    return None


def store(key, specs, module, lent):
    """Keep `module`, built for `specs` with `lent` lent to its engines, under `key`; forget the modules whose lent
    tensors were written since their build: their keys, which hold the versions, cannot come again."""
    with _LOCK:
        for stale in [k for k, entry in _entries.items() if entry.stale()]:
            del _entries[stale]
        entry = _entries.setdefault(key, _Entry([], [weakref.ref(t) for t in lent], [t._version for t in lent]))
        entry.modules.append((specs, module))


def clear():
    """Forget every compiled module."""
    with _LOCK:
        _entries.clear()


def _contains(outer, inner):
    return outer.dtype == inner.dtype and len(outer.min_shape) == len(inner.min_shape) and all(
        lo <= i_lo and i_hi <= hi for lo, hi, i_lo, i_hi in
        zip(outer.min_shape, outer.max_shape, inner.min_shape, inner.max_shape))
