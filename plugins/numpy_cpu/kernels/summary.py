"""CPU kernels of the summary ops: NumPy values in, serialized ``Summary`` bytes out.

The messages are TF's own (``summary_pb2.Summary``, loaded through
:mod:`minitf.framework.protos`); what is computed here is the content TF's
kernels put in them: a histogram over TF's default buckets
(``tensorflow/core/lib/histogram/histogram.cc``), images scaled to ``uint8``
and encoded as PNG (``summary_image_op.cc``).
"""

import struct
import zlib

import numpy as np

from minitf.plugin import make_tensor_proto, protos
from minitf_numpy_cpu.kernels.table import kernel


def _summary(values):
    """A serialized ``Summary`` of ``Summary.Value`` messages."""
    return protos.load("summary_pb2").Summary(value=values).SerializeToString()


def _value(tag, **fields):
    return protos.load("summary_pb2").Summary.Value(tag=tag, **fields)


def _text(value):
    value = value.item() if isinstance(value, np.ndarray) else value
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


@kernel("ScalarSummary")
def scalar_summary(ctx, tags, values):
    tags, values = np.asarray(tags, dtype=object), np.asarray(values)
    if tags.shape != values.shape:
        raise ctx.invalid_argument("tags and values not the same shape: %s != %s"
                                   % (list(tags.shape), list(values.shape)))
    return _summary([_value(_text(tag), simple_value=float(value))
                     for tag, value in zip(tags.reshape(-1), values.reshape(-1))])


# ---- histograms ------------------------------------------------------------------------------
def _default_bucket_limits():
    """TF's default bucket limits: +-1e-12 growing by 10% to 1e20, 0, and +-DBL_MAX."""
    positive = []
    v = 1e-12
    while v < 1e20:
        positive.append(v)
        v *= 1.1
    positive.append(np.finfo(np.float64).max)
    return np.array([-p for p in reversed(positive)] + [0.0] + positive)


BUCKET_LIMITS = _default_bucket_limits()


def histogram_proto(values):
    """The ``HistogramProto`` of ``values``, as TF's ``Histogram::EncodeToProto``.

    Bucket ``i`` counts values in ``[limit[i-1], limit[i])``; runs of empty
    buckets are collapsed into one (the last limit of the run, count 0).
    """
    values = np.asarray(values, dtype=np.float64).reshape(-1)
    counts = np.bincount(np.searchsorted(BUCKET_LIMITS, values, side="right"),
                         minlength=len(BUCKET_LIMITS))[:len(BUCKET_LIMITS)]
    limits, buckets = [], []
    i = 0
    while i < len(counts):
        end, count = BUCKET_LIMITS[i], counts[i]
        i += 1
        if count == 0:
            while i < len(counts) and counts[i] == 0:
                end = BUCKET_LIMITS[i]
                i += 1
        limits.append(end)
        buckets.append(float(count))
    empty = values.size == 0
    return protos.load("summary_pb2").HistogramProto(
        min=np.finfo(np.float64).max if empty else values.min(),
        max=-np.finfo(np.float64).max if empty else values.max(),
        num=values.size, sum=values.sum(), sum_squares=np.square(values).sum(),
        bucket_limit=limits, bucket=buckets)


@kernel("HistogramSummary")
def histogram_summary(ctx, tag, values):
    values = np.asarray(values)
    if values.dtype.kind == "f" and not np.isfinite(values).all():
        raise ctx.invalid_argument("Nan in summary histogram for: %s" % _text(tag))
    return _summary([_value(_text(tag), histo=histogram_proto(values))])


# ---- images ----------------------------------------------------------------------------------
def encode_png(image):
    """A ``[height, width, channels]`` uint8 array as PNG bytes (8-bit, no filtering)."""
    height, width, channels = image.shape
    color_type = {1: 0, 3: 2, 4: 6}[channels]  # grey, RGB, RGBA

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data)))

    rows = b"".join(b"\x00" + image[y].tobytes() for y in range(height))  # filter type 0
    header = struct.pack(">IIBBBBB", width, height, 8, color_type, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows))
            + chunk(b"IEND", b""))


def to_uint8(images):
    """TF's image scaling: non-negative floats so the largest is 255, otherwise so that
    the largest magnitude is 127 and 0 maps to 128; uint8 images are kept."""
    if images.dtype == np.uint8:
        return images
    images = images.astype(np.float64)
    finite = np.isfinite(images).all(axis=-1, keepdims=True)
    values = np.where(finite, images, 0.0)
    if values.min(initial=0.0) >= 0:
        peak = values.max(initial=0.0)
        scale, offset = (255.0 / peak if peak > 0 else 0.0), 0.0
    else:
        peak = np.abs(values).max()
        scale, offset = 127.0 / peak, 128.0
    scaled = np.clip(values * scale + offset, 0, 255).astype(np.uint8)
    bad = np.zeros_like(scaled)
    bad[..., 0] = 255  # TF's default bad_color: red
    return np.where(finite, scaled, bad)


@kernel("ImageSummary")
def image_summary(ctx, tag, tensor, max_images):
    tensor = np.asarray(tensor)
    if tensor.ndim != 4 or tensor.shape[3] not in (1, 3, 4):
        raise ctx.invalid_argument("Tensor must be 4-D with last dim 1, 3, or 4, not %s"
                                   % list(tensor.shape))
    tag = _text(tag)
    count = min(max_images, tensor.shape[0])
    values = []
    for i in range(count):
        png = encode_png(to_uint8(tensor[i]))
        name = "%s/image" % tag if max_images == 1 else "%s/image/%d" % (tag, i)
        image = protos.load("summary_pb2").Summary.Image(
            height=tensor.shape[1], width=tensor.shape[2], colorspace=tensor.shape[3],
            encoded_image_string=png)
        values.append(_value(name, image=image))
    return _summary(values)


@kernel("TensorSummaryV2")
def tensor_summary_v2(ctx, tag, tensor, serialized_summary_metadata):
    metadata = serialized_summary_metadata
    metadata = metadata.item() if isinstance(metadata, np.ndarray) else metadata
    value = _value(_text(tag), tensor=make_tensor_proto(tensor))
    value.metadata.ParseFromString(metadata)
    return _summary([value])


@kernel("MergeSummary")
def merge_summary(ctx, *inputs):
    """Concatenates the inputs' ``value`` fields, refusing a tag seen twice."""
    from google.protobuf import message  # loaded with the summary protos, not with the plugin
    summary_class = protos.load("summary_pb2").Summary
    seen = set()
    values = []
    for serialized in inputs:
        serialized = serialized.item() if isinstance(serialized, np.ndarray) else serialized
        try:
            summary = summary_class.FromString(serialized)
        except message.DecodeError:
            raise ctx.invalid_argument("Could not parse one of the summary inputs") from None
        for value in summary.value:
            if value.tag in seen:
                raise ctx.invalid_argument("Duplicate tag %s found in summary inputs"
                                           % value.tag)
            seen.add(value.tag)
            values.append(value)
    return _summary(values)
