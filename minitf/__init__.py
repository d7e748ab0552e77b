"""minitf: TensorFlow 1.x's design in readable Python.

``import minitf as tf`` gives the ``tf.compat.v1`` API: build a graph, then run
parts of it in a ``tf.Session``.  Importing minitf loads no plugin; kernels and
devices are discovered the first time a graph needs them.
"""

from minitf import nn
from minitf.autodiff.gradients import gradients
from minitf.autodiff.hessians import hessians
from minitf.autodiff.registration import NotDifferentiable, RegisterGradient, no_gradient
from minitf.framework import errors
from minitf.framework.device_spec import DeviceSpec
from minitf.framework.dtypes import (
    DType, as_dtype, bool, double, float16, float32, float64, half, int8, int16, int32, int64,
    string, uint8, uint16)
from minitf.framework.graph import Graph, GraphKeys, get_default_graph, reset_default_graph
from minitf.framework.default_session import get_default_session
from minitf.framework.operation import Operation
from minitf.framework.tensor import Tensor
from minitf.framework.tensor_conversion import (
    convert_to_tensor, register_tensor_conversion_function)
from minitf.framework.tensor_shape import Dimension, TensorShape
from minitf.ops.array_ops import (
    concat, expand_dims, fill, gather, identity, matrix_transpose, newaxis, one_hot, ones,
    ones_like, pad, placeholder, placeholder_with_default, rank, reshape, reverse, shape, shape_n,
    size, slice, split, squeeze, stack, stop_gradient, strided_slice, tile, transpose, unstack,
    zeros, zeros_like)
from minitf.ops.constant_op import constant
from minitf.ops.control_flow_ops import group, no_op, tuple
from minitf.ops.init_ops import (
    constant_initializer, glorot_normal_initializer, glorot_uniform_initializer,
    ones_initializer, random_normal_initializer, random_uniform_initializer,
    truncated_normal_initializer, variance_scaling_initializer, zeros_initializer)
from minitf.ops.math_ops import (
    abs, add, add_n, argmax, argmin, cast, ceil, clip_by_value, cos, div, divide, equal, exp,
    expm1, floor, floor_div, floordiv, floormod, greater, greater_equal, is_finite, is_inf,
    is_nan, less, less_equal, log, log1p, logical_and, logical_not, logical_or, logical_xor,
    matmul, matrix_determinant, matrix_inverse, maximum, minimum, mod, multiply, negative,
    not_equal, pow, range, realdiv, reciprocal, reduce_all, reduce_any, reduce_logsumexp,
    reduce_max, reduce_mean, reduce_min, reduce_prod, reduce_sum, round, rsqrt, sigmoid, sign,
    sin, sqrt, square, squared_difference, subtract, tan, tanh, to_double, to_float, to_int32,
    to_int64, truediv, where, where_v2)
from minitf.ops.random_ops import (
    multinomial, random_normal, random_shuffle, random_uniform, truncated_normal)
from minitf.ops.state_ops import assign, assign_add, assign_sub
from minitf.ops.variable_scope import (
    AUTO_REUSE, VariableScope, get_variable, get_variable_scope, variable_scope)
from minitf.ops.variables import (
    Variable, global_variables, global_variables_initializer, initialize_all_variables,
    is_variable_initialized, local_variables, local_variables_initializer, model_variables,
    trainable_variables, variables_initializer)
from minitf import initializers
from minitf import test
from minitf.runtime.config import ConfigProto, GPUOptions, RunMetadata, RunOptions
from minitf.runtime.session import InteractiveSession, Session
from minitf.api_scopes import (
    colocate_with, container, control_dependencies, device, get_seed, name_scope,
    set_random_seed)

__version__ = "0.1.0"
