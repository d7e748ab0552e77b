"""Debugging ops: ``tf.Print`` shows values as they flow, ``tf.Assert`` checks them.

Both are ordinary stateful ops, so they run only when a fetch needs them:
``tf.Print`` is an identity on its first input that prints, to stderr, its
message and a summary of the ``data`` tensors each time it runs; ``Assert``
has no outputs and raises ``InvalidArgumentError`` when its condition is
false, so it is used as a control dependency::

    x = tf.Print(x, [tf.shape(x), x], message="x: ")
    with tf.control_dependencies([tf.Assert(tf.reduce_all(x > 0), [x])]):
        y = tf.log(x)

The ``tf.assert_*`` helpers built on ``Assert`` are in
:mod:`minitf.ops.check_ops`.  Mirrors TF's ``logging_ops.Print`` and
``control_flow_ops.Assert`` (both ops are in ``gen_logging_ops``).
"""

from minitf.framework import dtypes, graph as graph_lib
from minitf.ops.op_def_library import apply_op, define_op, gradient, not_differentiable

_print = define_op(
    "Print", inputs=("input", "data*"), attrs={"message": "", "first_n": -1, "summarize": 3},
    shape_fn=lambda op: [op.inputs[0].shape], stateful=True,
    doc="Identity on input; prints message and data when it runs.")


@gradient("Print")
def _print_grad(op, grad):
    return [grad] + [None] * (len(op.inputs) - 1)


def Print(input_, data, message=None, first_n=None, summarize=None, name=None):  # noqa: N802
    """Returns ``input_`` and prints ``message`` and ``data`` each time it is computed.

    Args:
        input_: the tensor passed through.
        data: tensors whose values are printed (``[v1][v2]...`` after the message).
        message: a prefix.
        first_n: print only the first ``first_n`` times (None or -1: always).
        summarize: how many entries of each tensor to print (default 3).
        name: the op name.

    Returns:
        A tensor equal to ``input_``; use it instead of ``input_`` so the print runs.
    """
    attrs = {"message": message or "", "first_n": -1 if first_n is None else int(first_n),
             "summarize": 3 if summarize is None else int(summarize)}
    return apply_op(_print, [input_, list(data)], attrs=attrs, name=name or "Print")


_assert = define_op(
    "Assert", inputs=("condition", "data*"), outputs=(), attrs={"summarize": 3},
    shape_fn=lambda op: [], type_constraint=(dtypes.bool,), stateful=True,
    doc="Raises InvalidArgumentError with data's values when condition is false.")
not_differentiable("Assert")


def Assert(condition, data, summarize=None, name=None):  # noqa: N802 - TF's name
    """Asserts that the scalar boolean ``condition`` is true when the op runs.

    Args:
        condition: a scalar ``tf.bool`` tensor.
        data: tensors (strings included) whose values make the error message.
        summarize: how many entries of each tensor to print (default 3).
        name: the name scope (default ``Assert``; the op is ``Assert/Assert``).

    Returns:
        The ``Assert`` Operation; make it a control dependency of what needs it.

    Raises:
        minitf.errors.InvalidArgumentError: at run time, ``assertion failed: [...]``.
    """
    with graph_lib.get_default_graph().name_scope(name or "Assert"):
        return apply_op(_assert, [condition, list(data)],
                        attrs={"summarize": 3 if summarize is None else int(summarize)},
                        name="Assert")


__all__ = ["Assert", "Print"]
