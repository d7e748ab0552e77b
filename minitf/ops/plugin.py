"""The core's own ops, registered through the public hooks (entry point ``core_ops``).

minitf's op declarations and gradients reach the registry exactly as a
third-party plugin's would; importing the op modules fills the catalog in
:mod:`minitf.ops.op_def_library`.
"""

from minitf.ops import op_def_library
from minitf.registry import hookimpl


def _load_op_modules():
    import minitf.ops  # noqa: F401 - imports every op family module


@hookimpl
def minitf_register_ops(registry):
    _load_op_modules()
    for op_def in op_def_library.OP_DEFS:
        registry.register_op(op_def)


@hookimpl
def minitf_register_gradients(registry):
    _load_op_modules()
    for op_type, fn in op_def_library.GRADIENTS.items():
        registry.register_gradient(op_type, fn)
