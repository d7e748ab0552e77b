"""The ops layer: one module per op family, each op declared once.

Importing this package imports every family, which declares its ops (see
:mod:`minitf.ops.op_def_library`) and installs the Tensor operators.

The family modules import one another at the top of the module, never inside
a function, and those imports form a chain without loops (``array_ops`` ←
``gradient_util`` ← ``math_ops`` ← ``reduction_ops`` ← ...).  Gradients are
what would close loops — ``Add``'s gradient sums, and ``Sum``'s gradient does
arithmetic — so a gradient that needs an op of a module built on its own
names it by type (``apply_op("Sum", ...)``, as TF's generated op wrappers
do); :mod:`minitf.ops.gradient_util` explains the one common case.
"""

from minitf.ops import (  # noqa: F401 - imported for their declarations
    array_ops, comparison_ops, constant_op, control_flow_ops, io_ops, linalg_ops, math_ops,
    nn_ops, random_ops, reduction_ops, select_ops, sendrecv_ops, state_ops, unary_ops, variables)
from minitf.ops import conv_ops, pooling_ops, softmax_ops  # noqa: F401,E402 - nn_ops' siblings
from minitf.ops import (  # noqa: F401,E402 - the array ops beside array_ops
    gather_ops, joining_ops, padding_ops, slicing_ops, transpose_ops)
from minitf.ops import data_flow_ops, dataset_ops, parsing_ops  # noqa: F401,E402 - input
from minitf.ops import reader_ops, sparse_ops  # noqa: F401,E402 - file readers, SparseToDense
from minitf.ops import accumulator_ops  # noqa: F401,E402 - gradient accumulators
from minitf.ops import control_flow_primitives  # noqa: F401,E402 - Switch, Merge, Enter, ...
from minitf.ops import control_flow_grad, stack_ops, tensor_array_ops  # noqa: F401,E402
from minitf.ops import training_ops  # noqa: F401,E402 - the optimizers' Apply* ops
from minitf.ops import scatter_ops  # noqa: F401,E402 - tf.scatter_add/sub/update
from minitf.ops import summary_ops  # noqa: F401,E402 - tf.summary's ops
from minitf.ops import check_ops, logging_ops  # noqa: F401,E402 - tf.Print, tf.Assert, tf.assert_*
from minitf.ops import numerics_ops  # noqa: F401,E402 - tf.check_numerics
from minitf.ops import top_k_ops  # noqa: F401,E402 - tf.nn.top_k, tf.nn.in_top_k
from minitf.ops import scan_ops  # noqa: F401,E402 - tf.cumsum, tf.cumprod
from minitf.ops import mask_ops  # noqa: F401,E402 - tf.sequence_mask, tf.boolean_mask
from minitf.ops import einsum_ops  # noqa: F401,E402 - tf.einsum
from minitf.ops import file_io_ops, image_ops, image_processing  # noqa: F401,E402 - tf.image
from minitf.ops import color_ops  # noqa: F401,E402 - tf.image's colour ops
from minitf.ops import script_ops, string_ops, unique_ops  # noqa: F401,E402 - py_func, strings
from minitf.ops import candidate_sampling_ops  # noqa: F401,E402 - tf.nn.*_candidate_sampler
from minitf.ops import custom_gradient  # noqa: F401,E402 - IdentityN, tf.custom_gradient
from minitf.ops import xla_ops  # noqa: F401,E402 - _FusedElementwise, made by the fusion pass
from minitf.ops import operators  # noqa: F401,E402 - last: installs the Tensor operators
