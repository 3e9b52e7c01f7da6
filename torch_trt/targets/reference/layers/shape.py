"""IShapeLayer, and shape tensors: the values layers read from their shape inputs.

IShapeLayer gives a tensor's dimensions as a 1-D INT64 tensor. Some layer inputs must be shape
tensors (shuffle's reshape dims, slice's start/size/stride/axes, fill's dimensions): values
computed from tensor shapes and constants, never from tensor data, with at most 64 elements, as
TensorRT requires (which layer kinds may compute them is not checked: any op on shape tensors gives
one). `shape_values` reads them as host ints. At run time they are ordinary tensors;
when the program is generated (make_fx, once per input shape) their values are read and baked
in, which is exact because they depend on the input shapes only. During shape inference tensors
are meta tensors, so a shape tensor travels as a `KnownValues` meta tensor that also carries its
values on the host: IShapeLayer and small constants make them, PyTorch ops on them keep the
values (see `KnownValues.__torch_function__`), and layers that build index tensors of their own
keep them with `@keeps_values`. A shape input without known values is refused.
"""

import functools

import torch
from torch._subclasses.fake_tensor import is_fake
from torch.fx.experimental.proxy_tensor import disable_proxy_modes_tracing
from torch.utils._pytree import tree_flatten, tree_map

from ...dtypes import INDEX_DTYPES
from ..enums import LayerType, Severity
from ..network import ILayer, check, network_method

SHAPE_TENSOR_VOLUME = 64  # TensorRT's limit on the elements of a shape tensor


class KnownValues(torch.Tensor):
    """A meta tensor (shape and dtype, no data) that also knows its values: a shape tensor during shape inference."""

    @staticmethod
    def __new__(cls, meta, values):
        tensor = torch.Tensor._make_subclass(cls, meta)
        tensor.host_values = values
        return tensor

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        """Run `func` on the meta tensors; when every tensor argument knows its values, run it on those too."""
        kwargs = kwargs or {}
        with torch._C.DisableTorchFunctionSubclass():
            result = func(*args, **kwargs)
        tensors = [a for a in tree_flatten((args, kwargs))[0] if isinstance(a, torch.Tensor)]
        if not isinstance(result, torch.Tensor) or not result.is_meta or not all(map(knows_values, tensors)):
            return result
        values = func(*tree_map(_values_or_self, args), **tree_map(_values_or_self, kwargs))
        return known(result, values)


def knows_values(tensor):
    """Whether `tensor` is a meta tensor with known values (a shape tensor during shape inference)."""
    return isinstance(tensor, KnownValues)


def _values_or_self(value):
    return value.host_values if knows_values(value) else value


def known(meta, values):
    """`meta` knowing `values`, when they are small enough for a shape tensor and on the host; else `meta`. The values
    must have `meta`'s shape: values at other sizes (a layer's own, or a probe's) are a bug in the layer making them."""
    meta = meta.as_subclass(torch.Tensor)
    if not isinstance(values, torch.Tensor):
        return meta
    if values.shape != meta.shape:
        raise AssertionError(f"internal error in the reference: values of shape {tuple(values.shape)} carried by a "
                             f"shape tensor of shape {tuple(meta.shape)}; the layer making them must compute them at "
                             "its output's shape, or carry none")
    if values.device.type != "cpu" or values.numel() > SHAPE_TENSOR_VOLUME:
        return meta
    return KnownValues(meta, values.to(meta.dtype))


def keeps_values_if(computable):
    """keeps_values for a layer that cannot always compute on the values: `computable(layer, values)` says whether it
    can (a gather cannot when its indices read outside its data); when not, the result is no shape tensor."""

    def decorate(compute):
        @functools.wraps(compute)
        def wrapped(self, inputs, weights):
            result = compute(self, inputs, weights)
            given = [t for t in inputs if t is not None]
            if not given or not all(map(knows_values, given)) or result.numel() > SHAPE_TENSOR_VOLUME:
                return result
            values = [None if t is None else t.host_values for t in inputs]
            if not computable(self, values):
                return result
            return known(result, compute(self, values, weights))

        return wrapped

    return decorate


def keeps_values(compute):
    """For `_compute` of layers that make index tensors of their own (slice, fill; gather uses keeps_values_if): when
    every input knows its values and the result is small, compute on the values too, so a shape tensor stays one."""
    return keeps_values_if(lambda layer, values: True)(compute)


class _TensorInputAttributes(ILayer):
    """A layer some of whose attributes may be tensors given by set_input instead (TensorRT's dynamic slice and fill):
    the attribute then reads None, and setting it again drops the tensor."""

    _tensor_inputs = {}  # set_input index -> the attribute it replaces
    _input_count = 0  # set_input takes indices 0 .. _input_count - 1
    _kind = ""  # the layer's name in messages

    def _drop_input_replaced_by(self, attribute):
        index = {name: i for i, name in self._tensor_inputs.items()}.get(attribute)
        if index is not None and index < len(self._inputs):
            self._inputs[index] = None

    def set_input(self, index, tensor):
        if not 0 <= index < self._input_count:
            self._network._log(Severity.ERROR, f"{self.name}: set_input({index}): a {self._kind} takes inputs 0 to "
                               f"{self._input_count - 1}")
            return
        super().set_input(index, tensor)
        if index in self._tensor_inputs:
            object.__setattr__(self, self._tensor_inputs[index], None)


def check_shape_input(inputs, index, what):
    """TensorRT's rule for a shape input given by set_input: a 1-D INT32 or INT64 tensor."""
    tensor = inputs[index]
    check(tensor.dim() == 1 and tensor.dtype in INDEX_DTYPES, f"{what} (input {index}) must be a 1-D INT32 or "
          f"INT64 shape tensor, got {tensor.dtype} of shape {tuple(tensor.shape)}")


def given(inputs, index):
    """Input `index` when set_input gave it, else None."""
    return inputs[index] if len(inputs) > index else None


class ValuesNotTraced(Exception):
    """A shape tensor's values were read while the program was traced with fake tensors, which hold none."""


def shape_values(tensor, what):
    """The values of a shape tensor as host ints (a list for 1-D, an int for 0-D)."""
    if tensor.is_meta:
        check(knows_values(tensor), f"{what} must be a shape tensor, computed from tensor shapes and constants (not "
              f"tensor data), with at most {SHAPE_TENSOR_VOLUME} elements; this one is not")
        return tensor.host_values.tolist()
    if is_fake(tensor):
        raise ValuesNotTraced(what)
    with disable_proxy_modes_tracing():  # while the program is generated for one input shape, read the real values
        return tensor.tolist()


class IShapeLayer(ILayer):
    _layer_type = LayerType.SHAPE

    def _compute(self, inputs, weights):
        if inputs[0].is_meta:
            values = torch.tensor(tuple(inputs[0].shape), dtype=torch.int64)
            return known(torch.empty(values.shape, dtype=torch.int64, device="meta"), values)
        # Shapes are concrete once the engine runs, so the runtime shape is the answer.
        return torch.tensor(tuple(inputs[0].shape), dtype=torch.int64, device=inputs[0].device)


@network_method
def add_shape(self, input):
    return self._add(IShapeLayer, [input])
