"""Image ops: decoding and encoding JPEG/PNG, and resizing with TF1's sampling rules.

An image is a ``[height, width, channels]`` tensor (a batch of them
``[batch, height, width, channels]``, "NHWC"), of ``uint8`` as decoded or of
floats in ``[0, 1]`` after :func:`~minitf.ops.image_processing.convert_image_dtype`.
This module declares the ops whose kernels do real work; the functions built
from ordinary ops (flips, crops, brightness, standardization) are in
:mod:`minitf.ops.image_processing`, and ``tf.image`` gathers both.

**Codecs.**  ``DecodeJpeg``/``DecodePng``/``DecodeImage`` turn the bytes of a
file (a scalar string, e.g. from ``tf.read_file``) into a uint8 image;
``channels`` asks for 1 (gray), 3 (RGB) or 4 (RGBA) channels, 0 for the
file's own.  As in TF, every decoder accepts every format it knows (a PNG
given to ``decode_jpeg`` decodes), so only the channel rules differ.
``EncodePng``/``EncodeJpeg`` go the other way.  Malformed data is an
``InvalidArgumentError`` when the op runs.

**Resizing.**  ``ResizeBilinear`` and ``ResizeNearestNeighbor`` map output
pixel ``i`` of each axis to the input coordinate ``x = i * scale`` where
``scale = in_size / out_size`` — TF1's "legacy" convention, in which pixel
centres are *not* aligned (``half_pixel_centers=False``, the default).  With
``align_corners=True`` the corner pixels line up instead:
``scale = (in_size - 1) / (out_size - 1)``.  With ``half_pixel_centers=True``
(TF2's convention) ``x = (i + 0.5) * scale - 0.5``.  Bilinear then blends
the neighbours ``floor(x)`` and ``ceil(x)`` (clamped to the image) with weight
``x - floor(x)``, and its output is float32 whatever the input type; nearest
neighbour picks ``floor(x)`` (``round(x)`` when aligning corners) and keeps
the dtype.  Their gradients scatter each output pixel's gradient back with
the same weights (``ResizeBilinearGrad``, ``ResizeNearestNeighborGrad``).

Mirrors ``tensorflow/python/ops/image_ops_impl.py`` and ``image_grad.py``,
``gen_image_ops`` and the kernels ``decode_image_op.cc``,
``resize_bilinear_op.cc`` and ``resize_nearest_neighbor_op.cc``; the NumPy
kernels are ``plugins/numpy_cpu/kernels/image.py``.
"""

import enum

from minitf.api_scopes import name_scope
from minitf.framework import dtypes
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.framework.tensor_shape import TensorShape, scalar, unknown_shape
from minitf.framework.tensor_util import constant_value_as_shape
from minitf.ops import array_ops, math_ops, unary_ops
from minitf.ops.op_def_library import apply_op, define_op, gradient, not_differentiable

# The dtypes the resize ops accept (TF's ``T`` of ResizeBilinear).
RESIZE_TYPES = (dtypes.int8, dtypes.uint8, dtypes.int16, dtypes.uint16, dtypes.int32,
                dtypes.int64, dtypes.float16, dtypes.float32, dtypes.float64)


def _check_rank(tensor, rank, what):
    if tensor.shape.ndims not in (None, rank):
        raise ValueError("Shape must be rank %d but is rank %d (%s)"
                         % (rank, tensor.shape.ndims, what))


# ---- dtype conversion ---------------------------------------------------------------------------
def convert_image_dtype(image, dtype, saturate=False, name=None):
    """Converts ``image`` to ``dtype``, rescaling its values (``tf.image.convert_image_dtype``).

    Integer images span ``[0, MAX]`` of their dtype, float images ``[0, 1)``.
    The rules are TF's: integer to integer scales by a power-of-two ratio
    (``uint8 -> int32`` multiplies by ``2**23``, the reverse floor-divides);
    integer to float casts and multiplies by ``1 / MAX``; float to integer
    multiplies by ``MAX + 0.5`` and casts; float to float only casts.  With
    ``saturate`` values outside the target range are clipped before the
    cast instead of wrapping around.

    Args:
        image: the image tensor.
        dtype: the target dtype (an integer or floating type).
        saturate: clip before casting (only matters for a narrowing cast).
        name: the name scope (default ``convert_image``).

    Returns:
        ``image`` converted (an ``Identity`` when the dtype is already ``dtype``).

    Raises:
        AttributeError: for a ``dtype`` that is neither integer nor floating (TF's class).

    Example:
        >>> sess.run(tf.image.convert_image_dtype(tf.constant([0, 255], tf.uint8), tf.float32))
        array([0., 1.], dtype=float32)
    """
    image = convert_to_tensor(image, name="image")
    dtype = dtypes.as_dtype(dtype).base_dtype
    source = image.dtype.base_dtype
    if not dtype.is_floating and not dtype.is_integer:
        raise AttributeError("dtype must be either floating point or integer")
    if dtype == source:
        return array_ops.identity(image, name=name)
    with name_scope(name, "convert_image", [image]) as scope:
        if source.is_integer and dtype.is_integer:
            scale_in, scale_out = source.max, dtype.max
            if scale_in > scale_out:  # scale down first, then cast: in.max maps below out.max+1
                scaled = math_ops.floordiv(image, (scale_in + 1) // (scale_out + 1))
                return _cast(scaled, dtype, saturate, scope)
            cast = _cast(image, dtype, saturate, None)  # cast first, then scale up
            return math_ops.multiply(cast, (scale_out + 1) // (scale_in + 1), name=scope)
        if source.is_floating and dtype.is_floating:
            return unary_ops.cast(image, dtype, name=scope)
        if source.is_integer:  # to float: cast, then scale; nothing can overflow
            cast = unary_ops.cast(image, dtype)
            return math_ops.multiply(cast, 1.0 / source.max, name=scope)
        scaled = math_ops.multiply(image, dtype.max + 0.5)  # to integer: the 0.5 rounds
        return _cast(scaled, dtype, saturate, scope)


def _cast(value, dtype, saturate, name):
    """A cast that, with ``saturate``, first clips to ``dtype``'s range (TF's ``saturate_cast``)."""
    if saturate:
        source = value.dtype.base_dtype
        if source.min < dtype.min:
            value = math_ops.maximum(value, convert_to_tensor(dtype.min, source, name="min"))
        if source.max > dtype.max:
            value = math_ops.minimum(value, convert_to_tensor(dtype.max, source, name="max"))
    return unary_ops.cast(value, dtype, name=name)


# ---- decoding -----------------------------------------------------------------------------------
def _decoded_shape(op):
    """``[?, ?, channels]`` (``?`` for ``channels=0``) from a scalar of bytes."""
    _check_rank(op.inputs[0], 0, "contents")
    channels = op.get_attr("channels")
    if op.type == "DecodeImage" and op.get_attr("expand_animations"):
        return [unknown_shape()]  # a GIF decodes to [frames, h, w, 3]
    return [TensorShape([None, None, channels or None])]


def _check_channels(channels, allowed):
    if channels not in allowed:
        raise ValueError("channels must be one of %s, got %r" % (list(allowed), channels))
    return int(channels)


_decode_jpeg = define_op(
    "DecodeJpeg", inputs=("contents",), outputs=("image",),
    attrs={"channels": 0, "ratio": 1, "fancy_upscaling": True, "try_recover_truncated": False,
           "acceptable_fraction": 1.0, "dct_method": ""},
    shape_fn=_decoded_shape, dtype_fn=lambda op: [dtypes.uint8],
    type_constraint=(dtypes.string,), doc="Decodes a JPEG (or PNG, GIF, BMP) to a uint8 image.")
not_differentiable("DecodeJpeg")


def decode_jpeg(contents, channels=0, ratio=1, fancy_upscaling=True,
                try_recover_truncated=False, acceptable_fraction=1, dct_method="", name=None):
    """Decodes a JPEG-encoded image to a uint8 tensor (``tf.image.decode_jpeg``).

    Args:
        contents: a scalar string tensor, the file's bytes.
        channels: 0 (the file's own), 1 (grayscale) or 3 (RGB).
        ratio: downscale by 1, 2, 4 or 8 while decoding (libjpeg's DCT scaling).
        fancy_upscaling, try_recover_truncated, acceptable_fraction, dct_method:
            accepted for TF compatibility; the decoder (Pillow's libjpeg)
            always uses its defaults, which are TF's defaults.
        name: the op name (default ``DecodeJpeg``).

    Returns:
        A uint8 tensor ``[height, width, channels]``.

    Raises:
        InvalidArgumentError: at run time, for data that is no image.
    """
    if ratio not in (1, 2, 4, 8):
        raise ValueError("ratio must be 1, 2, 4 or 8, got %r" % (ratio,))
    attrs = {"channels": _check_channels(channels, (0, 1, 3)), "ratio": int(ratio),
             "fancy_upscaling": bool(fancy_upscaling),
             "try_recover_truncated": bool(try_recover_truncated),
             "acceptable_fraction": float(acceptable_fraction), "dct_method": dct_method}
    return apply_op(_decode_jpeg, [contents], attrs=attrs, name=name or "DecodeJpeg")


_decode_png = define_op(
    "DecodePng", inputs=("contents",), outputs=("image",),
    attrs={"channels": 0, "dtype": dtypes.uint8}, shape_fn=_decoded_shape,
    dtype_fn=lambda op: [dtypes.as_dtype(op.get_attr("dtype"))],
    type_constraint=(dtypes.string,),
    doc="Decodes a PNG (or JPEG, GIF, BMP) to a uint8/uint16 image.")
not_differentiable("DecodePng")


def decode_png(contents, channels=0, dtype=dtypes.uint8, name=None):
    """Decodes a PNG-encoded image (``tf.image.decode_png``).

    Args:
        contents: a scalar string tensor, the file's bytes.
        channels: 0 (the file's own), 1 (gray), 2 (gray and alpha), 3 (RGB)
            or 4 (RGBA).  Colour becomes gray as ``(0.299 R + 0.587 G + 0.114 B)``
            rounded down, as TF computes it.
        dtype: uint8, or uint16 for 16-bit files (8-bit ones are scaled by 257).
        name: the op name (default ``DecodePng``).

    Returns:
        A tensor ``[height, width, channels]`` of ``dtype``.
    """
    dtype = dtypes.as_dtype(dtype).base_dtype
    if dtype not in (dtypes.uint8, dtypes.uint16):
        raise TypeError("decode_png's dtype must be uint8 or uint16, got %s" % dtype.name)
    attrs = {"channels": _check_channels(channels, (0, 1, 2, 3, 4)), "dtype": dtype}
    return apply_op(_decode_png, [contents], attrs=attrs, name=name or "DecodePng")


_decode_image = define_op(
    "DecodeImage", inputs=("contents",), outputs=("image",),
    attrs={"channels": 0, "dtype": dtypes.uint8, "expand_animations": True},
    shape_fn=_decoded_shape, dtype_fn=lambda op: [dtypes.uint8],
    type_constraint=(dtypes.string,), doc="Decodes a JPEG, PNG, GIF or BMP image.")
not_differentiable("DecodeImage")


def decode_image(contents, channels=None, dtype=dtypes.uint8, name=None, expand_animations=True):
    """Decodes a JPEG, PNG, GIF or BMP image, whichever the bytes hold (``tf.image.decode_image``).

    Args:
        contents: a scalar string tensor, the file's bytes.
        channels: None or 0 (the file's own), 1, 3 or 4.
        dtype: the output dtype; a dtype other than uint8 is converted with
            :func:`convert_image_dtype`'s rules
            (floats in ``[0, 1]``).
        name: the name scope (default ``decode_image``).
        expand_animations: True: an animated GIF is ``[frames, h, w, 3]`` and
            the result's rank is unknown; False: only its first frame, and
            every result is 3-D.

    Returns:
        The decoded image.
    """
    with name_scope(name, "decode_image", [contents]):
        attrs = {"channels": _check_channels(channels or 0, (0, 1, 3, 4)),
                 "dtype": dtypes.uint8, "expand_animations": bool(expand_animations)}
        image = apply_op(_decode_image, [contents], attrs=attrs, name="DecodeImage")
        if dtypes.as_dtype(dtype).base_dtype != dtypes.uint8:
            image = convert_image_dtype(image, dtype)
        return image


# ---- encoding -----------------------------------------------------------------------------------
def _encoded_shape(op):
    _check_rank(op.inputs[0], 3, "image")
    return [scalar()]


_encode_png = define_op(
    "EncodePng", inputs=("image",), outputs=("contents",), attrs={"compression": -1},
    shape_fn=_encoded_shape, dtype_fn=lambda op: [dtypes.string],
    type_constraint=(dtypes.uint8, dtypes.uint16), doc="Encodes a uint8/uint16 image as PNG.")
not_differentiable("EncodePng")


def encode_png(image, compression=-1, name=None):
    """PNG-encodes ``image`` (``tf.image.encode_png``).

    Args:
        image: a uint8 or uint16 tensor ``[height, width, channels]``, with 1,
            2, 3 or 4 channels (16-bit only with 1 channel: Pillow writes no
            16-bit colour PNG).
        compression: zlib level 0-9, -1 for the default.
        name: the op name (default ``EncodePng``).

    Returns:
        A scalar string tensor, the PNG file's bytes.
    """
    if not -1 <= compression <= 9:
        raise ValueError("compression must be in [-1, 9], got %r" % (compression,))
    return apply_op(_encode_png, [image], attrs={"compression": int(compression)},
                    name=name or "EncodePng")


_encode_jpeg = define_op(
    "EncodeJpeg", inputs=("image",), outputs=("contents",),
    attrs={"format": "", "quality": 95, "progressive": False, "optimize_size": False,
           "chroma_downsampling": True, "density_unit": "in", "x_density": 300,
           "y_density": 300, "xmp_metadata": ""},
    shape_fn=_encoded_shape, dtype_fn=lambda op: [dtypes.string],
    type_constraint=(dtypes.uint8,), doc="Encodes a uint8 image as JPEG.")
not_differentiable("EncodeJpeg")


def encode_jpeg(image, format="", quality=95, progressive=False,  # noqa: A002 - TF's name
                optimize_size=False, chroma_downsampling=True, density_unit="in",
                x_density=300, y_density=300, xmp_metadata="", name=None):
    """JPEG-encodes a uint8 ``image`` with 1 or 3 channels (``tf.image.encode_jpeg``).

    Args:
        image: a uint8 tensor ``[height, width, channels]``.
        format: "" (by the channel count), "grayscale" or "rgb".
        quality: 0-100.
        progressive, optimize_size: libjpeg's options of those names.
        chroma_downsampling: 4:2:0 chroma subsampling (False: 4:4:4).
        density_unit, x_density, y_density: the resolution stored in the
            file ("in" or "cm").
        xmp_metadata: accepted for TF compatibility; not written.
        name: the op name (default ``EncodeJpeg``).

    Returns:
        A scalar string tensor, the JPEG file's bytes.
    """
    if format not in ("", "grayscale", "rgb"):
        raise ValueError("format must be '', 'grayscale' or 'rgb', got %r" % (format,))
    if not 0 <= quality <= 100:
        raise ValueError("quality must be in [0, 100], got %r" % (quality,))
    if density_unit not in ("in", "cm"):
        raise ValueError("density_unit must be 'in' or 'cm', got %r" % (density_unit,))
    attrs = {"format": format, "quality": int(quality), "progressive": bool(progressive),
             "optimize_size": bool(optimize_size),
             "chroma_downsampling": bool(chroma_downsampling), "density_unit": density_unit,
             "x_density": int(x_density), "y_density": int(y_density),
             "xmp_metadata": xmp_metadata}
    return apply_op(_encode_jpeg, [image], attrs=attrs, name=name or "EncodeJpeg")


# ---- resizing -----------------------------------------------------------------------------------
class ResizeMethod(enum.IntEnum):
    """``tf.image.ResizeMethod`` of TF1: the ``method`` of :func:`resize_images`."""

    BILINEAR = 0
    NEAREST_NEIGHBOR = 1
    BICUBIC = 2
    AREA = 3


def _resized_shape(op):
    """``[batch, new_height, new_width, channels]`` from a 4-D image and a 2-vector size."""
    images, size = op.inputs[0], op.inputs[1]
    _check_rank(images, 4, "images")
    _check_rank(size, 1, "size")
    if size.shape.ndims == 1 and size.shape[0].value not in (None, 2):
        raise ValueError("Dimension must be 2 but is %d (size)" % size.shape[0].value)
    new_size = constant_value_as_shape(size).with_rank(2) if size.shape.ndims else None
    batch = channels = None
    if images.shape.ndims == 4:
        batch, _, _, channels = images.shape.as_list()
    height, width = new_size.as_list() if new_size is not None else (None, None)
    return [TensorShape([batch, height, width, channels])]


def _resize_op(name, dtype_fn, doc):
    return define_op(
        name, inputs=("images", "size"), outputs=("resized_images",),
        attrs={"align_corners": False, "half_pixel_centers": False}, shape_fn=_resized_shape,
        dtype_fn=dtype_fn, type_constraint=RESIZE_TYPES, stacklevel=2, doc=doc)


def _resize_attrs(align_corners, half_pixel_centers):
    return {"align_corners": bool(align_corners), "half_pixel_centers": bool(half_pixel_centers)}


def _size_tensor(size):
    return convert_to_tensor(size, dtype=dtypes.int32, name="size")


_resize_bilinear = _resize_op("ResizeBilinear", lambda op: [dtypes.float32],
                              "Resizes images by bilinear interpolation; float32 output.")


def resize_bilinear(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """Resizes ``images`` to ``size`` by bilinear interpolation (``tf.image.resize_bilinear``).

    Args:
        images: a 4-D tensor ``[batch, height, width, channels]``.
        size: ``[new_height, new_width]``, an int32 2-vector.
        align_corners: map the corner pixels of input and output onto each other.
        name: the op name (default ``ResizeBilinear``).
        half_pixel_centers: TF2's sampling, ``x = (i + 0.5) * scale - 0.5``.

    Returns:
        A float32 tensor ``[batch, new_height, new_width, channels]``.

    Raises:
        InvalidArgumentError: at run time, for a size that is not positive,
            or both ``align_corners`` and ``half_pixel_centers``.

    Example:
        >>> x = tf.constant([[[[0.], [1.], [2.]]]])       # 1 x 1 x 3 x 1
        >>> sess.run(tf.image.resize_bilinear(x, [1, 6]))[0, 0, :, 0]
        array([0. , 0.5, 1. , 1.5, 2. , 2. ], dtype=float32)
    """
    return apply_op(_resize_bilinear, [images, _size_tensor(size)],
                    attrs=_resize_attrs(align_corners, half_pixel_centers),
                    name=name or "ResizeBilinear")


_resize_bilinear_grad = define_op(
    "ResizeBilinearGrad", inputs=("grads", "original_image"), outputs=("output",),
    attrs={"align_corners": False, "half_pixel_centers": False},
    shape_fn=lambda op: [op.inputs[1].shape], dtype_fn=lambda op: [op.inputs[1].dtype.base_dtype],
    type_constraint=(dtypes.float32,),
    doc="The gradient of ResizeBilinear with respect to its images.")


def resize_bilinear_grad(grads, original_image, align_corners=False, half_pixel_centers=False,
                         name=None):
    """The gradient of :func:`resize_bilinear` with respect to ``original_image``.

    Each pixel of ``grads`` (float32, the resized shape) is shared among the
    four input pixels it was interpolated from, by the same weights.

    Returns:
        A tensor of the shape and dtype of ``original_image``.
    """
    return apply_op(_resize_bilinear_grad, [grads, original_image],
                    attrs=_resize_attrs(align_corners, half_pixel_centers),
                    name=name or "ResizeBilinearGrad")


def _sampling_attrs(op):
    return {name: op.get_attr(name) for name in ("align_corners", "half_pixel_centers")}


@gradient("ResizeBilinear")
def _resize_bilinear_gradient(op, grad):
    """Each output pixel's gradient goes back to its four neighbours, by their weights."""
    image = op.inputs[0]
    if not image.dtype.base_dtype.is_floating:
        return [None, None]  # TF: no gradient into integer images
    return [resize_bilinear_grad(grad, image, **_sampling_attrs(op)), None]


@gradient("ResizeBilinearGrad")
def _resize_bilinear_grad_gradient(op, grad):
    """The backprop is linear in ``grads``: its adjoint is the resize itself."""
    size = array_ops.shape(op.inputs[0])[1:3]
    return [resize_bilinear(grad, size, **_sampling_attrs(op)), None]


_resize_nearest_neighbor = _resize_op(
    "ResizeNearestNeighbor", None, "Resizes images by picking the nearest input pixel.")


def resize_nearest_neighbor(images, size, align_corners=False, name=None,
                            half_pixel_centers=False):
    """Resizes ``images`` to ``size`` by nearest neighbour (``tf.image.resize_nearest_neighbor``).

    Arguments as in :func:`resize_bilinear`; the result keeps the dtype of
    ``images``.  Output pixel ``i`` copies input pixel ``floor(i * scale)``
    (``round`` with ``align_corners``).
    """
    return apply_op(_resize_nearest_neighbor, [images, _size_tensor(size)],
                    attrs=_resize_attrs(align_corners, half_pixel_centers),
                    name=name or "ResizeNearestNeighbor")


_resize_nearest_neighbor_grad = define_op(
    "ResizeNearestNeighborGrad", inputs=("grads", "size"), outputs=("output",),
    attrs={"align_corners": False, "half_pixel_centers": False}, shape_fn=_resized_shape,
    type_constraint=(dtypes.int8, dtypes.int32, dtypes.float16, dtypes.float32, dtypes.float64),
    doc="The gradient of ResizeNearestNeighbor: each output's gradient summed into its source.")


def resize_nearest_neighbor_grad(grads, size, align_corners=False, half_pixel_centers=False,
                                 name=None):
    """The gradient of :func:`resize_nearest_neighbor` for an image of ``size`` ``[h, w]``.

    Each pixel of ``grads`` is added to the input pixel it was copied from.
    """
    return apply_op(_resize_nearest_neighbor_grad, [grads, _size_tensor(size)],
                    attrs=_resize_attrs(align_corners, half_pixel_centers),
                    name=name or "ResizeNearestNeighborGrad")


@gradient("ResizeNearestNeighbor")
def _resize_nearest_neighbor_gradient(op, grad):
    image = op.inputs[0]
    if not image.dtype.base_dtype.is_floating:
        return [None, None]
    if image.shape[1:3].is_fully_defined():
        image_size = image.shape[1:3].as_list()
    else:
        image_size = array_ops.shape(image)[1:3]
    return [resize_nearest_neighbor_grad(grad, image_size, **_sampling_attrs(op)), None]


@gradient("ResizeNearestNeighborGrad")
def _resize_nearest_neighbor_grad_gradient(op, grad):
    """The backprop is linear in ``grads``: its adjoint is the resize itself."""
    size = array_ops.shape(op.inputs[0])[1:3]
    return [resize_nearest_neighbor(grad, size, **_sampling_attrs(op)), None]


_RESIZE_FUNCTIONS = {ResizeMethod.BILINEAR: resize_bilinear,
                     ResizeMethod.NEAREST_NEIGHBOR: resize_nearest_neighbor}


def resize_images(images, size, method=ResizeMethod.BILINEAR, align_corners=False,
                  preserve_aspect_ratio=False, name=None):
    """Resizes one image (3-D) or a batch (4-D) to ``size`` (TF1's ``tf.image.resize_images``).

    When the new size equals the known old one the images are returned as
    they are (no resize, so no conversion to float), as in TF.

    Args:
        images: ``[height, width, channels]`` or ``[batch, height, width, channels]``.
        size: ``[new_height, new_width]``: a list or an int32 tensor.
        method: a :class:`ResizeMethod`: ``BILINEAR`` (float32 output) or
            ``NEAREST_NEIGHBOR`` (the input's dtype).
        align_corners: see :func:`resize_bilinear`.
        preserve_aspect_ratio: scale to the largest size that fits in ``size``
            keeping the aspect ratio (needs a constant ``size`` and known
            image dimensions).
        name: the name scope (default ``resize``).

    Returns:
        The resized image(s), of the rank of ``images``.

    Raises:
        ValueError: for images of rank other than 3 or 4, or a ``size`` that
            is not a 2-vector.
        NotImplementedError: for ``BICUBIC`` and ``AREA``, which minitf
            does not provide.
    """
    with name_scope(name, "resize", [images, size]):
        images = convert_to_tensor(images, name="images")
        if images.shape.ndims is None:
            raise ValueError("'images' contains no shape.")
        is_batch = images.shape.ndims == 4
        if images.shape.ndims == 3:
            images = array_ops.expand_dims(images, 0)
        elif not is_batch:
            raise ValueError("'images' must have either 3 or 4 dimensions.")
        _, height, width, _ = images.shape.as_list()
        try:
            size = convert_to_tensor(size, dtypes.int32, name="size")
        except (TypeError, ValueError):
            raise ValueError("'size' must be a 1-D int32 Tensor") from None
        if not size.shape.is_compatible_with([2]):
            raise ValueError("'size' must be a 1-D Tensor of 2 elements: new_height, new_width")
        new_height, new_width = constant_value_as_shape(size).as_list()
        if preserve_aspect_ratio:
            size, new_height, new_width = _fitted_size(height, width, new_height, new_width)
        if None not in (height, width) and (new_height, new_width) == (height, width):
            return images if is_batch else array_ops.squeeze(images, axis=[0])
        resize = _RESIZE_FUNCTIONS.get(method)
        if resize is None:
            raise NotImplementedError(
                "Resize method %r is not provided by minitf (BILINEAR and NEAREST_NEIGHBOR "
                "are)." % (method,))
        images = resize(images, size, align_corners=align_corners)
        images.set_shape([None, new_height, new_width, None])
        return images if is_batch else array_ops.squeeze(images, axis=[0])


def _fitted_size(height, width, new_height, new_width):
    """The largest size within ``new_*`` with the aspect ratio of ``height x width``."""
    if None in (height, width, new_height, new_width):
        raise ValueError("preserve_aspect_ratio needs known image dimensions and a constant "
                         "size in minitf")
    scale = min(new_height / height, new_width / width)
    fitted = [max(int(round(height * scale)), 1), max(int(round(width * scale)), 1)]
    return convert_to_tensor(fitted, dtypes.int32, name="size"), fitted[0], fitted[1]


__all__ = ["ResizeMethod", "convert_image_dtype", "decode_image", "decode_jpeg", "decode_png",
           "encode_jpeg", "encode_png", "resize_bilinear", "resize_bilinear_grad", "resize_images",
           "resize_nearest_neighbor", "resize_nearest_neighbor_grad"]
