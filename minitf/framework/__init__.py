"""The framework layer: graphs, operations, tensors, dtypes, shapes, errors.

It describes computations and knows nothing of running them.  A graph leaves
the process as TF's ``GraphDef`` protocol buffer (:mod:`.graph_def`, with
:mod:`.attr_value`, :mod:`.function_def` and :mod:`.protos`).

The registry, the layer below, may not import this one; importing the
framework lends it the two framework values it hands out — DTypes for a
kernel's ``dtypes=`` and ``tf.errors.NotFoundError`` for a missing kernel (see
:mod:`minitf.registry.registry`).
"""

from minitf.framework import dtypes, errors
from minitf.registry import registry


def _not_found_error(op, message):
    return errors.NotFoundError(None, op, message)


registry.use_framework_types(registry.FrameworkTypes(as_dtype=dtypes.as_dtype,
                                                     not_found_error=_not_found_error))
