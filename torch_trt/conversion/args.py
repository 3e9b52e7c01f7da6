"""Arg and Args: a node's inputs bound to its schema, readable by position or by name.

Each Arg holds either an ITensor (a runtime value in the network) or an IValue (a value known
at compile time: int, float, list, tensor constant, None). The typed accessors check which it
is and say clearly what was expected.
"""

import numbers

import torch


class ArgError(TypeError):
    """An argument was not of the kind the converter expected."""


class Arg:
    """One input of a node: an ITensor or a compile-time value."""

    def __init__(self, ctx, name, value, is_itensor):
        self._ctx, self.name, self.value, self._is_itensor = ctx, name, value, is_itensor

    def is_itensor(self):
        return self._is_itensor

    def is_none(self):
        return not self._is_itensor and self.value is None

    def itensor(self):
        """The value as an ITensor; a compile-time tensor becomes a network constant."""
        if self._is_itensor:
            return self.value
        if isinstance(self.value, torch.Tensor):
            return self._ctx.constant(self.value)
        raise ArgError(f"argument '{self.name}' must be a tensor, got {type(self.value).__name__} {self.value!r}")

    def _static(self, kinds, what):
        if self._is_itensor:
            raise ArgError(f"argument '{self.name}' must be known at compile time ({what}), got a runtime tensor")
        if not isinstance(self.value, kinds) or isinstance(self.value, bool) and bool not in kinds:
            raise ArgError(f"argument '{self.name}' must be {what}, got {type(self.value).__name__} {self.value!r}")
        return self.value

    def to_int(self):
        return int(self._static((int,), "an int"))

    def to_float(self):
        return float(self._static((int, float, bool), "a number"))

    def to_bool(self):
        return bool(self._static((bool, int), "a bool"))

    def to_str(self):
        return self._static((str,), "a string")

    def to_int_list(self):
        value = self._static((list, tuple, int), "a list of ints")
        values = [value] if isinstance(value, int) else list(value)
        runtime = [v for v in values if not isinstance(v, numbers.Number)]
        if runtime:  # sizes read from a dynamic dim: ITensors
            raise ArgError(f"argument '{self.name}' holds {len(runtime)} runtime value(s) where ints known at "
                           "compile time are needed")
        return [int(v) for v in values]

    def to_float_list(self):
        return [float(v) for v in self._static((list, tuple), "a list of numbers")]

    def to_list(self):
        """The compile-time list (a Tensor[] is a list of ITensors and compile-time tensors)."""
        return list(self._static((list, tuple), "a list"))

    def operand(self):
        """The value as an element-wise operand: an ITensor, a compile-time tensor or a Python number (kept a
        number, so that broadcasting and type promotion treat it as PyTorch treats a scalar)."""
        if self._is_itensor:
            return self.value
        return self._static((torch.Tensor, int, float, bool), "a tensor or a number")

    def to_tensor(self):
        """The compile-time tensor value (weights, constants)."""
        return self._static((torch.Tensor,), "a tensor")

    def optional(self, accessor):
        """None when the argument is None, else `accessor(self)` (e.g. Arg.to_int)."""
        return None if self.is_none() else accessor(self)

    def __repr__(self):
        return f"Arg({self.name}={'<ITensor>' if self._is_itensor else repr(self.value)})"


class Args:
    """The node's Arg list in schema order: `args[0]`, `args["dim"]`, or `args.get("dim", [])` for optional names."""

    def __init__(self, ctx, args):
        self._ctx, self._args = ctx, args
        self._by_name = {arg.name: arg for arg in args}

    def __getitem__(self, key):
        if isinstance(key, str):
            if key not in self._by_name:
                raise KeyError(f"no argument named {key!r}; the schema has {list(self._by_name)}")
            return self._by_name[key]
        return self._args[key]

    def get(self, name, default=None):
        """The argument `name`, or an Arg holding `default` when this overload has no such argument or it is None.

        Converters registered for several overloads read what only some of them take this way.
        """
        arg = self._by_name.get(name)
        if arg is None or arg.is_none():
            return Arg(self._ctx, name, default, False)
        return arg

    def __contains__(self, name):
        """Whether the schema has an argument `name`."""
        return name in self._by_name

    def __len__(self):
        return len(self._args)

    def __iter__(self):
        return iter(self._args)
