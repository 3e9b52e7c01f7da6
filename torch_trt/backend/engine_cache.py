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

from .fx_to_script import canonical_text, constants_digest

_NOT_IN_KEY = {"debug", "pass_through_build_failures", "dynamic_shape_max"}
_entries = {}  # key -> list of (input specs, compiled ScriptModule)
_lent = {}  # key -> (weak references to the tensors lent to its engines, their versions at the build)
_LOCK = threading.Lock()  # graphs rebuild on their callers' threads


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
        entries = list(_entries.get(key, []))
    for entry_specs, module in entries:
        if len(entry_specs) == len(specs) and all(_contains(e, s) for e, s in zip(entry_specs, specs)):
            return entry_specs, module
    return None


def store(key, specs, module, lent):
    """Keep `module`, built for `specs` with `lent` lent to its engines, under `key`; forget the modules whose lent
    tensors were written since their build: their keys, which hold the versions, cannot come again."""
    with _LOCK:
        for stale in [k for k, (tensors, versions) in _lent.items() if _versions(tensors) != versions]:
            del _entries[stale], _lent[stale]
        _entries.setdefault(key, []).append((specs, module))
        _lent[key] = ([weakref.ref(t) for t in lent], [t._version for t in lent])


def clear():
    """Forget every compiled module."""
    with _LOCK:
        _entries.clear()
        _lent.clear()


def _versions(references):
    """The versions of the tensors behind weak `references` (None for one that is gone)."""
    return [getattr(reference(), "_version", None) for reference in references]


def _contains(outer, inner):
    return outer.dtype == inner.dtype and len(outer.min_shape) == len(inner.min_shape) and all(
        lo <= i_lo and i_hi <= hi for lo, hi, i_lo, i_hi in
        zip(outer.min_shape, outer.max_shape, inner.min_shape, inner.max_shape))
