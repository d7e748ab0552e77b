"""``_Send`` and ``_Recv``: the ops the partitioner puts on cross-device edges.

Users never create these.  When a step's ops are spread over several devices,
the partitioner (:mod:`minitf.runtime.planning.partition`) cuts every edge whose ends
are on different devices and splices in a ``_Send`` on the producer's device
and a ``_Recv`` on the consumer's, both naming the same *rendezvous key*
``src_device;src_incarnation;dst_device;tensor_name;frame:iter`` (TF paper
§3.2.2; ``send_device_incarnation`` is the source device's incarnation, see
:mod:`minitf.runtime.rendezvous`).  Control edges across devices become a
Send/Recv of an empty value.
"""

from minitf.framework import dtypes
from minitf.framework.tensor_shape import as_shape
from minitf.ops.op_def_library import define_op, not_differentiable

SEND_ATTRS = {"tensor_name": "", "send_device": "", "send_device_incarnation": 1,
              "recv_device": ""}

send = define_op(
    "_Send", inputs=("tensor",), outputs=(), attrs=dict(SEND_ATTRS), shape_fn=lambda op: [],
    stateful=True, doc="Hands a tensor to the rendezvous under its key.")
recv = define_op(
    "_Recv", outputs=("tensor",), attrs=dict(SEND_ATTRS, tensor_type=None, shape=None),
    shape_fn=lambda op: [as_shape(op.get_attr("shape"))],
    dtype_fn=lambda op: [dtypes.as_dtype(op.get_attr("tensor_type"))],
    stateful=True, doc="Waits for a tensor from the rendezvous under its key.")
not_differentiable("_Send", "_Recv")
