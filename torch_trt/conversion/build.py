"""Build a serialized engine from a converted network: builder config, optimization profile, build."""

import logging
import time


from ..errors import EngineBuildError
from ..targets import target_name
from ..targets.tensorrt import configure_builder

logger = logging.getLogger(__name__)


def build_engine(ctx, builder, input_specs, device):
    """Serialize the network in `ctx` into engine bytes with one profile from the input specs."""
    trt, network = ctx.trt, ctx.network
    config = builder.create_builder_config()
    config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, ctx.settings.workspace_size)
    config.builder_optimization_level = ctx.settings.optimization_level
    profile = builder.create_optimization_profile()
    for index, spec in enumerate(input_specs):
        profile.set_shape(f"input_{index}", spec.min_shape, spec.opt_shape, spec.max_shape)
    if input_specs:
        config.add_optimization_profile(profile)
    if target_name(trt) == "tensorrt":  # phase logging and profiling detail the reference does not model
        configure_builder(trt, config, debug=ctx.settings.debug)
    if device.type == "cpu":  # only the reference runs on the host: its IO then lives in host memory
        for tensor in [network.get_input(i) for i in range(network.num_inputs)] + \
                      [network.get_output(i) for i in range(network.num_outputs)]:
            tensor.location = trt.TensorLocation.HOST
    start = time.perf_counter()
    errors_before = len(ctx.logger.errors)
    serialized = builder.build_serialized_network(network, config)
    if serialized is None:
        reasons = "; ".join(ctx.logger.errors[errors_before:]) or "no reason logged"
        raise EngineBuildError(f"the {network.num_layers}-layer network failed to build: {reasons}")
    logger.info("built engine: %d layers, %d bytes in %.2fs", network.num_layers, serialized.nbytes,
                time.perf_counter() - start)
    return bytes(serialized)
