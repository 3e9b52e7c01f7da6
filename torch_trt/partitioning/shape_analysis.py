"""Shape analysis: run the lowered graph on example inputs to learn each tensor's shapes and dtype.

`analyze(graph, input_specs, device, examples=None)` copies the graph, makes the shape and dtype
of every tensor value of its top block an output (not the tensor, so each intermediate is freed
at its last use as in a normal run), and runs the copy (through `torch._C._create_function_from_graph`).
For a CUDA device, it runs first on meta tensors, its tensor constants moved to meta too, at the specs' opt shapes
(the user's examples' shapes when given) and at the min and max shapes when a spec is dynamic (and, where two or
more dims vary, at two corners between, with those dims at min and max by turns, so that a size computed from two of
them, as x[:, y.size(1):] is, takes its widest and narrowest): nothing is computed or allocated, where a run on the
GPU held twice eager's activations (a batch-32 BERT-base). On the CPU, whose runs cost little, that would only add
importing PyTorch's meta kernels (which import dynamo). A convolution recorded as aten::_convolution runs as
aten::convolution there, whose meta kernel CUDA builds of PyTorch have. Where an op needs data (nonzero, item, a
branch on a value), has no meta kernel or asks where a tensor is (`_DEVICE_QUERIES`), and on the CPU, the copy runs
on data, on `device`: on inputs at the opt shape (the user's example tensors when given), at the min and max shapes
when a spec is dynamic (else on one more opt draw), at those corners, and on a last opt draw. Random data can be
invalid for a model (integer division by zero, indices out of range), so each run falls back to all-ones then
all-zeros inputs; only the opt run, and min/max, must succeed (a corner may not suit a model that needs two dynamic
dims equal). A dim that differs between runs whose inputs have the same shapes depends on the data (nonzero,
masked_select): no engine profile can cover it, so such a tensor is marked with a `problem`. Plain non-tensor values
(ints, lists of ints, ...) are recorded too: one that differs between runs depends on a dynamic shape or on tensor
data, so an engine cannot evaluate it when it is built.
"""

import dataclasses
import logging
from dataclasses import dataclass

import torch

from .._input import Input, dynamic_dim_count, shapes_by_turns
from ..errors import ShapeAnalysisError, TorchTRTError
from ..targets.dtypes import scalar_type
from .data_dependence import data_dependence
from .support import is_tensor, reads_layout

logger = logging.getLogger(__name__)

FILLS = ("random", "ones", "zeros")
# Ops reading where a tensor is (MultiheadAttention's fast-path check reads str(x.device)): on meta tensors they
# would answer "meta", and a branch on that answer could take another path than the engine's device does.
_DEVICE_QUERIES = ("prim::device", "prim::is_cuda", "prim::is_cpu", "prim::is_meta", "prim::is_xpu", "prim::is_mps",
                   "prim::is_mkldnn", "prim::is_vulkan", "prim::is_ipu", "prim::is_xla", "prim::is_mtia")


@dataclass(frozen=True)
class TensorInfo:
    """What the example runs showed about one tensor value."""

    min_shape: tuple
    opt_shape: tuple
    max_shape: tuple
    dtype: torch.dtype
    problem: str = ""  # why no engine profile can describe it, or ""
    shape_fixed_by_inputs: bool = True  # False when its rank or dims follow the data, not the input shapes
    contiguous: bool = True  # contiguous from its storage's start in every run, as an engine's copy is (probed only
    # where a node reads strides: support.LAYOUT_READERS)

    def spec(self, dtype=None):
        """The Input an engine taking this tensor is built for (in `dtype` when narrowed)."""
        return Input(min_shape=self.min_shape, opt_shape=self.opt_shape, max_shape=self.max_shape,
                     dtype=dtype or self.dtype)

    def describe(self):
        """`(1..8, 128):float32`: dims that vary shown as min..max."""
        dims = [str(lo) if lo == hi else f"{lo}..{hi}" for lo, hi in zip(self.min_shape, self.max_shape)]
        return f"({', '.join(dims)}{',' if len(dims) == 1 else ''}):{str(self.dtype).replace('torch.', '')}"


@dataclass(frozen=True)
class ValueInfo:
    """What the example runs showed about one plain non-tensor value (int, float, bool, lists of them)."""

    values: tuple  # one per successful run
    follows_data: bool = False  # read out of tensor data, or computed from such a value (data_dependence.py)

    @property
    def constant(self):
        """Whether every run gave the same value and no tensor's data decides it: an engine may then evaluate it at
        build time."""
        return not self.follows_data and all(value == self.values[0] for value in self.values)

    def describe(self):
        if self.follows_data:
            return f"follows tensor data ({', '.join(map(repr, self.values))} in the example runs)"
        return f"= {self.values[0]!r}" if self.constant else f"varies ({', '.join(map(repr, self.values))})"


def analyze(graph, input_specs, device, examples=None):
    """{Value: TensorInfo or ValueInfo} for the graph inputs and the tensor and plain values of top-level nodes."""
    copy, values, kinds = _probe_graph(graph, input_specs, layouts=reads_layout(graph))
    dynamic = any(spec.is_dynamic for spec in input_specs)
    # Unoptimized execution: the profiling executor would spend its first runs, all there are, recording and fusing.
    with torch.no_grad(), torch.jit.optimized_execution(False):
        on_meta = _is_cuda(device) and not any(copy.findAllNodes(kind) for kind in _DEVICE_QUERIES)
        runs = _runs_on_meta(copy, kinds, input_specs, examples, dynamic) if on_meta else None
        if runs is None:
            runs = _runs_on_data(copy, kinds, input_specs, examples, dynamic, device)
    infos = {value: _info(value, index, runs) for index, value in enumerate(values)}
    found = data_dependence(graph, infos.get)
    return {value: _following_data(info, value.unique(), found) for value, info in infos.items()}


def _following_data(info, unique, found):
    """`info`, marked where the value follows tensor data (data_dependence.py): a plain value no engine may fix, a
    tensor whose shape no engine profile describes."""
    if isinstance(info, ValueInfo) and unique in found.values:
        return dataclasses.replace(info, follows_data=True)
    if isinstance(info, TensorInfo) and unique in found.shaped_by_data:
        problem = info.problem or "has a shape that the values of a tensor decide (nonzero, a boolean mask, ...)"
        return dataclasses.replace(info, problem=problem, shape_fixed_by_inputs=False)
    return info


def _runs_on_meta(graph, kinds, input_specs, examples, dynamic):
    """The runs of `graph` on meta tensors (at the opt shapes, and at min, max and the corners between where a spec
    is dynamic), its tensor constants on meta too (module docstring). None where the graph needs data (nonzero, item,
    a branch on a value) or an op has no meta kernel; the runs on data then settle it."""
    def on_meta(which):
        return [_example(spec, shape, "zeros", "meta") for spec, shape in zip(input_specs, _shapes(input_specs, which))]

    runs = [[torch.empty_like(t, device="meta") for t in examples] if examples is not None else on_meta("opt")]
    runs += [on_meta("min"), on_meta("max")] if dynamic else []
    try:
        meta = graph.copy()
        for node in meta.findAllNodes("prim::Constant"):  # 0-dim ones stay: a Python number's keeps its place in
            if node.output().type().kind() == "TensorType" and node.t("value").dim():  # type promotion
                node.t_("value", node.t("value").to("meta"))
        _without_backend_choice(meta)
        function = torch._C._create_function_from_graph("torch_trt_shape_analysis_on_meta", meta)
        runs = [_outputs(function, kinds, inputs) for inputs in runs]
    except Exception as error:  # the graph reads data, or an op or a constant cannot be on meta
        logger.debug("shape analysis on meta tensors stopped (%s); the graph runs on example inputs",
                     str(error).strip().splitlines()[-1])
        return None
    for which in _corners(input_specs):
        try:
            runs.append(_outputs(function, kinds, on_meta(which)))
        except Exception as error:  # sizes the model needs equal differ there
            logger.debug("shape analysis skipped a %s run: %s", which, str(error).strip().splitlines()[-1])
    return runs


def _without_backend_choice(graph):
    """aten::_convolution (what torch.jit.trace records for a convolution) -> aten::convolution, in place: the former
    picks a device's kernel itself and, in PyTorch's CUDA builds, has none for meta tensors."""
    for node in graph.findAllNodes("aten::_convolution"):
        convolution = graph.create("aten::convolution", list(node.inputs())[:9]).insertBefore(node)
        convolution.output().setType(node.output().type())
        node.output().replaceAllUsesWith(convolution.output())
        node.destroy()


def _runs_on_data(graph, kinds, input_specs, examples, dynamic, device):
    """The runs of `graph` on example inputs on `device` (module docstring), each trying the fills in turn."""
    function = torch._C._create_function_from_graph("torch_trt_shape_analysis", graph)
    varied = [("min", None, True), ("max", None, True)] if dynamic else [("opt", None, False)]
    varied += [(which, None, False) for which in _corners(input_specs)]
    runs = []
    with torch.random.fork_rng(devices=_cuda_indices(device)):
        torch.manual_seed(0)  # the same shapes on every compile, and the caller's random state left alone
        for which, given, required in [("opt", examples, True)] + varied + [("opt", None, False)]:
            run = _run(function, kinds, input_specs, which, given, device, required)
            if run is not None:
                runs.append(run)
    return runs


def _corners(input_specs):
    """The runs at corners of the profiles besides min and max, with dynamic dims at min and max by turns (`which`
    names for `_shapes`): a tensor computed from two of them (x[:, y.size(1):]) is widest or narrowest there. Only
    where two or more dims vary; a run there may fail, where the model needs such dims equal."""
    return tuple(_CORNERS) if dynamic_dim_count(input_specs) > 1 else ()


_CORNERS = {"min by turns": "min", "max by turns": "max"}  # a corner's name -> the bound its first dynamic dim takes


def _shapes(input_specs, which):
    """The input shapes of a run: the specs' min, opt or max shapes, or a corner (`_corners`)."""
    if which in _CORNERS:
        return shapes_by_turns(input_specs, _CORNERS[which])
    return [getattr(spec, f"{which}_shape") for spec in input_specs]


def _is_cuda(device):
    return torch.device(device).type == "cuda"


def _cuda_indices(device):
    device = torch.device(device)
    if device.type != "cuda":
        return []
    return [device.index if device.index is not None else torch.cuda.current_device()]


def _run(function, kinds, input_specs, which, given, device, required):
    """(input shapes, [(shape, dtype) or plain value] per value) of one run, trying each fill in turn; None if all
    fail. `kinds` says per value whether it is a tensor, whose shape and dtype are two outputs of the probe."""
    errors = []
    for fill in ("given",) * (given is not None) + FILLS:
        if fill == "given":  # copies: the graph may write to its inputs in place
            inputs = [t.clone() for t in given]
        else:
            shapes = _shapes(input_specs, which)
            inputs = [_example(spec, shape, fill, device) for spec, shape in zip(input_specs, shapes)]
        try:
            return _outputs(function, kinds, inputs)
        except Exception as error:  # the model rejects this data; the next fill may suit it
            errors.append(f"{fill}: {str(error).strip().splitlines()[-1]}")
    if required:
        raise ShapeAnalysisError(f"shape analysis could not run the lowered graph on {which}-shape example inputs "
                                 f"made from the Input specs ({'; '.join(errors)})", which)
    logger.debug("shape analysis skipped a %s run: %s", which, "; ".join(errors))
    return None


def _outputs(function, kinds, inputs):
    """(input shapes, [(shape, dtype, contiguous) or plain value] per value) of one run of the probe function on
    `inputs`."""
    outputs, values = iter(function(*inputs)), []
    for kind in kinds:
        if kind is _TENSOR_WITH_LAYOUT:
            shape, dtype, contiguous, offset = (next(outputs) for _ in range(4))
            values.append((tuple(shape), scalar_type(dtype), contiguous and offset == 0))
        else:
            values.append((tuple(next(outputs)), scalar_type(next(outputs)), True) if kind else next(outputs))
    return [tuple(t.shape) for t in inputs], values


def _example(spec, shape, fill, device):
    if fill == "random":
        return Input(shape=shape, dtype=spec.dtype).example("opt", device)
    make = torch.ones if fill == "ones" else torch.zeros
    return make(shape, dtype=spec.dtype, device=device)


def _non_tensor_input(value):
    """Why a graph input that is not a tensor cannot be compiled: the module itself (freezing keeps the attributes
    forward writes), or another value."""
    if value.type().kind() == "ClassType":
        names = sorted({f"self.{use.user.s('name')}" for use in value.uses() if use.user.kind() == "prim::GetAttr"})
        return (f"the module writes its own attributes in forward ({', '.join(names)}), which freezing keeps as module "
                "state that engines cannot read or write: return the new values from forward instead")
    name = value.debugName().split(".")[0]
    return (f"forward's argument {name} is a {value.type()}, not a tensor, and compiled modules take tensors only: "
            f"compile a module whose forward takes only tensors and passes {name} itself")


def _probe_graph(graph, input_specs, layouts):
    """A copy of `graph` taking only the tensor inputs and returning every top-level plain value and the shape and
    dtype of every top-level tensor (and, with `layouts`, whether it is contiguous from its storage's start); with
    the original values and, per value, whether it is a tensor (_TENSOR_WITH_LAYOUT where its layout is probed)."""
    copy = graph.copy()
    values = list(graph.inputs())
    copied = list(copy.inputs())
    for index in reversed(range(len(copied))):
        if not is_tensor(copied[index]):
            if copied[index].uses():
                raise TorchTRTError(_non_tensor_input(copied[index]))
            copy.eraseInput(index)
            del values[index]
    if len(values) != len(input_specs):
        raise TorchTRTError(f"the module takes {len(values)} tensor inputs, {len(input_specs)} Input specs were given")
    probed = list(copy.inputs())
    for node, twin in zip(graph.nodes(), copy.nodes()):
        if node.kind() not in ("prim::Constant", "prim::Uninitialized"):  # the latter hold no value to record
            values += [v for v in node.outputs() if _is_recorded(v)]
            probed += [v for v in twin.outputs() if _is_recorded(v)]
    for index in reversed(range(len(list(copy.outputs())))):
        copy.eraseOutput(index)
    for value in probed:
        for output in _metadata(copy, value, layouts) if is_tensor(value) else [value]:
            copy.registerOutput(output)
    copy.makeMultiOutputIntoTuple()
    return copy, values, [(_TENSOR_WITH_LAYOUT if layouts else True) if is_tensor(v) else False for v in probed]


_TENSOR_WITH_LAYOUT = "tensor with layout"


def _metadata(graph, tensor, layouts):
    """`aten::size` and `prim::dtype` of `tensor` (and `aten::is_contiguous` and `aten::storage_offset` with
    `layouts`), inserted right after it is produced."""
    queries = [("aten::size", torch._C.ListType.ofInts()), ("prim::dtype", torch._C.IntType.get())]
    if layouts:
        queries += [("aten::is_contiguous", torch._C.BoolType.get()), ("aten::storage_offset", torch._C.IntType.get())]
    after, outputs = tensor.node(), []  # for a graph input, after the prim::Param node that starts the graph
    for kind, type_ in queries:
        node = graph.create(kind, [tensor])
        node.output().setType(type_)
        node.insertAfter(after)
        after = node
        outputs.append(node.output())
    return outputs


def _is_recorded(value):
    return is_tensor(value) or _is_plain(value.type())


def _is_plain(type_):
    """Whether values of this type hold no tensor: numbers, bools, strings, None, devices, lists/tuples of them."""
    kind = type_.kind()
    if kind in ("ListType", "OptionalType"):
        return _is_plain(type_.getElementType())
    if kind == "TupleType":
        return all(map(_is_plain, type_.elements()))
    return kind in ("IntType", "FloatType", "BoolType", "NumberType", "StringType", "NoneType", "DeviceObjType")


def _info(value, index, runs):
    """Merge one value's shapes over the runs into min/opt/max, and say when no profile fits them."""
    if not is_tensor(value):
        return ValueInfo(tuple(outputs[index] for _, outputs in runs))
    shapes = [outputs[index][0] for _, outputs in runs]
    dtype = runs[0][1][index][1]
    if len({len(shape) for shape in shapes}) != 1:
        return TensorInfo(shapes[0], shapes[0], shapes[0], dtype, f"changes rank between example runs ({shapes})",
                          shape_fixed_by_inputs=False)
    low, high = tuple(map(min, zip(*shapes))), tuple(map(max, zip(*shapes)))
    problem, first_seen = "", {}
    for (inputs, _), shape in zip(runs, shapes):
        seen = first_seen.setdefault(tuple(inputs), shape)
        if seen != shape:
            problem = f"has a data-dependent shape ({seen} and {shape} for inputs of one shape)"
    fixed = not problem
    if fixed and 0 in low:
        problem = f"is empty in an example run (shape {low}); an engine profile needs dims >= 1"
    return TensorInfo(low, shapes[0], high, dtype, problem, fixed, all(outputs[index][2] for _, outputs in runs))
