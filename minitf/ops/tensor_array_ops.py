"""``tf.TensorArray``: a list of tensors that a while loop writes and reads one by one.

A loop cannot grow a tensor cheaply, and cannot index a Python list: a
TensorArray is the dataflow answer (TF paper §4.4).  It is a *handle* (the
array, a ``resource`` value living for one step) plus a *flow*: a float
scalar that each write outputs and each later read takes as input.  The flow
carries no data; it orders the reads after the writes, and it is what a loop
passes from iteration to iteration (the handle is a loop invariant).

Every method returns a **new** TensorArray object with the new flow, so code
reads functionally::

    ta = tf.TensorArray(tf.float32, size=n)
    ta = ta.write(i, value)          # inside a loop body
    result = ta.stack()              # after the loop: shape [n, ...]

Gradients flow through a *gradient TensorArray* (``TensorArrayGradV3``),
created next to the forward one: the gradient of a read is a write into it,
the gradient of a write a read from it, ``stack``/``unstack`` likewise.

Mirrors ``tensorflow/python/ops/tensor_array_ops.py`` (``_GraphTensorArray``,
TF1) and ``tensor_array_grad.py``.
"""

from minitf.framework import dtypes, tensor_util
from minitf.framework.graph import get_default_graph
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.framework.tensor_shape import TensorShape, as_shape, unknown_shape
from minitf.ops import array_ops, control_flow_ops, math_ops
from minitf.ops.op_def_library import apply_op, define_op, gradient, not_differentiable


def _handle_and_flow_shapes(op):
    return [TensorShape([]), TensorShape([])]


def _handle_and_flow_dtypes(op):
    return [dtypes.resource, dtypes.float32]


def _flow_shape(op):
    return [TensorShape([])]


def _flow_dtype(op):
    return [dtypes.float32]


def _attr_dtype(op):
    return [dtypes.as_dtype(op.get_attr("dtype"))]


def _read_shape(op):
    return [as_shape(op.get_attr("element_shape"))]


def _gather_shape(op):
    element = as_shape(op.get_attr("element_shape"))
    indices = op.inputs[1].shape
    if element.ndims is None or indices.ndims is None:
        return [unknown_shape()]
    return [indices.concatenate(element)]


_tensor_array = define_op(
    "TensorArrayV3", inputs=("size",), outputs=("handle", "flow"),
    attrs={"dtype": None, "element_shape": None, "dynamic_size": False,
           "clear_after_read": True, "tensor_array_name": ""},
    shape_fn=_handle_and_flow_shapes, dtype_fn=_handle_and_flow_dtypes, stateful=True,
    doc="A new array of size tensors; outputs its handle and flow.")
_write = define_op(
    "TensorArrayWriteV3", inputs=("handle", "index", "value", "flow_in"),
    outputs=("flow_out",), shape_fn=_flow_shape, dtype_fn=_flow_dtype, stateful=True,
    doc="Writes value at index.")
_read = define_op(
    "TensorArrayReadV3", inputs=("handle", "index", "flow_in"), outputs=("value",),
    attrs={"dtype": None, "element_shape": None}, shape_fn=_read_shape, dtype_fn=_attr_dtype,
    stateful=True, doc="Reads the element at index.")
_gather = define_op(
    "TensorArrayGatherV3", inputs=("handle", "indices", "flow_in"), outputs=("value",),
    attrs={"dtype": None, "element_shape": None}, shape_fn=_gather_shape,
    dtype_fn=_attr_dtype, stateful=True, doc="Stacks the elements at indices.")
_scatter = define_op(
    "TensorArrayScatterV3", inputs=("handle", "indices", "value", "flow_in"),
    outputs=("flow_out",), shape_fn=_flow_shape, dtype_fn=_flow_dtype, stateful=True,
    doc="Writes value[k] at indices[k].")
_concat = define_op(
    "TensorArrayConcatV3", inputs=("handle", "flow_in"), outputs=("value", "lengths"),
    attrs={"dtype": None, "element_shape_except0": None},
    shape_fn=lambda op: [TensorShape([None]).concatenate(
        as_shape(op.get_attr("element_shape_except0"))), TensorShape([None])],
    dtype_fn=lambda op: [dtypes.as_dtype(op.get_attr("dtype")), dtypes.int64],
    stateful=True, doc="Concatenates all elements along axis 0; also outputs their lengths.")
_split = define_op(
    "TensorArraySplitV3", inputs=("handle", "value", "lengths", "flow_in"),
    outputs=("flow_out",), shape_fn=_flow_shape, dtype_fn=_flow_dtype, stateful=True,
    doc="Writes consecutive pieces of value (of the given lengths along axis 0) as elements.")
_size = define_op(
    "TensorArraySizeV3", inputs=("handle", "flow_in"), outputs=("size",),
    shape_fn=_flow_shape, dtype_fn=lambda op: [dtypes.int32], stateful=True,
    doc="The number of elements.")
_grad = define_op(
    "TensorArrayGradV3", inputs=("handle", "flow_in"), outputs=("grad_handle", "flow_out"),
    attrs={"source": ""}, shape_fn=_handle_and_flow_shapes, dtype_fn=_handle_and_flow_dtypes,
    stateful=True, doc="The gradient array of a TensorArray (one per gradient source).")
not_differentiable("TensorArrayV3", "TensorArraySizeV3", "TensorArrayGradV3")


class TensorArray:
    """A list of same-dtype tensors for use in while loops (``tf.TensorArray``).

    Args:
        dtype: the elements' dtype.
        size: the number of elements (int or int32 scalar tensor).
        dynamic_size: let writes beyond ``size`` grow the array.
        clear_after_read: free an element when it is read (default True): a
            second read of it is then an InvalidArgumentError.
        tensor_array_name: a name for the array.
        handle, flow: wrap an existing array (how methods return new objects).
        infer_shape: record the element shape from the first write.
        element_shape: the elements' shape, if known.
        name: the op name scope.

    Example:
        >>> ta = tf.TensorArray(tf.float32, size=3).unstack([1.0, 2.0, 3.0])
        >>> sess.run(ta.read(1))
        2.0
    """

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None,
                 tensor_array_name=None, handle=None, flow=None, infer_shape=True,
                 element_shape=None, colocate_with_first_write_call=True, name=None):
        del colocate_with_first_write_call
        self._dtype = dtypes.as_dtype(dtype).base_dtype
        self._infer_shape = infer_shape
        self._element_shape = [as_shape(element_shape)] if element_shape is not None \
            else [unknown_shape()]
        if handle is not None:
            if flow is None:
                raise ValueError("flow must not be None if handle is not None.")
            self._handle, self._flow = handle, flow
            return
        if size is None:
            raise ValueError("Size must be provided if handle is not provided")
        with get_default_graph().name_scope(name or "TensorArray") as scope:
            size = convert_to_tensor(size, dtype=dtypes.int32, name="size")
        self._handle, self._flow = apply_op(
            _tensor_array, [size], name=scope,
            attrs={"dtype": self._dtype, "element_shape": self._element_shape[0],
                   "dynamic_size": bool(dynamic_size),
                   "clear_after_read": clear_after_read is None or bool(clear_after_read),
                   "tensor_array_name": tensor_array_name or ""})

    @property
    def dtype(self):
        return self._dtype

    @property
    def handle(self):
        return self._handle

    @property
    def flow(self):
        """The flow tensor: what a while loop carries from iteration to iteration."""
        return self._flow

    @property
    def element_shape(self):
        return self._element_shape[0]

    def _with_flow(self, flow):
        array = TensorArray(self._dtype, handle=self._handle, flow=flow,
                            infer_shape=self._infer_shape)
        array._element_shape = self._element_shape  # shared, as in TF
        return array

    def _merge_element_shape(self, shape):
        if self._infer_shape:
            self._element_shape[0] = self._element_shape[0].merge_with(shape)

    def read(self, index, name=None):
        """The element at ``index``."""
        return apply_op(_read, [self._handle, _as_int32(index), self._flow],
                        name=name or "TensorArrayReadV3",
                        attrs={"dtype": self._dtype, "element_shape": self.element_shape})

    def write(self, index, value, name=None):
        """A TensorArray with ``value`` written at ``index``."""
        with get_default_graph().name_scope(name or "TensorArrayWrite"):
            value = convert_to_tensor(value, dtype=self._dtype, name="value")
            self._merge_element_shape(value.shape)
            flow = apply_op(_write, [self._handle, _as_int32(index), value, self._flow],
                            name="TensorArrayWriteV3")
        return self._with_flow(flow)

    def gather(self, indices, name=None):
        """The elements at ``indices``, stacked."""
        return apply_op(_gather, [self._handle, _as_int32(indices), self._flow],
                        name=name or "TensorArrayGatherV3",
                        attrs={"dtype": self._dtype, "element_shape": self.element_shape})

    def stack(self, name=None):
        """All elements stacked along a new axis 0 (shape ``[size, ...]``)."""
        with get_default_graph().name_scope(name or "TensorArrayStack"):
            value = self.gather(math_ops.range(0, self.size()))
        size = self._static_size()
        if size is not None and value.shape.ndims:
            value.set_shape([size] + [None] * (value.shape.ndims - 1))
        return value

    def _static_size(self):
        """The size, when it is a constant of an array that cannot grow (else None)."""
        op = self._handle.op
        if op.type != "TensorArrayV3" or op.get_attr("dynamic_size"):
            return None
        size = tensor_util.constant_value(op.inputs[0])
        return None if size is None else int(size)

    def scatter(self, indices, value, name=None):
        """A TensorArray with ``value[k]`` written at ``indices[k]``."""
        with get_default_graph().name_scope(name or "TensorArrayScatter"):
            value = convert_to_tensor(value, dtype=self._dtype, name="value")
            if value.shape.ndims:
                self._merge_element_shape(TensorShape(value.shape.as_list()[1:]))
            flow = apply_op(_scatter, [self._handle, _as_int32(indices), value, self._flow],
                            name="TensorArrayScatterV3")
        return self._with_flow(flow)

    def unstack(self, value, name=None):
        """A TensorArray holding the slices ``value[0], value[1], ...``."""
        with get_default_graph().name_scope(name or "TensorArrayUnstack"):
            value = convert_to_tensor(value, dtype=self._dtype, name="value")
            indices = math_ops.range(0, array_ops.shape(value)[0])
            return self.scatter(indices, value)

    def concat(self, name=None):
        """All elements concatenated along their axis 0 (``TensorArray.concat``)."""
        shape = self.element_shape
        rest = shape[1:] if shape.ndims else unknown_shape()
        value, _ = apply_op(_concat, [self._handle, self._flow], name=name or "TensorArrayConcatV3",
                            attrs={"dtype": self._dtype, "element_shape_except0": rest})
        return value

    def split(self, value, lengths, name=None):
        """A TensorArray whose elements are consecutive pieces of ``value`` along
        axis 0, ``lengths[k]`` rows each (``TensorArray.split``)."""
        value = convert_to_tensor(value, dtype=self._dtype, name="value")
        if value.shape.ndims:
            self._merge_element_shape(TensorShape([None] + value.shape.as_list()[1:]))
        with get_default_graph().name_scope(name or "TensorArraySplit"):
            flow = apply_op(_split, [self._handle, value,
                                     convert_to_tensor(lengths, dtype=dtypes.int64, name="lengths"),
                                     self._flow], name="TensorArraySplitV3")
        return self._with_flow(flow)

    def size(self, name=None):
        """The number of elements (an int32 scalar tensor)."""
        return apply_op(_size, [self._handle, self._flow], name=name or "TensorArraySizeV3")

    def grad(self, source, flow=None, name=None):
        """The gradient TensorArray of this one for gradient source ``source``."""
        flow = self._flow if flow is None else flow
        handle, flow_out = apply_op(_grad, [self._handle, flow], attrs={"source": source},
                                    name=name or "TensorArrayGrad")
        array = TensorArray(self._dtype, handle=handle, flow=flow_out,
                            infer_shape=self._infer_shape)
        array._element_shape = self._element_shape
        return array

    def close(self, name=None):
        return control_flow_ops.no_op(name=name or "TensorArrayClose")


def _as_int32(index):
    """An index (or indices) as an int32 tensor.  A Python int (or list of them)
    is left for ``apply_op`` to convert, inside the op's name scope, as TF's op
    library does (``TensorArrayReadV3/index``)."""
    if isinstance(index, int) or (isinstance(index, list)
                                  and all(isinstance(i, int) for i in index)):
        return index
    return convert_to_tensor(index, dtype=dtypes.int32)


def _grad_source(grad):
    """The gradient call a gradient tensor belongs to: its top name scope."""
    return grad.op.name.split("/")[0]


@gradient("TensorArrayReadV3")
def _read_grad(op, grad):
    array = TensorArray(op.get_attr("dtype"), handle=op.inputs[0], flow=op.inputs[2])
    grad_array = array.grad(_grad_source(grad), flow=op.inputs[2])
    written = grad_array.write(op.inputs[1], grad)
    return [None, None, written.flow]


@gradient("TensorArrayWriteV3")
def _write_grad(op, flow_grad):
    array = TensorArray(op.inputs[2].dtype, handle=op.inputs[0], flow=op.inputs[3])
    grad_array = array.grad(_grad_source(flow_grad), flow=flow_grad)
    value_grad = grad_array.read(op.inputs[1])
    value_grad.set_shape(op.inputs[2].shape)
    return [None, None, value_grad, flow_grad]


@gradient("TensorArrayGatherV3")
def _gather_grad(op, grad):
    array = TensorArray(op.get_attr("dtype"), handle=op.inputs[0], flow=op.inputs[2])
    grad_array = array.grad(_grad_source(grad), flow=op.inputs[2])
    scattered = grad_array.scatter(op.inputs[1], grad)
    return [None, None, scattered.flow]


@gradient("TensorArrayScatterV3")
def _scatter_grad(op, flow_grad):
    array = TensorArray(op.inputs[2].dtype, handle=op.inputs[0], flow=op.inputs[3])
    grad_array = array.grad(_grad_source(flow_grad), flow=flow_grad)
    value_grad = grad_array.gather(op.inputs[1])
    value_grad.set_shape(op.inputs[2].shape)
    return [None, None, value_grad, flow_grad]


@gradient("TensorArrayConcatV3")
def _concat_grad(op, grad, unused_lengths_grad):
    array = TensorArray(op.get_attr("dtype"), handle=op.inputs[0], flow=op.inputs[1])
    grad_array = array.grad(_grad_source(grad), flow=op.inputs[1])
    split = grad_array.split(grad, op.outputs[1])
    return [None, split.flow]


@gradient("TensorArraySplitV3")
def _split_grad(op, flow_grad):
    array = TensorArray(op.inputs[1].dtype, handle=op.inputs[0], flow=op.inputs[3])
    grad_array = array.grad(_grad_source(flow_grad), flow=flow_grad)
    value_grad = grad_array.concat()
    value_grad.set_shape(op.inputs[1].shape)
    return [None, value_grad, None, flow_grad]


def build_ta_with_new_flow(old, flow):
    """``old`` with ``flow`` (how cond and while_loop rebuild TensorArray loop variables)."""
    return old._with_flow(flow)


__all__ = ["TensorArray"]
