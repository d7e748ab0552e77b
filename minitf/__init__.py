"""minitf: TensorFlow 1.x's design in readable Python.

``import minitf as tf`` gives the ``tf.compat.v1`` API: build a graph, then run
parts of it in a ``tf.Session``.  Importing minitf loads no plugin; kernels and
devices are discovered the first time a graph needs them.
"""

from minitf import nn
from minitf.autodiff.gradients import AggregationMethod, UnconnectedGradients, gradients
from minitf.autodiff.hessians import hessians
from minitf.autodiff.registration import NotDifferentiable, RegisterGradient, no_gradient
from minitf.framework import errors
from minitf.framework.device_spec import DeviceSpec
from minitf.framework.dtypes import (
    DType, as_dtype, bool, double, float16, float32, float64, half, int8, int16, int32, int64,
    string, uint8, uint16)
from minitf.framework.graph import Graph, GraphKeys, get_default_graph, reset_default_graph
from minitf.framework.graph_def import import_graph_def
from minitf.framework.default_session import get_default_session
from minitf.framework.operation import Operation
from minitf.framework.tensor import Tensor
from minitf.framework.tensor_conversion import (
    convert_to_tensor, register_tensor_conversion_function)
from minitf.framework.tensor_shape import Dimension, TensorShape
from minitf.framework.tensor_util import make_ndarray, make_tensor_proto
from minitf.framework.versions import VERSION, __version__
from minitf.ops.array_ops import (
    expand_dims, fill, identity, ones, ones_like, placeholder, placeholder_with_default, rank,
    reshape, shape, shape_n, size, squeeze, stop_gradient, zeros, zeros_like)
from minitf.ops.gather_ops import (
    gather, gather_nd, one_hot, scatter_nd, unsorted_segment_sum)
from minitf.ops.custom_gradient import custom_gradient, identity_n
from minitf.ops.joining_ops import concat, split, stack, unstack
from minitf.ops.padding_ops import pad, tile
from minitf.ops.slicing_ops import newaxis, slice, strided_slice
from minitf.ops.transpose_ops import (invert_permutation, matrix_transpose, reverse,
                                      reverse_sequence, transpose)
from minitf.ops.constant_op import constant
from minitf.ops.control_flow_ops import group, no_op, tuple
from minitf.ops.cond import case, cond
from minitf.ops.while_loop import while_loop
from minitf.ops.functional_ops import foldl, foldr, map_fn, scan
from minitf.ops.tensor_array_ops import TensorArray
from minitf.ops.init_ops import (
    constant_initializer, glorot_normal_initializer, glorot_uniform_initializer,
    ones_initializer, random_normal_initializer, random_uniform_initializer,
    truncated_normal_initializer, variance_scaling_initializer, zeros_initializer)
from minitf.ops.comparison_ops import (
    equal, greater, greater_equal, is_finite, is_inf, is_nan, less, less_equal, logical_and,
    logical_not, logical_or, logical_xor, not_equal)
from minitf.ops.linalg_ops import (
    diag, diag_part, eye, matmul, matrix_determinant, matrix_inverse, norm, tensordot, trace)
from minitf.ops.mask_ops import boolean_mask, sequence_mask
from minitf.ops.einsum_ops import einsum
from minitf.ops.top_k_ops import argsort, sort
from minitf.ops.clip_ops import (
    clip_by_average_norm, clip_by_global_norm, clip_by_norm, global_norm)
from minitf.ops.math_ops import (
    add, add_n, clip_by_value, div, divide, floor_div, floordiv, floormod, lin_space, linspace,
    maximum, minimum, mod, multiply, pow, range, realdiv, scalar_mul, squared_difference,
    subtract, truediv)
from minitf.ops.scan_ops import cumprod, cumsum
from minitf.ops.reduction_ops import (
    arg_max, arg_min, argmax, argmin, count_nonzero, reduce_all, reduce_any, reduce_logsumexp, reduce_max,
    reduce_mean, reduce_min, reduce_prod, reduce_sum)
from minitf.ops.select_ops import where, where_v2
from minitf.ops.unary_ops import (
    abs, cast, ceil, cos, exp, expm1, floor, log, log1p, negative, reciprocal, round, rsqrt,
    sigmoid, sign, sin, sqrt, square, tan, tanh, to_double, to_float, to_int32, to_int64)
from minitf.ops.data_flow_ops import (
    FIFOQueue, PaddingFIFOQueue, QueueBase, RandomShuffleQueue)
from minitf.ops.accumulator_ops import (
    ConditionalAccumulator, ConditionalAccumulatorBase, SparseConditionalAccumulator)
from minitf.framework.indexed_slices import (
    IndexedSlices, IndexedSlicesValue, convert_to_tensor_or_indexed_slices)
from minitf.framework.sparse_tensor import (
    SparseTensor, SparseTensorValue, convert_to_tensor_or_sparse_tensor)
from minitf.ops.sparse_ops import (
    sparse_placeholder, sparse_reduce_sum, sparse_tensor_dense_matmul, sparse_tensor_to_dense,
    sparse_to_dense)
from minitf.ops.parsing_ops import (
    FixedLenFeature, FixedLenSequenceFeature, VarLenFeature, decode_csv, decode_raw,
    parse_example, parse_single_example)
from minitf.ops.reader_ops import (
    FixedLengthRecordReader, ReaderBase, TextLineReader, TFRecordReader, WholeFileReader)
from minitf.ops.random_ops import (
    multinomial, random_normal, random_shuffle, random_uniform, truncated_normal)
from minitf.ops.state_ops import assign, assign_add, assign_sub, count_up_to
from minitf.ops.scatter_ops import scatter_add, scatter_sub, scatter_update
from minitf.ops.variable_scope import (
    AUTO_REUSE, VariableScope, create_partitioned_variables, get_variable, get_variable_scope,
    variable_scope)
from minitf.ops.partitioned_variables import (
    PartitionedVariable, fixed_size_partitioner, min_max_variable_partitioner,
    variable_axis_size_partitioner)
from minitf.ops.variables import (
    Variable, global_variables, global_variables_initializer, initialize_all_variables,
    is_variable_initialized, local_variables, local_variables_initializer, model_variables,
    trainable_variables, variables_initializer)
from minitf import initializers
from minitf import layers
from minitf import test
from minitf import data
from minitf import train
from minitf import distribute
from minitf.train.session_manager import report_uninitialized_variables
from minitf import summary
from minitf.ops.logging_ops import Assert, Print
from minitf.ops.numerics_ops import (  # noqa: E402 - NaN/Inf checks
    add_check_numerics_ops, check_numerics, verify_tensor_all_finite)
from minitf.ops.check_ops import (
    assert_equal, assert_greater, assert_greater_equal, assert_less, assert_less_equal,
    assert_negative, assert_non_negative, assert_non_positive, assert_none_equal, assert_positive,
    assert_rank)
from minitf.platform import app, flags, gfile
from minitf import io
from minitf import image
from minitf import strings
from minitf.ops.file_io_ops import read_file, write_file
from minitf.ops.image_processing import random_crop
from minitf.ops.script_ops import numpy_function, py_func
from minitf.ops.string_ops import (
    as_string, reduce_join, regex_replace, string_join, string_split, string_to_number, substr)
from minitf.ops.unique_ops import unique, unique_with_counts
from minitf import python_io
from minitf import sparse
from minitf import graph_util
from minitf.platform import tf_logging as logging
from minitf import datasets
from minitf import metrics
from minitf import losses
from minitf import linalg
from minitf import math
from minitf import random
from minitf import feature_column
from minitf import estimator
from minitf import compat  # tf.compat.v1 is this package itself
from minitf.compat import (
    disable_eager_execution, disable_v2_behavior, enable_eager_execution, executing_eagerly)
from minitf.runtime.config import ConfigProto, GPUOptions, GraphOptions, RunMetadata, RunOptions
from minitf.runtime.config import OptimizerOptions  # noqa: E402 - tf.OptimizerOptions
from minitf import xla  # noqa: E402 - tf.xla.experimental.jit_scope
from minitf.runtime.session import InteractiveSession, Session
from minitf.api_scopes import (
    add_to_collection, add_to_collections, colocate_with, container, control_dependencies,
    device, get_collection, get_collection_ref, get_seed, name_scope, set_random_seed)
from minitf.framework.tensor_shape import dimension_value

# TF1's deprecated spellings of names above, which tf.compat.v1 still exports.
all_variables = global_variables
initialize_local_variables = local_variables_initializer
initialize_variables = variables_initializer
NoGradient = NotDifferentiable
OpError = errors.OpError
reverse_v2 = reverse


def _grpc_session_target(target, graph, config):
    """``Session("grpc://host:port")``: a master of a cluster (needs minitf[distributed])."""
    from minitf.distributed.session import GrpcTarget
    return GrpcTarget(target, graph, config)


from minitf.runtime import targets as _session_targets  # noqa: E402
_session_targets.register("grpc", _grpc_session_target)


# TF's protocol buffers (tf.GraphDef, tf.Summary ...): loaded on first use, as
# the protobuf library takes tens of milliseconds to load (minitf.framework.protos).
_PROTOS = {"GraphDef": "graph_pb2", "NodeDef": "node_def_pb2", "AttrValue": "attr_value_pb2",
           "NameAttrList": "attr_value_pb2", "MetaGraphDef": "meta_graph_pb2",
           "Event": "event_pb2", "Summary": "summary_pb2", "SummaryMetadata": "summary_pb2",
           "HistogramProto": "summary_pb2"}


def __getattr__(name):
    """``tf.GraphDef``, ``tf.NodeDef``, ``tf.Summary`` ...: TF's messages, on first use;
    ``tf.contrib``, on first use too, as it is built on ``tf.layers`` and ``tf.nn.rnn_cell``."""
    if name == "contrib":
        import minitf.contrib
        return minitf.contrib
    if name in _PROTOS:
        from minitf.framework import protos
        return getattr(protos.load(_PROTOS[name]), name)
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
