"""minitf: TensorFlow 1.x's design in readable Python.

``import minitf as tf`` gives the ``tf.compat.v1`` API: build a graph, then run
parts of it in a ``tf.Session``.  Importing minitf loads no plugin; kernels and
devices are discovered the first time a graph needs them.
"""

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
from minitf.ops.array_ops import identity, placeholder, placeholder_with_default
from minitf.ops.constant_op import constant
from minitf.ops.control_flow_ops import group, no_op, tuple
from minitf.ops.math_ops import add
from minitf.ops.state_ops import assign, assign_add, assign_sub
from minitf.ops.variables import (
    Variable, global_variables, global_variables_initializer, initialize_all_variables,
    is_variable_initialized, local_variables, local_variables_initializer, model_variables,
    trainable_variables, variables_initializer)
from minitf.runtime.config import ConfigProto, GPUOptions, RunMetadata, RunOptions
from minitf.runtime.session import InteractiveSession, Session
from minitf.api_scopes import (
    colocate_with, container, control_dependencies, device, get_seed, name_scope,
    set_random_seed)

__version__ = "0.1.0"
