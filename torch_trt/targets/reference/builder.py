"""Builder, IBuilderConfig, IOptimizationProfile: validate a network and serialize it to a plan.

The builder refuses what TensorRT's builder refuses (no outputs, a dynamic input without a
profile, a profile outside an input's declared shape) by logging an error and returning None.
"""

from . import plan
from .enums import BuilderFlag, DataType, ErrorCodeTRT, MemoryPoolType, Severity, member
from .logger import report_error
from .network import INetworkDefinition, NetworkError
from .types import to_dims


class IOptimizationProfile:
    """min/opt/max shapes per dynamic input."""

    def __init__(self):
        self._shapes = {}
        self.extra_memory_target = 1.0

    def set_shape(self, input, min, opt, max):
        shapes = [to_dims(s, "IOptimizationProfile.set_shape") for s in (min, opt, max)]
        if len({len(s) for s in shapes}) != 1:
            raise ValueError(f"set_shape('{input}'): min, opt and max must have the same rank")
        if any(not 0 <= lo <= mid <= hi for lo, mid, hi in zip(*shapes)):
            raise ValueError(f"set_shape('{input}'): need 0 <= min <= opt <= max in every dim, got {shapes}")
        self._shapes[input] = shapes

    def get_shape(self, input):
        return self._shapes.get(input, [])

    def __bool__(self):
        return bool(self._shapes)


class IBuilderConfig:
    """Build options; networks are strongly typed, so there are no precision flags."""

    _writable = ("profiling_verbosity", "builder_optimization_level", "progress_monitor")

    def __setattr__(self, key, value):
        # Bound objects have no __dict__: TensorRT 11 refuses e.g. int8_calibrator (weak typing, 10.x only).
        if not key.startswith("_") and key not in self._writable:
            raise AttributeError(f"'IBuilderConfig' object has no writable attribute '{key}'")
        object.__setattr__(self, key, value)

    def __init__(self):
        self._profiles, self._flags, self._pools = [], {BuilderFlag.TF32}, {}  # TensorRT enables TF32 by default
        self.profiling_verbosity = None
        self.builder_optimization_level = 3  # 0-5 as in TensorRT; what each level does: program.py
        self.progress_monitor = None

    @property
    def num_optimization_profiles(self):
        return len(self._profiles)

    def add_optimization_profile(self, profile):
        if not profile:
            return -1
        self._profiles.append(profile)
        return len(self._profiles) - 1

    def set_flag(self, flag):
        self._flags.add(member(BuilderFlag, flag, "set_flag"))

    def clear_flag(self, flag):
        self._flags.discard(member(BuilderFlag, flag, "clear_flag"))

    def get_flag(self, flag):
        return member(BuilderFlag, flag, "get_flag") in self._flags

    def set_memory_pool_limit(self, pool, pool_size):
        self._pools[member(MemoryPoolType, pool, "set_memory_pool_limit")] = int(pool_size)

    def get_memory_pool_limit(self, pool):
        return self._pools.get(pool, 0)


class Builder:
    """Creates networks, configs and profiles, and builds serialized engines."""

    def __init__(self, logger):
        self._logger = logger
        self.max_threads = 1
        self.error_recorder = None

    logger = property(lambda self: self._logger)

    def create_network(self, flags=0):
        return INetworkDefinition(self, flags)

    def create_builder_config(self):
        return IBuilderConfig()

    def create_optimization_profile(self):
        return IOptimizationProfile()

    def build_serialized_network(self, network, config):
        try:
            profiles = _validate(network, config)
            data = plan.serialize(network, profiles, config.builder_optimization_level,
                                  config.get_flag(BuilderFlag.TF32))
        except NetworkError as error:
            report_error(self.error_recorder, self._logger, ErrorCodeTRT.INVALID_ARGUMENT,
                         f"build_serialized_network: {error}")
            return None
        self._logger.log(Severity.INFO, f"Built reference engine: {network.num_layers} layers, {len(data)} bytes")
        return data


def _validate(network, config):
    """Check the network as TensorRT's builder does; return each input's [min, opt, max] per profile."""
    if not network._outputs:
        raise NetworkError("the network has no outputs; mark at least one with mark_output")
    names = [t.name for t in network._inputs + network._outputs]
    if len(set(names)) != len(names):
        raise NetworkError(f"IO tensor names must be unique, got {names}")
    network._reinfer_stale()
    for tensor in network._inputs + network._outputs:  # int8 is a quantized type: valid only between Q/DQ layers
        if tensor.dtype == DataType.INT8:
            raise NetworkError(f"IO tensor '{tensor.name}' is INT8, a quantized type TensorRT accepts as IO only with "
                               "Q/DQ layers; cast it to INT32 or FLOAT at the engine boundary")
    for layer in network._layers:
        probes = [None if t is None else network._meta(t) for t in layer._inputs]
        layer._check_built([None if pair is None else pair[0] for pair in probes])
        if all(pair is None or pair[0] is pair[1] for pair in probes):  # no dynamic dim reaches the layer
            layer._check_at_run([None if pair is None else pair[0] for pair in probes])
    dynamic = [t for t in network._inputs if -1 in t.shape]
    if dynamic and not config._profiles:
        raise NetworkError(f"input '{dynamic[0].name}' has dynamic dims {tuple(dynamic[0].shape)} "
                           "but no optimization profile was added")
    profiles = []
    for profile in config._profiles or [IOptimizationProfile()]:
        shapes = {}
        for tensor in network._inputs:
            declared = tuple(tensor.shape)
            bounds = profile.get_shape(tensor.name) or [declared] * 3
            for bound in bounds:
                if len(bound) != len(declared) or any(d != -1 and d != b for d, b in zip(declared, bound)):
                    raise NetworkError(f"profile shape {tuple(bound)} of input '{tensor.name}' does not match "
                                       f"its declared shape {declared}")
            if -1 in bounds[0]:
                raise NetworkError(f"input '{tensor.name}' has dynamic dims but no profile shape")
            shapes[tensor.name] = [list(b) for b in bounds]
        if dynamic:
            for bound in range(3):  # min, opt, max
                network._check_static_dims_at({name: tuple(bounds[bound]) for name, bounds in shapes.items()})
        profiles.append(shapes)
    return profiles
