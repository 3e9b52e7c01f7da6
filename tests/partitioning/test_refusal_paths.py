"""Every refusal a converter can make, run once: explain() and compile() give one answer for each.

A refusal path is a `raise` in torch_trt/converters/, torch_trt/conversion/ or the dtype table they use
(torch_trt/targets/dtypes.py) that a valid PyTorch program can reach, or a converter's `supports` predicate.
ROWS holds one tiny program per path. For each row, explain() reports the node in PyTorch with the path's Reason
code (and the raise's message); compile() with require_full_compilation=False builds the segments explain()
reported, as many engines as it counted, and matches eager; with require_full_compilation=True it raises a
TorchTRTError naming the op. The completeness tests scan the sources with `ast` (whatever modules exist when they
run) and the converter registry, and fail on a raise or a supports predicate that has neither a row nor a
reasoned entry in UNREACHABLE.
"""

import ast
import functools
import pathlib
from typing import Callable, NamedTuple

import pytest
import torch
import torch.nn.functional as F

import torch_trt
from harness import scripted
from torch_trt.conversion.registry import CONVERTERS, EVALUATORS
from torch_trt.errors import Code, EngineBuildError, TorchTRTError

SOURCES = ("converters/*.py", "conversion/**/*.py", "targets/dtypes.py")  # the scanned files, under torch_trt/
SUPPORTS = "supports"  # a row's site when the converter's supports predicate refuses the node
SETTINGS = {"target": "reference", "min_block_size": 1, "device": "cpu"}  # the rows' inputs are CPU tensors
_generator = torch.Generator().manual_seed(0)


def _randn(*shape, dtype=torch.float32):
    return torch.randn(*shape, generator=_generator).to(dtype)


def _ints(*shape, dtype=torch.int32):
    return torch.randint(0, 5, shape, generator=_generator, dtype=dtype)


def _dynamic(min_shape, opt_shape, max_shape, dtype=torch.float32):
    return torch_trt.Input(min_shape=min_shape, opt_shape=opt_shape, max_shape=max_shape, dtype=dtype)


@torch.jit.script
def _size_tensor_on_other_device(x: torch.Tensor):  # scripted: a trace would make torch.tensor's result a constant
    return torch.tensor(x.size(0) * 2, device="cpu:1")


class Row(NamedTuple):
    """One refusal path: the refused node's schema name (with its overload), `site` (a literal part of the
    raise's message, or SUPPORTS), the segments explain() reports (E engine, T PyTorch), the program, the inputs
    it runs on and, for a refusal only dynamic shapes reach, the Input specs it compiles for."""

    id: str
    op: str
    site: str
    kinds: str
    program: Callable
    inputs: list
    specs: list = None


ROWS = [
    # supports predicates
    Row("elu_scaled", "aten::elu", SUPPORTS, "ETE",
        lambda x: torch.ops.aten.elu(x * 2, 1.0, 2.0, 1.0) + 1, [_randn(3, 4)]),
    Row("attention_dropout", "aten::scaled_dot_product_attention", SUPPORTS, "ETE",  # zero values: any dropout mask
        lambda q: F.scaled_dot_product_attention(q * 2, q, torch.zeros_like(q), dropout_p=0.5) + 1, [_randn(1, 3, 4)]),
    Row("to_other_device", "aten::to.device", SUPPORTS, "ETE",
        lambda x: (x * 2).to("cpu:1", torch.float32) + 1, [_randn(3)]),
    Row("einsum_ellipsis", "aten::einsum", SUPPORTS, "ETE",
        lambda x, y: torch.einsum("...ij,...jk->...ik", x * 2, y) + 1, [_randn(2, 3, 4), _randn(2, 4, 5)]),
    Row("batch_norm_training", "aten::batch_norm", SUPPORTS, "ETE",
        lambda x: F.batch_norm(x * 2, None, None, training=True) + 1, [_randn(2, 3, 4)]),
    Row("contiguous_channels_last", "aten::contiguous", SUPPORTS, "ETE",
        lambda x: (x * 2).contiguous(memory_format=torch.channels_last) + 1, [_randn(1, 2, 3, 3)]),
    Row("max_pool_dilated", "aten::max_pool2d", SUPPORTS, "ETE",
        lambda x: F.max_pool2d(x * 2, 2, dilation=2) + 1, [_randn(1, 2, 6, 6)]),
    Row("avg_pool_divisor_override", "aten::avg_pool2d", SUPPORTS, "ETE",
        lambda x: F.avg_pool2d(x * 2, 2, divisor_override=3) + 1, [_randn(1, 2, 6, 6)]),
    Row("adaptive_max_pool_indices", "aten::adaptive_max_pool2d", SUPPORTS, "ETE",
        lambda x: F.adaptive_max_pool2d(x * 2, 2, return_indices=True)[1] + 1, [_randn(1, 2, 6, 6)]),
    Row("topk_unsorted", "aten::topk", SUPPORTS, "ETE",
        lambda x: torch.topk(x * 2, 2, sorted=False)[0].sum() + 1, [_randn(5)]),
    Row("sort_stable", "aten::sort.stable", SUPPORTS, "ETE",
        lambda x: torch.sort(x * 2, stable=True)[0] + 1, [_randn(5)]),
    # refusals at conversion: activation, attention, conv
    Row("prelu_0d_weight", "aten::prelu", "prelu weight must be 1-D", "ETE",
        lambda x, w: F.prelu(x * 2, w) + 1, [_randn(2, 3, 4), torch.tensor(0.25)]),
    Row("glu_dynamic", "aten::glu", "the halves are static slices", "ETE",
        lambda x: F.glu(x * 2, -1) + 1, [_randn(4, 4)], [_dynamic((1, 4), (3, 4), (5, 4))]),
    Row("attention_dynamic_head_size", "aten::scaled_dot_product_attention", "must be static, it is dynamic", "ETE",
        lambda q: F.scaled_dot_product_attention(q * 2, q, q) + 1, [_randn(1, 3, 6)],
        [_dynamic((1, 3, 2), (1, 3, 4), (1, 3, 8))]),
    Row("convolution_runtime_weight", "aten::_convolution", "TensorRT needs these weights at build time", "ETE",
        lambda x, w: torch.relu(F.conv2d(x * 2, w * 3)), [_randn(1, 2, 5, 5), _randn(4, 2, 3, 3)]),
    # creation and casts
    Row("zeros_like_int8", "aten::zeros_like", "tensor cannot be made inside a TensorRT network", "ET",
        lambda x: (x * 2, torch.zeros_like(x, dtype=torch.int8)), [_randn(3)]),
    Row("arange_int8", "aten::arange", "arange cannot be made inside a TensorRT network", "ET",
        lambda x: (x * 2, torch.arange(x.size(0), dtype=torch.int8)), [_randn(3)]),
    Row("arange_int8_runtime_size", "aten::arange", "arange cannot be made inside a TensorRT network", "ET",
        lambda x: (x * 2, torch.arange(x.size(0), dtype=torch.int8)), [_randn(4)], [_dynamic((1,), (3,), (5,))]),
    Row("arange_runtime_size_float_start", "aten::arange.start", "an arange of a runtime size with float bounds",
        "TE", lambda x: x * 2 + torch.arange(0.5, x.size(0)), [_randn(4)], [_dynamic((1,), (3,), (5,))]),
    Row("tensor_on_other_device", "aten::tensor.int", SUPPORTS, "TE",
        lambda x: x * 2 + _size_tensor_on_other_device(x), [_randn(3)]),
    Row("adaptive_pool_runtime_output_size", "aten::adaptive_avg_pool1d", "where ints known at compile time are needed",
        "ET", lambda x: F.adaptive_avg_pool1d((x * 2).unsqueeze(0), x.size(0)), [_randn(3, 2)],
        [_dynamic((1, 2), (3, 2), (5, 2))]),
    Row("to_int8", "aten::to.dtype", "cannot run inside a TensorRT network (it takes", "ET",
        lambda x: (x * 2).to(torch.int8), [_randn(3) * 5]),
    # element-wise, einsum
    Row("bitwise_and_of_ints", "aten::__and__.Tensor", "TensorRT's logical ops take BOOL only", "ETE",
        lambda x, y: (x * 2 & y) * 2, [_ints(3), _ints(3)]),
    Row("integer_power_of_a_tensor", "aten::pow.Tensor_Tensor", "TensorRT's POW computes in floats", "ETE",
        lambda x, y: (x * 2) ** y * 2, [_ints(3), _ints(3)]),
    Row("remainder_of_floats", "aten::remainder.Tensor", "TensorRT has no exact floating-point remainder", "ETE",
        lambda x, y: torch.remainder(x * 2, y) * 2, [_randn(3), _randn(3).abs() + 1]),
    Row("einsum_of_ints", "aten::einsum", "TensorRT's einsum takes float operands", "ETE",
        lambda x, y: torch.einsum("ij,jk->ik", x * 2, y) + 1, [_ints(2, 3), _ints(3, 4)]),
    Row("max_pool_of_ints", "aten::max_pool2d", " was refused: ", "ETE",  # TensorRT's pooling takes floats only
        lambda x: F.max_pool2d(x * 2, 2) + 1, [_ints(1, 1, 4, 4)]),
    # indexing and data movement
    Row("index_with_constant_mask", "aten::index.Tensor", "a mask gives a data-dependent shape", "ETE",
        lambda x: (x * 2)[torch.tensor([True, False, True])] * 2, [_randn(3)]),
    Row("pixel_shuffle_dynamic_channels", "aten::pixel_shuffle", "channels, height and width must be static", "ETE",
        lambda x: F.pixel_shuffle(x * 2, 2) + 1, [_randn(1, 8, 3, 3)], [_dynamic((1, 4, 3, 3), (1, 4, 3, 3),
                                                                                 (1, 12, 3, 3))]),
    Row("scatter_dynamic_index", "aten::scatter.value", " of dynamic shape ", "ETE",
        lambda x, i: torch.scatter(x * 2, 0, i, 1.0) + 1, [_randn(4, 3), torch.tensor([[0, 1, 2], [3, 2, 1]])],
        [_dynamic((4, 3), (4, 3), (4, 3)), _dynamic((1, 3), (1, 3), (2, 3), torch.int64)]),
    Row("flip_dynamic_dim", "aten::flip", "indexing dim", "ETE",
        lambda x: torch.flip(x * 2, [0]) + 1, [_randn(4)], [_dynamic((1,), (3,), (5,))]),
    # shapes
    Row("unflatten_two_dynamic_dims", "aten::unflatten.int", "needs more than one dynamic dim inferred", "ETE",
        lambda x: (x * 2).unflatten(0, (2, -1)) * 2, [_randn(6, 4)], [_dynamic((2, 2), (4, 4), (8, 8))]),
    Row("squeeze_dynamic_dim", "aten::squeeze.dim", "squeeze of dim(s)", "ETE",  # 2..3 rows: never squeezed, but
        lambda x: (x * 2).squeeze(0) * 2, [_randn(3, 3)], [_dynamic((2, 3), (2, 3), (3, 3))]),  # TensorRT cannot know
    Row("softmax_0d", "aten::softmax.int", "softmax of a 0-d tensor", "ETE",
        lambda x: torch.softmax((x * 2).sum(), 0) * 3, [_randn(3, 4)]),
    # padding, pooling, resize
    Row("max_pool_ceil_mode_dynamic_dim", "aten::max_pool2d", "ceil_mode pooling over a dynamic spatial dim", "ETE",
        lambda x: F.max_pool2d(x * 2, 2, 2, 1, ceil_mode=True) + 1, [_randn(1, 2, 5, 7)],
        [_dynamic((1, 2, 4, 4), (1, 2, 6, 6), (1, 2, 8, 8))]),
    Row("max_pool_ceil_mode_drops_and_adds", "aten::max_pool2d", "both drops and adds windows", "ETE",
        lambda x: F.max_pool2d(x * 2, (1, 3), 2, ceil_mode=True) + 1, [_randn(1, 2, 6, 6)]),
    Row("upsample_fractional_scale", "aten::upsample_nearest2d", "only scale factors giving whole output sizes",
        "ETE", lambda x: torch.ops.aten.upsample_nearest2d(x * 2, [7, 7], 1.5, 1.5) + 1, [_randn(1, 2, 5, 5)]),
    Row("upsample_dynamic_dim_fractional_scale", "aten::upsample_nearest2d.vec", "needs a whole-number one", "ETE",
        lambda x: torch.ops.aten.upsample_nearest2d(x * 2, None, [1.5, 1.5]) + 1, [_randn(1, 2, 6, 6)],
        [_dynamic((1, 2, 4, 4), (1, 2, 4, 4), (1, 2, 6, 6))]),
    Row("upsample_inexact_scale_dynamic_batch", "aten::upsample_nearest2d.vec", "float32 cannot hold exactly", "ETE",
        lambda x: torch.ops.aten.upsample_nearest2d(x * 2, None, [1 / 3, 1 / 3]) + 1, [_randn(3, 2, 3, 3)],
        [_dynamic((1, 2, 3, 3), (1, 2, 3, 3), (4, 2, 3, 3))]),
    Row("upsample_runtime_size_and_scales", "aten::upsample_nearest2d", "beside scale factors", "ETE",
        lambda x, y: torch.ops.aten.upsample_nearest2d(x * 2, [y.size(2), y.size(3)], 2.0, 2.0) + 1,
        [_randn(1, 2, 3, 3), _randn(1, 2, 6, 6)], [_dynamic((1, 2, 2, 2), (1, 2, 3, 3), (1, 2, 4, 4)),
                                                   _dynamic((1, 2, 4, 4), (1, 2, 6, 6), (1, 2, 8, 8))]),
    # reductions
    Row("topk_of_0d", "aten::topk", "is out of range for a tensor of rank", "ETE",
        lambda x: torch.topk((x * 2).sum(), 1)[0] + 1, [_randn(3)]),
    Row("topk_of_dim_0_of_5d", "aten::topk", "TensorRT's TopK reduces one of the last 4 dims", "ETE",
        lambda x: torch.topk(x * 2, 1, dim=0)[0] + 1, [_randn(2, 1, 1, 1, 2)]),
    Row("topk_k_0", "aten::topk", "TensorRT's TopK takes k from 1 to", "ET",  # the last op: its output is empty
        lambda x: torch.topk(x * 2, 0)[0], [_randn(3)]),
    Row("topk_runtime_k", "aten::topk", "must be known at compile time", "ETE",
        lambda x: torch.topk(x * 2, x.size(0))[0] + 1, [_randn(4)], [_dynamic((1,), (3,), (5,))]),
    Row("sort_dynamic_dim", "aten::sort", "sort along a dynamic dim", "ETE",
        lambda x: torch.sort(x * 2)[0] + 1, [_randn(4)], [_dynamic((1,), (3,), (5,))]),
    Row("norm_p_0", "aten::linalg_vector_norm", "only p > 0 and inf norms are converted", "ETE",
        lambda x: torch.linalg.vector_norm(x * 2, 0.0) + 1, [_randn(3)]),
    # products
    Row("integer_matmul", "aten::matmul", "matrix product runs in PyTorch", "ETE",
        lambda x: torch.matmul(x * 2, x) + 1, [torch.randint(-5, 5, (3, 3), dtype=torch.int32)]),
    # activations
    Row("celu_negative_alpha", "aten::celu", "only a positive alpha is converted", "ETE",
        lambda x: torch.celu(x * 2, -1.5) + 1, [_randn(3)]),
    # evaluators
    Row("add_int_float_of_runtime_size", "aten::add.int_float", "of a runtime size computes no int inside an engine",
        "ET", lambda x: x * 2 + (x.size(0) + 0.5), [_randn(4)], [_dynamic((1,), (3,), (5,))]),
]

# Raises no valid program reaches, each with the reason; keyed like the sites the scan reports ("function: message").
EAGER = "PyTorch refuses these arguments itself, so no valid program reaches it"
UNREACHABLE = {
    "-D window op needs a rank-": EAGER,
    "which has odd size": EAGER,
    "attention needs query, key and value of one float dtype": EAGER,
    "attention takes either attn_mask or is_causal=True": EAGER,
    "needs a tensor of rank >= 2": EAGER,
    "split size must be positive": "PyTorch allows 0 only on a zero-size dim, and partitioning keeps empty tensors "
                                   "out of engines (Code.SHAPE)",
    "must be non-negative and add up to dim": EAGER,
    "chunk needs a positive number of chunks": EAGER,
    "gather index of rank": EAGER,
    "do not broadcast": EAGER,
    "cannot expand a tensor of rank": EAGER,
    "only size-1 dims grow": EAGER,
    "repeat needs at least one count per dim": EAGER,
    "roll without dims takes one shift": EAGER,
    "roll needs one shift per dim": EAGER,
    "pixel (un)shuffle needs an input of rank >= 3": EAGER,
    "pixel_shuffle needs channels": EAGER + " (dynamic channels are refused before, as static ones)",
    "pixel_unshuffle needs height": EAGER + " (dynamic sizes are refused before, as static ones)",
    "the condition must be a bool tensor": EAGER,
    "masked_fill takes a 0-D value tensor": EAGER,
    "scatter index of rank": EAGER,
    "matmul operands must have at least one dim": EAGER,
    "must hold (before, after) pairs": EAGER,
    "_pad: padding mode": EAGER + " (aten::pad takes only the four modes the converter maps)",
    "norms need a float input": EAGER,
    "a torch.tensor of runtime sizes and non-ints": "TorchScript lists hold one type, and the only runtime values are "
                                                    "ints (float arithmetic on sizes stays in PyTorch)",
    "this TensorRT has no ICumulativeLayer": "only TensorRT releases before ICumulativeLayer refuse cumsum; the "
                                             "reference target has the layer",
    "slice step must be positive": EAGER,
    "narrow of": EAGER,
    "adaptive pooling to an empty output": "an empty output keeps the node out of engines (Code.SHAPE)",
    "require: ": "conditions eager holds too (an expand's sizes, bmm's batches, arange's bounds): a static one that "
                 "fails is a program eager rejects at its static shapes",
    "select index": EAGER,
    "flatten start_dim": EAGER,
    "t expects a tensor of at most 2 dims": EAGER,
    "itensor: argument": "converters take itensor() only of Tensor arguments (optional ones are checked for None)",
    "_static: argument '{}' must be {}, got": "arguments have their schema's type (a runtime int where a number is "
                                              "needed is the row topk_runtime_k)",
    "no argument named": "a converter bug (a name its schema lacks), which the converter tests find",
    "network failed to build": "the reference builder refuses INT8 IO, which engines never have (int8 tensors cross "
                               "as INT32: tests/partitioning/test_boundary_casts.py), and what converters check "
                               "before adding a layer; tests/partitioning/test_boundary_casts.py stubs a refused "
                               "build (real TensorRT's can fail for want of memory or a tactic)",
    "TensorRT engines run on CUDA devices only": "a settings error (target='tensorrt' on a CPU), raised before any "
                                                 "node is converted",
    "converter produced {} outputs": "a converter bug, which the converter tests find",
    "has no TensorRT equivalent": "partitioning keeps tensors of dtypes TensorRT lacks in PyTorch (Code.DTYPE)",
    "has no torch equivalent": "every DataType in a network is one a torch dtype was converted to",
    "ScalarType code": "every dtype= argument is the dtype of an output, and partitioning keeps tensors of dtypes "
                       "TensorRT lacks in PyTorch (Code.DTYPE)",
    "size_dim: dim {} is out of range": EAGER,
    "cannot unpack": "TorchScript checks the number of values unpacked itself",
    "was neither converted nor evaluated": "partitioning gives conversion only segments whose inputs are engine "
                                           "inputs or outputs of earlier nodes of the segment",
    "no converter or evaluator is registered": "partitioning keeps nodes without one in PyTorch (Code.NO_CONVERTER)",
    "convert_node: {}: {}": "the wrapper that turns every raise above into the ConversionError naming the node",
    "convert_graph: {}: {}": "the same wrapper for a network error first read when the outputs are marked, which "
                             "convert_node reads first (tests/conversion/test_network_refusals.py)",
    "without a tensor or value": "a converter bug, which the converter tests find",
    "only tensors can leave an engine": "partitioning lets only tensors leave an engine (Code.NON_TENSOR)",
    "cannot parse schema": "raised at import by a registration, not by a program",
    "duplicate {} for {}": "raised at import by a registration, not by a program",
    "a runtime int must be a 0-D integer tensor": "runtime ints are sizes (0-D INT64) and int arithmetic on them; "
                                                  "partitioning keeps reads of tensor data in PyTorch",
    "int_list: argument '{}' must be a list of ints": "SymInt[] arguments hold only ints and runtime ints",
}


class Site(NamedTuple):
    """One `raise` of the sources: where it is, the function raising, the error class, its message ({} for each
    formatted value)."""

    where: str
    function: str
    error: str
    message: str

    @property
    def key(self):
        return f"{self.function}: {self.message}"


@functools.lru_cache(maxsize=None)
def raise_sites():
    """Every raise with an exception in torch_trt/converters/*.py, torch_trt/conversion/**/*.py and the dtype table
    (torch_trt/targets/dtypes.py), as they are now."""
    package = pathlib.Path(torch_trt.__file__).parent
    files = [path for pattern in SOURCES for path in sorted(package.glob(pattern))]
    return tuple(site for path in files for site in _sites(ast.parse(path.read_text()), path.relative_to(package)))


def _sites(node, path, function="<module>"):
    """The raise sites under `node` of the file at `path`, each named after the innermost function around it."""
    for child in ast.iter_child_nodes(node):
        inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else function
        if isinstance(child, ast.Raise) and isinstance(child.exc, ast.Call):
            yield Site(f"{path}:{child.lineno}", inner, ast.unparse(child.exc.func), _message(child.exc))
        yield from _sites(child, path, inner)


def _message(call):
    """The first string argument of an exception's construction, with {} for each formatted value."""
    for argument in call.args:
        if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
            return argument.value
        if isinstance(argument, ast.JoinedStr):
            return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in argument.values)
    return ""


def _sites_named(fragment):
    """The raise sites whose key (`function: message`) holds `fragment`."""
    return [site for site in raise_sites() if fragment in site.key]


def _code(row):
    """The Reason code of the row's refusal: the supports check's, the builder's, or the converter's."""
    if row.site == SUPPORTS:
        return Code.UNSUPPORTED_ARGUMENTS
    built = any(site.error == EngineBuildError.__name__ for site in _sites_named(row.site))
    return Code.BUILD_REFUSED if built else Code.CONVERTER_REFUSED


def _names_op(text, op):
    """Whether a node description or an error names the node of schema `op` (`aten::to.dtype`, `aten::elu`)."""
    return f"[{op}(" in text


def _specs(row):
    return row.specs or row.inputs


@pytest.mark.parametrize("row", ROWS, ids=[row.id for row in ROWS])
def test_explain_and_compile_agree(row):
    """explain() reports the refused node in PyTorch and why; compile() builds those segments and matches eager."""
    module = scripted(row.program, len(row.inputs))
    report = torch_trt.explain(module, _specs(row), **SETTINGS)
    reasons = [reason for node, reason in report.fallbacks if _names_op(node, row.op)]
    assert any(reason.code == _code(row) and (row.site == SUPPORTS or row.site in reason.detail)
               for reason in reasons), str(report)
    assert "".join("E" if kind == "engine" else "T" for kind in report.kinds) == row.kinds, str(report)
    compiled = torch_trt.compile(module, _specs(row), **SETTINGS)
    assert str(compiled.graph).count("torch_trt::execute_engine(") == report.engine_count, str(compiled.graph)
    with torch.no_grad():
        expected, actual = module(*row.inputs), compiled(*row.inputs)
    torch.testing.assert_close(actual, expected, rtol=1e-4, atol=1e-4, equal_nan=True)


@pytest.mark.parametrize("row", ROWS, ids=[row.id for row in ROWS])
def test_full_compilation_raises_naming_the_op(row):
    with pytest.raises(TorchTRTError) as raised:
        torch_trt.compile(scripted(row.program, len(row.inputs)), _specs(row), require_full_compilation=True,
                          **SETTINGS)
    assert row.site == SUPPORTS or row.site in str(raised.value), str(raised.value)
    assert _names_op(str(raised.value), row.op), str(raised.value)


def test_every_raise_has_a_row_or_a_reason():
    """A new raise needs a row (or, if no valid program reaches it, an UNREACHABLE entry saying why)."""
    claims = [row.site for row in ROWS if row.site != SUPPORTS] + list(UNREACHABLE)
    unclaimed = [f"{site.where} {site.key}" for site in raise_sites() if not any(c in site.key for c in claims)]
    assert not unclaimed, "raises without a row in ROWS or an entry in UNREACHABLE:\n" + "\n".join(unclaimed)


@pytest.mark.parametrize("claim", sorted({row.site for row in ROWS if row.site != SUPPORTS} | set(UNREACHABLE)))
def test_each_claim_names_one_refusal(claim):
    """Each row's site and UNREACHABLE key is found in the sources, and names one message (it is not stale)."""
    sites = _sites_named(claim)
    assert sites, f"{claim!r} names no raise in the sources: update ROWS or UNREACHABLE"
    assert len({site.message for site in sites}) == 1, [f"{site.where} {site.key}" for site in sites]


def test_every_supports_predicate_has_a_row():
    """Each distinct supports predicate of the registries is reached by a row."""
    reached = {_registration(row.op).supports for row in ROWS if row.site == SUPPORTS}
    registrations = list(CONVERTERS.items()) + list(EVALUATORS.items())
    missing = sorted({f"{r.supports.__module__}.{r.supports.__qualname__} ({'.'.join(filter(None, key))})"
                      for key, r in registrations if r.supports is not None and r.supports not in reached})
    assert not missing, "supports predicates without a row in ROWS:\n" + "\n".join(missing)


def _registration(op):
    name, _, overload = op.partition(".")
    return CONVERTERS[(name, overload)]
