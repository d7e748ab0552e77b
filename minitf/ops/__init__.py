"""The ops layer: one module per op family, each op declared once.

Importing this package imports every family, which declares its ops (see
:mod:`minitf.ops.op_def_library`) and installs the Tensor operators.
"""

from minitf.ops import (  # noqa: F401 - imported for their declarations
    array_ops, constant_op, control_flow_ops, math_ops, nn_ops, random_ops, sendrecv_ops,
    state_ops, variables)
