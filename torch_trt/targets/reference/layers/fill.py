"""IFillLayer: a tensor made from its dimensions: LINSPACE (alpha + sum of beta[k] * i_k) or random values.

The dimensions are `shape`, or a 1-D INT32/INT64 shape tensor given by set_input(0). alpha and beta are the
attributes, or tensors given by set_input(1) and set_input(2), both or neither, of one dtype: for LINSPACE
alpha is the 0-D start and beta the 1-D deltas, one per output dim (a static beta is a single delta, so a
static LINSPACE is 1-D); RANDOM_UNIFORM draws from [alpha, beta), RANDOM_NORMAL with mean alpha and standard
deviation beta, both 0-D. An attribute given as a tensor reads None, and setting it drops the tensor.
LINSPACE outputs FLOAT, INT32 or INT64, random fills FLOAT or HALF. The reference needs a tensor input (the
dimensions or alpha and beta) to place the output on the engine's device.
"""

import torch

from ..enums import DataType, FillOperation, LayerType, member
from ..network import check, check_deferred, network_method
from ..types import TORCH_DTYPE, to_dims
from .shape import _TensorInputAttributes, check_shape_input, given, keeps_values, shape_values

_OUTPUT_TYPES = {FillOperation.LINSPACE: (DataType.FLOAT, DataType.INT32, DataType.INT64),
                 FillOperation.RANDOM_UNIFORM: (DataType.FLOAT, DataType.HALF),
                 FillOperation.RANDOM_NORMAL: (DataType.FLOAT, DataType.HALF)}


def _linspace(dims, alpha, beta, dtype):
    """alpha + sum over k of beta[k] * (index along dim k), in `dtype`."""
    result = alpha.to(dtype).reshape((1,) * len(dims))
    for dim, size in enumerate(dims):
        steps = torch.arange(size, dtype=dtype, device=alpha.device).reshape([-1 if d == dim else 1
                                                                             for d in range(len(dims))])
        result = result + beta[dim].to(dtype) * steps
    return result.expand(dims)


class IFillLayer(_TensorInputAttributes):
    """set_input: 0 the dimensions (a 1-D INT32/INT64 shape tensor), 1 alpha, 2 beta."""

    _layer_type = LayerType.FILL
    _attributes = ("shape", "operation", "alpha", "beta", "to_type")
    _tensor_inputs, _input_count, _kind = {0: "shape", 1: "alpha", 2: "beta"}, 3, "fill"

    def __setattr__(self, key, value):
        if key == "shape":
            value = to_dims(value, "IFillLayer.shape")
        elif key in ("operation", "to_type"):
            value = member(FillOperation if key == "operation" else DataType, value, f"IFillLayer.{key}")
        self._drop_input_replaced_by(key)
        super().__setattr__(key, value)

    def is_alpha_beta_int64(self):
        """Whether the static alpha and beta are int64 (set from Python ints) rather than doubles."""
        return all(type(v) is int for v in (self.alpha, self.beta))

    def _dims(self, inputs):
        shape = given(inputs, 0)
        return list(self.shape) if shape is None else shape_values(shape, "fill dimensions (input 0)")

    def _check(self, inputs):
        check(self.to_type in _OUTPUT_TYPES[self.operation], f"a {self.operation.name} fill outputs "
              f"{', '.join(t.name for t in _OUTPUT_TYPES[self.operation])}, not {self.to_type.name}")
        if given(inputs, 0) is not None:
            check_shape_input(inputs, 0, "fill dimensions")
        dims, alpha, beta = self._dims(inputs), given(inputs, 1), given(inputs, 2)
        check(all(n >= 0 for n in dims), f"fill dimensions {dims} have negative entries")
        # Converters give the inputs after add_fill: a misfit waits for them, the build refuses.
        check_deferred(any(t is not None for t in inputs), "a fill with no tensor input is not supported by the "
                       "reference; give the dimensions as a shape tensor (set_input(0))")
        check_deferred((alpha is None) == (beta is None), "fill alpha (input 1) and beta (input 2) must be given "
                       "together")
        linspace = self.operation == FillOperation.LINSPACE
        if alpha is None:
            check_deferred(not linspace or len(dims) == 1, f"a static LINSPACE beta is one delta, for a 1-D output; "
                           f"a fill of rank {len(dims)} needs alpha and beta tensors")
            return
        check_deferred(alpha.dtype == beta.dtype, f"fill alpha and beta must have one dtype, got {alpha.dtype} and "
                       f"{beta.dtype}")
        check_deferred(alpha.dim() == 0, f"fill alpha must be 0-D, got shape {tuple(alpha.shape)}")
        if linspace:
            check_deferred(tuple(beta.shape) == (len(dims),), f"LINSPACE beta must be 1-D with one delta per output "
                           f"dim ({len(dims)}), got shape {tuple(beta.shape)}")
            check_deferred(alpha.dtype == TORCH_DTYPE[self.to_type], f"LINSPACE alpha and beta must have the output "
                           f"type {self.to_type.name}, got {alpha.dtype}")
        else:
            check_deferred(beta.dim() == 0, f"{self.operation.name} beta must be 0-D, got shape {tuple(beta.shape)}")

    @keeps_values  # a small LINSPACE of a shape tensor (an arange of a dim's size) is a shape tensor too
    def _compute(self, inputs, weights):
        dims, dtype = self._dims(inputs), TORCH_DTYPE[self.to_type]
        device = next(t for t in inputs if t is not None).device
        alpha, beta = given(inputs, 1), given(inputs, 2)
        linspace = self.operation == FillOperation.LINSPACE
        if alpha is None:  # a static LINSPACE beta is the delta of its one dim
            alpha = torch.tensor(self.alpha, device=device)
            beta = torch.tensor([self.beta] if linspace else self.beta, device=device)
        if linspace:
            return _linspace(dims, alpha, beta, dtype)
        if self.operation == FillOperation.RANDOM_UNIFORM:
            return torch.rand(dims, dtype=dtype, device=device) * (beta - alpha).to(dtype) + alpha.to(dtype)
        return torch.randn(dims, dtype=dtype, device=device) * beta.to(dtype) + alpha.to(dtype)


@network_method
def add_fill(self, shape, op, output_type=DataType.FLOAT):
    return self._add(IFillLayer, [], shape=to_dims(shape, "add_fill"), operation=member(FillOperation, op, "add_fill"),
                     alpha=0.0, beta=1.0, to_type=member(DataType, output_type, "add_fill"))
