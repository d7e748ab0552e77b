"""Checking for NaN and Inf: ``tf.check_numerics``, ``tf.verify_tensor_all_finite``
and ``tf.add_check_numerics_ops``.

``CheckNumerics`` is an identity on a floating-point tensor that raises
``InvalidArgumentError`` when the tensor holds a NaN or an infinity; the
error names the op (and so the tensor checked) and starts with the given
message::

    y = tf.check_numerics(tf.log(x), "log of x")
    sess.run(y, {x: [0.0]})
    # InvalidArgumentError: log of x : Tensor had Inf values
    #   [[node CheckNumerics (defined at train.py:12) ]]

``add_check_numerics_ops()`` puts one after *every* floating-point output of
the graph built so far, chained by control dependencies so that an op's
inputs are checked before its outputs: the first error names the first op
that produced a NaN, the usual way to find where training diverged::

    check = tf.add_check_numerics_ops()
    sess.run([train_op, check])

The op is stateful, as in TF: constant folding must not evaluate it away.
Mirrors TF's ``CheckNumerics`` op (``array_ops.check_numerics``) and
``tensorflow/python/ops/numerics.py``.
"""

from minitf.framework import dtypes, graph as graph_lib
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.ops import array_ops, control_flow_ops
from minitf.ops.common_shapes import unchanged_shape
from minitf.ops.op_def_library import apply_op, define_op, gradient

_check_numerics = define_op(
    "CheckNumerics", inputs=("tensor",), outputs=("output",), attrs={"message": None},
    shape_fn=unchanged_shape, type_constraint=dtypes.FLOATING, stateful=True,
    doc="Identity on tensor; InvalidArgumentError if it holds a NaN or an Inf.")


def check_numerics(tensor, message, name=None):
    """Returns ``tensor``, checked for NaN and Inf each time it is computed
    (``tf.check_numerics``).

    Args:
        tensor: a ``float16``, ``float32`` or ``float64`` tensor.
        message: the start of the error message.
        name: the op name (default ``CheckNumerics``).

    Returns:
        A tensor equal to ``tensor``.

    Raises:
        TypeError: for a tensor of another dtype (at graph construction).
        minitf.errors.InvalidArgumentError: when the op runs on a tensor with
            a NaN or an Inf: ``"<message> : Tensor had NaN values"`` (or
            ``Inf``, or ``Inf and NaN``), naming the op.
    """
    return apply_op(_check_numerics, [tensor], attrs={"message": str(message)},
                    name=name or "CheckNumerics")


@gradient("CheckNumerics")
def _check_numerics_grad(op, grad):
    """The gradient is checked too, as TF does."""
    return [check_numerics(grad, "Not a number (NaN) or infinity (Inf) values detected in "
                                 "gradient. %s" % op.get_attr("message"))]


def verify_tensor_all_finite(t=None, msg=None, name=None, x=None, message=None):
    """Returns ``t`` once it is checked for NaN and Inf (``tf.verify_tensor_all_finite``).

    Unlike :func:`check_numerics`, the result is ``t`` itself behind a
    control dependency (an ``Identity``).  ``x`` and ``message`` are TF's
    newer names for ``t`` and ``msg``.
    """
    t = x if x is not None else t
    msg = message if message is not None else msg
    graph = graph_lib.get_default_graph()
    with graph.name_scope(name or "VerifyFinite"):
        t = convert_to_tensor(t, name="x")
        with graph.control_dependencies([check_numerics(t, msg)]):  # TF's with_dependencies
            return array_ops.identity(t, name="control_dependency")


def add_check_numerics_ops():
    """Checks every ``float16``/``float32``/``float64`` output in the default graph
    (``tf.add_check_numerics_ops``).

    One ``CheckNumerics`` per output, with the message ``"<op name>:<index>"``,
    each depending on the previous one, in the order the ops were created, so
    an op's inputs are checked before its outputs.

    Returns:
        A ``NoOp`` grouping the checks: run it with the step.

    Raises:
        ValueError: if the graph has ops inside ``tf.cond`` or
            ``tf.while_loop`` (as in TF, they cannot be checked this way).
    """
    check = []
    graph = graph_lib.get_default_graph()
    for op in graph.get_operations():
        for output in op.outputs:
            if output.dtype not in dtypes.FLOATING:  # refs are left out, as in TF
                continue
            if op._get_control_flow_context() is not None:
                raise ValueError("`tf.add_check_numerics_ops() is not compatible with "
                                 "TensorFlow control flow operations such as `tf.cond()` or "
                                 "`tf.while_loop()`.")
            with graph.control_dependencies(check):
                check = [check_numerics(output, "%s:%d" % (op.name, output.value_index))]
    return control_flow_ops.group(*check)


__all__ = ["add_check_numerics_ops", "check_numerics", "verify_tensor_all_finite"]
