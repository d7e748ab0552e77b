"""Whole files as string tensors: ``tf.read_file`` and ``tf.write_file``.

An input pipeline that starts from file names (the image tutorials' ``list of
JPEG paths``) reads each file with one ``ReadFile`` op, whose output is a
scalar string tensor holding the file's bytes, and decodes it with an op of
:mod:`minitf.ops.image_ops`::

    contents = tf.read_file(filename)            # b'\\xff\\xd8\\xff...'
    image = tf.image.decode_jpeg(contents, channels=3)

``WriteFile`` is the reverse: it writes a scalar string to a file, creating
the missing parent directories, as TF's kernel does.  Both ops are stateful
(they touch the file system), so they run each time they are asked for and
are never folded into constants.  A missing file is TF's ``NotFoundError``
and a directory a ``FailedPreconditionError``, both raised when the op runs.

Mirrors ``tf.io.read_file``/``tf.io.write_file`` (``gen_io_ops.read_file``,
``write_file``); the kernels are ``plugins/numpy_cpu/kernels/file_io.py``.
"""

from minitf.framework import dtypes
from minitf.framework.tensor_shape import scalar
from minitf.ops.op_def_library import apply_op, define_op, not_differentiable


def _scalar_inputs(op):
    for tensor in op.inputs:
        if tensor.shape.ndims not in (None, 0):
            raise ValueError("Shape must be rank 0 but is rank %d" % tensor.shape.ndims)
    return [scalar()] * len(op.outputs)


_read_file = define_op(
    "ReadFile", inputs=("filename",), outputs=("contents",), shape_fn=_scalar_inputs,
    type_constraint=(dtypes.string,), stateful=True,
    doc="The bytes of a file, as a scalar string.")
not_differentiable("ReadFile")


def read_file(filename, name=None):
    """Reads the whole file ``filename`` (``tf.read_file``, ``tf.io.read_file``).

    Args:
        filename: a scalar string tensor, the path.
        name: the op name (default ``ReadFile``).

    Returns:
        A scalar string tensor: the file's bytes.

    Raises:
        NotFoundError: at run time, when the file does not exist.
        FailedPreconditionError: at run time, when the path is a directory.

    Example:
        >>> sess.run(tf.read_file("hello.txt"))
        b'hello'
    """
    return apply_op(_read_file, [filename], name=name or "ReadFile")


_write_file = define_op(
    "WriteFile", inputs=("filename", "contents"), outputs=(), shape_fn=_scalar_inputs,
    type_constraint=(dtypes.string,), same_dtype_inputs=("filename", "contents"),
    stateful=True, doc="Writes a scalar string to a file, creating its directory.")
not_differentiable("WriteFile")


def write_file(filename, contents, name=None):
    """Writes ``contents`` to the file ``filename`` (``tf.write_file``, ``tf.io.write_file``).

    The parent directories are created if missing; an existing file is
    replaced.

    Args:
        filename: a scalar string tensor, the path.
        contents: a scalar string tensor, the bytes to write.
        name: the op name (default ``WriteFile``).

    Returns:
        The ``WriteFile`` Operation (run it to write).
    """
    return apply_op(_write_file, [filename, contents], name=name or "WriteFile")


__all__ = ["read_file", "write_file"]
