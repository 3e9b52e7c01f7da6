"""The reference engine's executable form: a deserialized plan compiled into one program.

TensorRT's builder folds constants, drops dead layers and picks fused kernels ("tactics"); the
reference does the same when an engine is loaded:

- constant folding: every layer whose inputs are all constants is computed once, on the
  engine's device, and its outputs become constants of the program;
- dead layers (whose outputs reach no engine output) are dropped;
- attention (matrix multiply, scale, mask, softmax, matrix multiply) becomes one fused kernel (attention.py);
- a product with constant weights plus a constant bias becomes one GEMM adding the bias (bias.py; not float32 on CUDA);
- a chain of shuffles becomes one split, permute and merge: a view wherever the chain is one (shuffles.py);
- a shuffle of such a GEMM's output rows is done on its input rows, where those are shuffled anyway
  (row_shuffles.py);
- the remaining layers become one generated `torch.fx` graph: straight-line Python that calls
  each layer's kernel, with no interpreter loop, and that drops every intermediate right after
  its last reader, so weights live on the device once and intermediates die at last use;
- code generation: at `builder_optimization_level` >= 2 (CUDA) or >= 4 (CPU, where generating
  C++ takes tens of seconds an engine) that graph is traced to ATen ops and compiled by PyTorch's
  inductor, once per input shape; level 4 times candidate pointwise kernels and padded matrix products,
  level 5 autotunes all its kernels. Inductor freezes the weights into constants where that pays (`_freezes`);
  a program it does not freeze is compiled by regions, a block that repeats (a transformer's layer) once (regions.py),
  unless it is convolutional (`_convolutional`).
  Below that, the generated Python runs as it is, except that a step making a view of its one input makes it
  with one as_strided call at every input layout seen before (view_replay.py). Inductor's FX graph cache keeps
  the generated code on disk, keyed by the traced graph and the weights' shapes (not their values), so a later
  load of an engine of the same structure, in this process or another, skips code generation. (On the CPU, inductor
  repacks frozen linear and convolution weights into oneDNN's layout, which its cache does not store.)
"""

import logging
import threading
import time

import torch
import torch.fx

from . import regions
from .attention import fuse_attention
from .bias import fuse_bias
from .enums import LayerType
from .layers.shape import ValuesNotTraced
from .lending import is_lent
from .row_shuffles import shuffle_rows_first
from .shuffles import collapse_shuffles
from .view_replay import replay_views

logger = logging.getLogger(__name__)

CODEGEN_LEVEL = {"cuda": 2, "cpu": 4}  # the lowest builder_optimization_level that generates code, per device type
BENCHMARKING_LEVEL = 4  # and up: inductor times candidates while it builds (pointwise configs, padded GEMM shapes)
AUTOTUNE_LEVEL = 5  # and up: it also benchmarks generated GEMM and convolution kernels against cuBLAS's and cuDNN's
_CONVOLUTIONS = (LayerType.CONVOLUTION, LayerType.DECONVOLUTION)
_GENERATING = threading.Lock()  # make_fx's tracing and inductor keep global state: one engine's code at a time


def start_code_generation(device, optimization_level):
    """Start inductor's compile workers when engines built for `device` at this level will generate code, so that
    they start while the engines are still being built, as inductor's own torch.compile backend starts them on
    entry: a kernel compiled before they are ready is compiled in this process, one at a time."""
    if optimization_level >= CODEGEN_LEVEL[device.type]:
        from torch._inductor.async_compile import maybe_warm_pool

        maybe_warm_pool()


def build_program(layers, records, weights, input_names, output_names, device):
    """A GraphModule `program(*inputs) -> [outputs]` running the plan's live layers, constants folded."""
    folded, steps = {}, []
    for layer, record, layer_weights in zip(layers, records, weights):
        if all(name is None or name in folded for name in record["inputs"]):
            values = [None if n is None else folded[n] for n in record["inputs"]]
            folded.update(zip(record["outputs"], _as_tuple(layer._compute(values, layer_weights))))
        else:
            steps.append((layer, record, layer_weights))
    steps = fuse_bias(fuse_attention(steps, folded, output_names), folded, output_names, device)
    steps = shuffle_rows_first(collapse_shuffles(steps, output_names), output_names)
    root, graph = torch.nn.Module(), torch.fx.Graph()
    values = {name: graph.placeholder(name) for name in input_names}

    def value(name):
        if name is None:
            return None
        if name not in values:  # a folded constant, read by a live layer or returned
            attribute = f"constant{len(root._parameters)}"
            root.register_parameter(attribute, torch.nn.Parameter(folded[name], requires_grad=False))
            values[name] = graph.get_attr(attribute)
        return values[name]

    for index, (layer, record, layer_weights) in _live(steps, output_names):
        weight_nodes = {}
        for key, tensor in layer_weights.items():
            root.register_parameter(f"layer{index}_{key}", torch.nn.Parameter(tensor, requires_grad=False))
            weight_nodes[key] = graph.get_attr(f"layer{index}_{key}")
        result = graph.call_function(layer._compute, ([value(n) for n in record["inputs"]], weight_nodes))
        for position, name in enumerate(record["outputs"]):
            values[name] = graph.call_function(_output, (result, position))
    graph.output([value(name) for name in output_names])
    return torch.fx.GraphModule(root, graph, class_name="ReferenceProgram").to(device)


def compile_program(program, optimization_level, device, tf32):
    """The callable that runs `program`: generated by inductor at high enough levels (module docstring), with
    float32 matrix products and convolutions in TF32 only when the engine was built with BuilderFlag.TF32."""
    if optimization_level < CODEGEN_LEVEL[device.type]:
        return _with_tf32(replay_views(program), tf32)
    # Below BENCHMARKING_LEVEL, inductor takes its heuristics: a pointwise kernel its first config, a matrix product
    # with a dim off the tensor cores' alignment its shape. Timing the candidates cost 1-3 s of an H100 engine's build
    # and a 50 MiB transient (a buffer flushing the L2 cache between timings), and bought no measurable latency on
    # ResNet-50, BERT-base or ViT-B/16 at batch 1 or 32 (README, Performance).
    benchmarks = optimization_level >= BENCHMARKING_LEVEL
    patches = {"freezing": _freezes(program, device), "max_autotune": optimization_level >= AUTOTUNE_LEVEL,
               "triton.autotune_pointwise": benchmarks, "shape_padding": benchmarks}
    if patches["freezing"] and device.type == "cuda":
        _channels_last_kernels(program)
    whole = patches["freezing"] or _convolutional(program)
    logger.info("reference engine: inductor generates its kernels (builder_optimization_level=%d, %s, %s)",
                optimization_level, ", ".join(f"{name}={value}" for name, value in patches.items()),
                "whole" if whole else "by regions")
    kernels = {}  # input shapes -> inductor's compiled function

    def run(*inputs):
        key = tuple(tuple(t.shape) for t in inputs)
        with torch.no_grad():
            if key not in kernels:
                with _GENERATING:
                    kernels[key] = _generate(program, inputs, patches, whole)
            return kernels[key](*inputs)

    return _with_tf32(run, tf32)


def _freezes(program, device):
    """Whether inductor compiles `program` with its weights frozen into constants, folded and laid out once for its
    kernels (as TensorRT's builder bakes weights into an engine) instead of taken as inputs on every call.

    On the CPU, freezing is what repacks linear and convolution weights into oneDNN's layout. On CUDA, it pays for
    convolutional networks (ResNet-50 ran 10% faster at batch 1 frozen, 2% at batch 32), not for transformers, which
    ran as fast unfrozen (BERT-base and ViT-B/16, whose one convolution embeds its patches, both batch sizes, within
    3%) while its passes, which propagate fake tensors and fold constants over the whole graph several times, cost
    them 1-5 s of compile time. So on CUDA the weights are frozen when convolution kernels are most of their bytes,
    unless those kernels are lent (lending.py): the model holds them already, and frozen, the engine would hold a
    folded, channels-last copy of each beside them."""
    if device.type == "cpu":
        return True
    return _convolutional(program) and not any(is_lent(kernel) for kernel in _convolution_kernels(program))


def _convolutional(program):
    """Whether convolution kernels are most of the program's weight bytes (a network inductor runs channels-last,
    compiled whole: by regions, each region's results would cross back in the traced layout)."""
    kernel_bytes = sum(kernel.nbytes for kernel in _convolution_kernels(program))
    return 2 * kernel_bytes > sum(weight.nbytes for weight in program.parameters())


def _convolution_kernels(program):
    """The distinct weights the program's convolution layers read."""
    names = {input_node.target for node in program.graph.nodes if _layer_type(node) in _CONVOLUTIONS
             for input_node in node.all_input_nodes if input_node.op == "get_attr"}
    return [program.get_parameter(name) for name in names]


def _channels_last_kernels(program):
    """Lay the program's 2-D convolution kernels out channels-last, where inductor will run its convolutions so.

    Frozen, inductor runs a convolutional network channels-last (it decides by the convolutions' kinds: plain 2-D ones
    gain, grouped ones lose), and gives each kernel that is not laid out so a channels-last copy: a second copy of the
    network's weights beside the program's own (49 MiB for ResNet-50 in half), for the engine's life. Laid out here,
    the kernels are the constants inductor's code reads. Only where every convolution is a plain 2-D one, which
    inductor's heuristic lays out channels-last."""
    convolutions = [node for node in program.graph.nodes if _layer_type(node) in _CONVOLUTIONS]
    layers = [node.target.__self__ for node in convolutions]
    if any(layer.type != LayerType.CONVOLUTION or len(layer.kernel_size_nd) != 2 or layer.num_groups != 1
           for layer in layers):
        return
    laid_out = {}  # (address, size) -> a kernel's channels-last copy, shared by the layers that share the kernel
    for node, layer in zip(convolutions, layers):
        if layer._runs_as_patch_product(4, layer.num_groups):
            continue  # reads its kernel as a matrix
        name = node.args[1]["kernel"].target
        kernel = program.get_parameter(name).detach()
        key = (kernel.data_ptr(), kernel.numel())
        if key not in laid_out:
            shaped = kernel.reshape(layer.num_output_maps, -1, *layer.kernel_size_nd)
            laid_out[key] = torch.nn.Parameter(shaped.contiguous(memory_format=torch.channels_last),
                                               requires_grad=False)
        program.register_parameter(name, laid_out[key])


def _layer_type(node):
    """The LayerType of the layer whose kernel a program node calls, else None."""
    return getattr(getattr(node.target, "__self__", None), "type", None)


def _generate(program, inputs, patches, whole):
    """Inductor's code for `program` at these input shapes.

    Compiled `whole`, inductor traces the program itself (with fake tensors), frozen or with its weights as inputs.
    Otherwise it is traced here, weights as inputs, and compiled region by region, a repeated block once
    (regions.py). Either way, no dynamo, so no guards that engines of the same structure
    could share. A program with a layer that reads a shape tensor's values (a reshape to a computed shape) is
    traced on the real inputs instead, which reads those values and bakes them in, since fake tensors hold none.
    Static shapes let inductor pick the best kernels; each new shape compiles once (engines are replayed per
    shape in CUDA graphs anyway). Fused kernels keep their intermediates in float32, as TensorRT's fused kernels
    do: rounding each to its layer's dtype (emulate_precision_casts) cost a quarter of inductor's time on
    BERT-base and made half engines less accurate against float32.
    """
    start = time.perf_counter()
    if whole:
        from torch.fx.experimental.proxy_tensor import make_fx

        compiled = _on_real_values_if_read(
            lambda: _inductor(program, inputs, patches),
            lambda: _inductor(_views_as_reshapes(make_fx(program)(*inputs)), inputs, patches))
    else:
        compiled = _by_regions(program, inputs, patches)
    logger.info("reference engine: inductor generated the kernels for input shapes %s in %.1fs",
                [tuple(t.shape) for t in inputs], time.perf_counter() - start)
    return compiled


def _by_regions(program, inputs, patches):
    """`program` traced with its weights as inputs, compiled by regions (regions.py)."""
    from torch.fx.experimental.proxy_tensor import make_fx

    parameters = dict(program.named_parameters(remove_duplicate=False))
    weights = list(parameters.values())

    def with_weights(*arguments):
        return torch.func.functional_call(program, dict(zip(parameters, arguments)), arguments[len(weights):])

    traced = _on_real_values_if_read(
        lambda: make_fx(with_weights, tracing_mode="fake", _allow_non_fake_inputs=True)(*weights, *inputs),
        lambda: make_fx(with_weights)(*weights, *inputs))
    calls = regions.split(_views_as_reshapes(traced))
    distinct = len({id(region) for region, _, _ in calls})
    if distinct < len(calls):
        logger.info("reference engine: a block repeats %d times; inductor generates its code once (%d regions)",
                    len(calls) - distinct + 1, distinct)
    return regions.CompiledRegions(traced, weights, calls,
                                   lambda region, examples: _inductor(region, examples, patches))


def _on_real_values_if_read(trace_with_fake_tensors, trace_on_real_inputs):
    """The first function's result, or the second's where a layer reads a shape tensor's values, which fake
    tensors do not hold."""
    try:
        return trace_with_fake_tensors()
    except ValuesNotTraced:
        logger.debug("reference engine: a layer reads a shape tensor's values; the program is traced on the real "
                     "inputs first")
        return trace_on_real_inputs()


def _inductor(graph, inputs, patches):
    """compile_fx of `graph` at the static shapes of `inputs`, in a tracing context of its own: the FX graph cache
    reads its shape environment from there and, without one (no dynamo around us), bypasses the cache.

    The cache keys frozen weights by shape and dtype, not values, and loads them from the program on a hit; but
    inductor writes a one-element weight into the code as a literal, so every weight stays a tensor
    (always_keep_tensor_constants), or a later engine would run with an earlier one's value. Fused steps hold
    constants of their own (not weights of the program), which the trace meets as real tensors and records as
    constants, keyed by value."""
    # Imported here: inductor, dynamo and sympy take seconds to import, which programs run without code generation
    # (the CPU's default) never need.
    from torch._guards import TracingContext, tracing
    from torch._inductor.compile_fx import compile_fx
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    mode = FakeTensorMode(shape_env=ShapeEnv(), allow_non_fake_inputs=True)
    with tracing(TracingContext(mode)):
        with mode:  # static fakes of the inputs, which may be fake tensors of another mode
            examples = [torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device=t.device) for t in inputs]
        return compile_fx(graph, examples, config_patches={**patches, "always_keep_tensor_constants": True})


def _views_as_reshapes(graph):
    """make_fx records `view` where the traced tensors' strides allowed one (matmul's decomposition views an expanded
    operand); inductor propagates its own strides, which may not allow it: reshape is a view wherever one is valid."""
    for node in graph.graph.nodes:
        if node.target is torch.ops.aten.view.default:
            node.target = torch.ops.aten.reshape.default
    graph.recompile()
    return graph


def _with_tf32(function, tf32):
    """`function` run with PyTorch's TF32 switches (cuBLAS and cuDNN) set to `tf32`, restored after."""
    backends = (torch.backends.cuda.matmul, torch.backends.cudnn)

    def run(*inputs):
        saved = [backend.allow_tf32 for backend in backends]
        for backend in backends:
            backend.allow_tf32 = tf32
        try:
            return function(*inputs)
        finally:
            for backend, allowed in zip(backends, saved):
                backend.allow_tf32 = allowed

    return run


def _as_tuple(result):
    return tuple(result) if isinstance(result, (tuple, list)) else (result,)


def _output(result, position):
    """Output `position` of a layer kernel's result (a tensor, or a tuple of them)."""
    return result[position] if isinstance(result, (tuple, list)) else result


def _live(steps, output_names):
    """(index, step) of the steps some engine output depends on, in order."""
    needed, live = set(output_names), []
    for index in reversed(range(len(steps))):
        _, record, _ = steps[index]
        if needed & set(record["outputs"]):
            needed |= {name for name in record["inputs"] if name is not None}
            live.append((index, steps[index]))
    return live[::-1]
