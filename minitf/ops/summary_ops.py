"""Summary ops: turn tensors into serialized ``Summary`` protocol buffers.

A summary is an ordinary graph op whose output is a scalar ``tf.string``: the
bytes of a ``Summary`` message (TF's ``summary_pb2.Summary``).  Running
``tf.summary.merge_all()`` fetches one such string per step, and a
``tf.summary.FileWriter`` appends it to an event file for TensorBoard.
Because they are ops, summaries are computed by the session like any other
fetch, on the values of that very step.

======================  ========================================================
op                      what its string holds
======================  ========================================================
``ScalarSummary``       ``simple_value`` for the tag (``tf.summary.scalar``)
``HistogramSummary``    a ``HistogramProto`` of all values (``tf.summary.histogram``)
``ImageSummary``        up to ``max_images`` PNG images (``tf.summary.image``)
``TensorSummaryV2``     the tensor itself plus plugin metadata (``tf.summary.text``)
``MergeSummary``        the values of several summaries, tags checked unique
======================  ========================================================

The public wrappers (with name scopes, tags and collections) are in
:mod:`minitf.summary`.  Mirrors TF's ``gen_logging_ops`` summary ops.
"""

from minitf.framework import dtypes
from minitf.framework.tensor_shape import scalar
from minitf.ops.op_def_library import apply_op, define_op, not_differentiable


def _string_scalar(op):
    return [scalar()]


def _string_dtype(op):
    return [dtypes.string]


def _image_shape(op):
    shape = op.inputs[1].shape
    if shape.ndims is not None and shape.ndims != 4:
        raise ValueError("Shape must be rank 4 but is rank %d for '%s' (op: 'ImageSummary') with "
                         "input shapes: %s" % (shape.ndims, op.name, shape))
    channels = shape.as_list()[3] if shape.ndims == 4 else None
    if channels not in (None, 1, 3, 4):
        raise ValueError("ImageSummary '%s': images must have 1, 3 or 4 channels, got %d"
                         % (op.name, channels))
    return [scalar()]


_scalar_summary = define_op(
    "ScalarSummary", inputs=("tags", "values"), shape_fn=_string_scalar, dtype_fn=_string_dtype,
    doc="A Summary with one simple_value per tag.")
_histogram_summary = define_op(
    "HistogramSummary", inputs=("tag", "values"), shape_fn=_string_scalar,
    dtype_fn=_string_dtype, doc="A Summary with a histogram of the values.")
_image_summary = define_op(
    "ImageSummary", inputs=("tag", "tensor"), attrs={"max_images": 3}, shape_fn=_image_shape,
    dtype_fn=_string_dtype, doc="A Summary with PNG images of a [batch, h, w, c] tensor.")
_tensor_summary = define_op(
    "TensorSummaryV2", inputs=("tag", "tensor", "serialized_summary_metadata"),
    shape_fn=_string_scalar, dtype_fn=_string_dtype,
    doc="A Summary holding a whole tensor and its plugin metadata.")
_merge_summary = define_op(
    "MergeSummary", inputs=("inputs*",), shape_fn=_string_scalar, dtype_fn=_string_dtype,
    type_constraint=(dtypes.string,), doc="The union of several serialized Summaries.")
not_differentiable("ScalarSummary", "HistogramSummary", "ImageSummary", "TensorSummaryV2",
                   "MergeSummary")


def scalar_summary(tags, values, name=None):
    """A ``Summary`` with ``values`` under ``tags`` (same shape; usually scalars)."""
    return apply_op(_scalar_summary, [tags, values], name=name or "ScalarSummary")


def histogram_summary(tag, values, name=None):
    """A ``Summary`` with a histogram of ``values`` (NaN/Inf: InvalidArgumentError at run)."""
    return apply_op(_histogram_summary, [tag, values], name=name or "HistogramSummary")


def image_summary(tag, tensor, max_images=3, name=None):
    """A ``Summary`` with up to ``max_images`` PNGs of the ``[batch, h, w, 1|3|4]`` ``tensor``.

    Raises:
        ValueError: if ``tensor`` is known not to be 4-D with 1, 3 or 4 channels.
    """
    return apply_op(_image_summary, [tag, tensor], attrs={"max_images": int(max_images)},
                    name=name or "ImageSummary")


def tensor_summary_v2(tag, tensor, serialized_summary_metadata, name=None):
    """A ``Summary`` holding ``tensor`` itself, for plugins such as the text dashboard."""
    return apply_op(_tensor_summary, [tag, tensor, serialized_summary_metadata],
                    name=name or "TensorSummaryV2")


def merge_summary(inputs, name=None):
    """The union of the serialized ``Summary`` strings ``inputs``.

    Duplicate tags are an ``InvalidArgumentError`` when it runs.
    """
    return apply_op(_merge_summary, [list(inputs)], name=name or "MergeSummary")


__all__ = ["histogram_summary", "image_summary", "merge_summary", "scalar_summary",
           "tensor_summary_v2"]
