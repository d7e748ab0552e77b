"""The core's own ops, registered through the public hooks (entry point ``core_ops``).

minitf's op declarations and gradients reach the registry exactly as a
third-party plugin's would.  Importing this module imports :mod:`minitf.ops`
first (its package), and with it every op family module, whose declarations
fill :data:`~minitf.ops.op_def_library.OP_DEFS` and
:data:`~minitf.ops.op_def_library.GRADIENT_DECLARATIONS`.
"""

from minitf.ops import op_def_library
from minitf.registry import hookimpl


@hookimpl
def minitf_register_ops(registry):
    for op_def in op_def_library.OP_DEFS:
        registry.register_op(op_def)


@hookimpl
def minitf_register_gradients(registry):
    for declaration in op_def_library.GRADIENT_DECLARATIONS:
        registry.register_gradient(**declaration)
