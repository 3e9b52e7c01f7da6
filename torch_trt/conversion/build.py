"""Build a serialized engine from a converted network: builder config, optimization profile, build.

The build runs under the engine's CUDA device. TF32 follows eager PyTorch on both targets (`eager_tf32`), so
fp32 engines are as fast and as accurate as the model in eager. On the tensorrt target the timing cache persists
across builds (per TensorRT version and GPU model).
"""

import logging
import time

import torch

from ..errors import EngineBuildError, TorchTRTError
from ..targets import device_guard, target_name
from ..targets.tensorrt import configure_builder, save_timing_cache, timing_cache_path

logger = logging.getLogger(__name__)


def eager_tf32(graph):
    """Whether eager PyTorch runs most of `graph`'s float32 products in TF32.

    TensorRT has one switch for an engine's convolutions and matrix products (BuilderFlag.TF32, on by default);
    eager PyTorch has two: cuDNN's for convolutions (`torch.backends.cudnn.allow_tf32`, on by default) and cuBLAS's
    for matrix products (`torch.backends.cuda.matmul.allow_tf32`, off by default). The engine takes cuDNN's where
    convolution kernels are most of the graph's constant bytes (a convolutional network, whose arithmetic they
    are), else cuBLAS's: a float32 ResNet-50 compiled with cuBLAS's ran 2.3x slower than eager (H200, batch 32)."""
    constants = {}  # Value id -> its tensor
    for node in graph.nodes():
        if node.kind() == "prim::Constant" and isinstance(value := node.output().toIValue(), torch.Tensor):
            constants[node.output().unique()] = value
    kernels = {node.inputsAt(1).unique() for node in graph.nodes() if node.kind() == "aten::_convolution"}
    kernel_bytes = sum(constants[value].nbytes for value in kernels if value in constants)
    convolutional = 2 * kernel_bytes > sum(tensor.nbytes for tensor in constants.values())
    tf32 = torch.backends.cudnn.allow_tf32 if convolutional else torch.backends.cuda.matmul.allow_tf32
    logger.debug("float32 products %s TF32, as eager's %s (torch.backends.%s.allow_tf32)", "in" if tf32 else "not in",
                 *(("convolutions", "cudnn") if convolutional else ("matrix products", "cuda.matmul")))
    return tf32


def build_engine(ctx, builder, input_specs, device, tf32):
    """Serialize the network in `ctx` with one profile from the input specs, its float32 products in TF32 if `tf32`:
    the engine's bytes, as a memoryview of the builder's IHostMemory."""
    trt, network = ctx.trt, ctx.net.definition
    on_tensorrt = target_name(trt) == "tensorrt"
    if on_tensorrt and device.type != "cuda":
        raise TorchTRTError(f"TensorRT engines run on CUDA devices only, not on {device}; use target='reference' "
                            "for the CPU")
    config = builder.create_builder_config()
    config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, ctx.settings.workspace_size)
    config.builder_optimization_level = ctx.settings.optimization_level
    if not tf32:
        config.clear_flag(trt.BuilderFlag.TF32)
    profile = builder.create_optimization_profile()
    for index, spec in enumerate(input_specs):
        profile.set_shape(f"input_{index}", spec.min_shape, spec.opt_shape, spec.max_shape)
    if input_specs:
        config.add_optimization_profile(profile)
    cache_path = None
    if on_tensorrt:  # phase logging, profiling detail and the timing cache, which the reference does not model
        cache_path = timing_cache_path(trt, torch.cuda.get_device_name(device))
        configure_builder(trt, config, debug=ctx.settings.debug, timing_cache_path=cache_path)
    else:
        _place_io(network, trt, device)
    start = time.perf_counter()
    with device_guard(device):
        serialized = builder.build_serialized_network(network, config)
    if serialized is None:  # TensorRT logs misuse at the setter and then fails the build generically: say both
        errors = ctx.network_errors()
        raise EngineBuildError(f"the {network.num_layers}-layer network failed to build: "
                               f"{'; '.join(errors) or 'no reason logged'}", ctx.nodes_named_in(errors))
    if cache_path:
        _save_timing_cache(config, cache_path)
    engine = memoryview(serialized).cast("B")  # IHostMemory exports its buffer: a transformer's plan is not copied
    logger.info("built engine: %s layers, %d bytes in %.2fs", network.num_layers, engine.nbytes,
                time.perf_counter() - start)
    return engine


def _place_io(network, trt, device):
    """On the reference, IO of a CPU engine lives in host memory (HOST is never set on the tensorrt target)."""
    if device.type != "cpu":
        return
    for tensor in [network.get_input(i) for i in range(network.num_inputs)] + \
                  [network.get_output(i) for i in range(network.num_outputs)]:
        tensor.location = trt.TensorLocation.HOST


def _save_timing_cache(config, path):
    """Persist the timing cache; a cache dir that cannot be written costs later builds time, not this one."""
    try:
        save_timing_cache(config, path)
    except OSError as error:
        logger.warning("could not save TensorRT's timing cache to %s (%s); later builds will time tactics again",
                       path, error)
