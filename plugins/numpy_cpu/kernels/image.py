"""CPU kernels of the image ops: codecs on Pillow, resizing in NumPy.

**Codecs.**  Pillow (libjpeg, zlib) reads and writes the bytes; the kernels
turn its images into ``[height, width, channels]`` arrays and apply TF's
channel rules: gray to RGB repeats the value, RGB to gray is
``(9798 R + 19235 G + 3735 B) >> 15`` (0.299/0.587/0.114 in 15-bit fixed
point, rounded down, as TF's decoder computes it), a missing alpha channel
is opaque (255) and an unwanted one is dropped.  A JPEG asked for one
channel is decoded to gray by libjpeg itself (its luma channel), as in TF.
Pillow is imported when a codec first runs, not with the plugin.

**Resizing.**  Each axis is resampled independently: :func:`_source_coords`
gives, for every output index, the input coordinate it samples, computed in
float32 as TF's kernels do, so results agree with TF to the last bit in
the common cases.  Bilinear interpolation reads the four neighbours with
fancy indexing; the gradient kernels scatter with ``np.add.at`` using the
same indices and weights.
"""

import io

import numpy as np

from minitf.plugin import errors
from minitf_numpy_cpu.kernels.table import kernel

_UNKNOWN_FORMAT = "Unknown image file format. One of JPEG, PNG, GIF, BMP required."
_FORMATS = ("JPEG", "PNG", "GIF", "BMP")
_GRAY_WEIGHTS = np.array([9798, 19235, 3735], dtype=np.int64)  # sum 2**15


# ---- decoding -----------------------------------------------------------------------------------
def _open(ctx, contents):
    """The Pillow image of ``contents`` (not yet decoded), or TF's ``InvalidArgumentError``."""
    from PIL import Image, UnidentifiedImageError
    data = contents.item() if isinstance(contents, np.ndarray) else contents
    try:
        image = Image.open(io.BytesIO(data))
    except (UnidentifiedImageError, OSError, ValueError):
        raise ctx.invalid_argument(_UNKNOWN_FORMAT) from None
    if image.format not in _FORMATS:
        raise ctx.invalid_argument(_UNKNOWN_FORMAT)
    return image


def _load(ctx, image):
    """Decodes ``image``'s pixels; truncated or corrupt data is an ``InvalidArgumentError``."""
    try:
        image.load()
    except (OSError, SyntaxError, ValueError) as error:
        raise ctx.invalid_argument("Invalid %s data: %s" % (image.format, error)) from None
    return image


def _native_array(image):
    """``image`` as ``[h, w, c]`` with c = 1 (gray), 2 (gray, alpha), 3 (RGB) or 4 (RGBA).

    16-bit gray images stay uint16; everything else is uint8.
    """
    mode = image.mode
    if mode in ("I;16", "I;16B", "I;16L", "I"):
        return np.asarray(image).astype(np.uint16)[:, :, None]
    if mode == "P":
        image = image.convert("RGBA" if "transparency" in image.info else "RGB")
    elif mode in ("1", "CMYK", "YCbCr", "LAB", "HSV", "F"):
        image = image.convert("L" if mode in ("1", "F") else "RGB")
    elif mode == "PA":
        image = image.convert("RGBA")
    array = np.asarray(image)
    return array[:, :, None] if array.ndim == 2 else array


def _gray(rgb):
    """TF's luma of an RGB array, rounded down: ``(0.299 R + 0.587 G + 0.114 B)``."""
    weighted = rgb.astype(np.int64) @ _GRAY_WEIGHTS
    return (weighted >> 15).astype(rgb.dtype)


def _with_channels(array, channels):
    """``array`` ``[h, w, c]`` converted to ``channels`` channels (0: unchanged)."""
    have = array.shape[-1]
    if channels == 0 or channels == have:
        return array
    color = array[..., :3] if have >= 3 else np.repeat(array[..., :1], 3, axis=-1)
    opaque = np.iinfo(array.dtype).max
    alpha = (array[..., -1:] if have in (2, 4)
             else np.full(array.shape[:-1] + (1,), opaque, dtype=array.dtype))
    if channels == 1:
        return array[..., :1] if have <= 2 else _gray(color)[..., None]
    if channels == 2:
        gray = array[..., :1] if have <= 2 else _gray(color)[..., None]
        return np.concatenate([gray, alpha], axis=-1)
    if channels == 3:
        return color
    return np.concatenate([color, alpha], axis=-1)


def _frames(image):
    """Every frame of an animated image (a GIF), each as a native array."""
    frames = []
    for index in range(getattr(image, "n_frames", 1)):
        image.seek(index)
        frames.append(_native_array(image.convert("RGB")))
    return np.stack(frames)


def _decode(ctx, image, channels, ratio=1):
    """The decoded ``[h, w, c]`` uint8/uint16 array of an opened image of any supported format."""
    if image.format == "JPEG":
        mode = {1: "L", 3: "RGB"}.get(channels, image.mode)
        size = (max(1, image.size[0] // ratio), max(1, image.size[1] // ratio))
        image.draft(mode, size)  # libjpeg decodes straight to gray / to a scaled size
    array = _native_array(_load(ctx, image))
    return _with_channels(array, channels)


@kernel("DecodeJpeg")
def decode_jpeg(ctx, contents, channels, ratio, fancy_upscaling, try_recover_truncated,
                acceptable_fraction, dct_method):
    return _as_uint8(_decode(ctx, _open(ctx, contents), channels, ratio))


@kernel("DecodePng")
def decode_png(ctx, contents, channels, dtype):
    array = _decode(ctx, _open(ctx, contents), channels)
    if ctx.output_dtypes[0] == np.uint16:
        return array if array.dtype == np.uint16 else array.astype(np.uint16) * 257
    return _as_uint8(array)


@kernel("DecodeImage")
def decode_image(ctx, contents, channels, dtype, expand_animations):
    image = _open(ctx, contents)
    if image.format == "GIF":
        if channels not in (0, 3):
            raise ctx.invalid_argument("channels must be 0 or 3 for GIF, got %d" % channels)
        frames = _frames(image)
        return frames if expand_animations else frames[0]
    return _as_uint8(_decode(ctx, image, channels))


def _as_uint8(array):
    """A 16-bit image reduced to 8 bits (the high byte), as TF's uint8 decoders do."""
    return (array >> 8).astype(np.uint8) if array.dtype == np.uint16 else array


# ---- encoding -----------------------------------------------------------------------------------
def _encoded(image, format_name, **options):
    buffer = io.BytesIO()
    image.save(buffer, format=format_name, **options)
    return buffer.getvalue()


def _pil_image(image):
    """The Pillow image of an ``[h, w, c]`` array (its mode follows from shape and dtype)."""
    from PIL import Image
    return Image.fromarray(np.ascontiguousarray(image if image.shape[-1] > 1 else image[..., 0]))


@kernel("EncodePng")
def encode_png(ctx, image, compression):
    channels = image.shape[-1]
    if channels not in (1, 2, 3, 4):
        raise ctx.invalid_argument("image must have 1, 2, 3, or 4 channels, got %d" % channels)
    if image.dtype == np.uint16 and channels != 1:
        raise ctx.error(errors.UnimplementedError,
                        "minitf encodes 16-bit PNGs with 1 channel only (Pillow writes no "
                        "16-bit colour PNG); got %d channels" % channels)
    level = 6 if compression == -1 else compression  # zlib's default level
    return _encoded(_pil_image(image), "PNG", compress_level=level)


@kernel("EncodeJpeg")
def encode_jpeg(ctx, image, format, quality, progressive, optimize_size, chroma_downsampling,
                density_unit, x_density, y_density, xmp_metadata):
    channels = image.shape[-1]
    wanted = {"": channels, "grayscale": 1, "rgb": 3}[format]
    if channels != wanted or channels not in (1, 3):
        raise ctx.invalid_argument("image must have 1 or 3 channels (and match format %r), got "
                                   "%d" % (format, channels))
    per_inch = 2.54 if density_unit == "cm" else 1.0
    return _encoded(_pil_image(image), "JPEG", quality=quality, progressive=progressive,
                    optimize=optimize_size, subsampling=2 if chroma_downsampling else 0,
                    dpi=(x_density * per_inch, y_density * per_inch))


# ---- resizing -----------------------------------------------------------------------------------
def _check_resize(ctx, images, size, align_corners, half_pixel_centers):
    if np.ndim(images) != 4:
        raise ctx.invalid_argument("input must be 4-dimensional%s" % (np.shape(images),))
    if np.shape(size) != (2,):
        raise ctx.invalid_argument("shape_t must be 1-dimensional and have 2 elements, got %s"
                                   % (np.shape(size),))
    if align_corners and half_pixel_centers:
        raise ctx.invalid_argument("If half_pixel_centers is True, align_corners must be False.")
    height, width = (int(s) for s in size)
    if height <= 0 or width <= 0:
        raise ctx.invalid_argument("output dimensions must be positive, got %s"
                                   % ([height, width],))
    if 0 in images.shape[1:3]:
        raise ctx.invalid_argument("input image must be of non-zero size")
    return height, width


def _scale(in_size, out_size, align_corners):
    """TF's ``CalculateResizeScale``, in float32."""
    if align_corners and out_size > 1:
        return np.float32(in_size - 1) / np.float32(out_size - 1)
    return np.float32(in_size) / np.float32(out_size)


def _source_coords(out_size, in_size, align_corners, half_pixel_centers, bilinear):
    """The float32 input coordinate each output index samples, along one axis."""
    scale = _scale(in_size, out_size, align_corners)
    index = np.arange(out_size, dtype=np.float32)
    if not half_pixel_centers:
        return index * scale
    centred = (index + np.float32(0.5)) * scale
    return centred - np.float32(0.5) if bilinear else centred


def _bilinear_axis(out_size, in_size, align_corners, half_pixel_centers):
    """Per output index: the lower and upper input index and the upper one's weight."""
    x = _source_coords(out_size, in_size, align_corners, half_pixel_centers, bilinear=True)
    floor = np.floor(x)
    lower = np.maximum(floor, 0).astype(np.int64)
    upper = np.minimum(np.ceil(x), in_size - 1).astype(np.int64)
    return lower, upper, (x - floor).astype(np.float32)


def _nearest_axis(out_size, in_size, align_corners, half_pixel_centers):
    """Per output index: the input index it copies (``round`` with ``align_corners``)."""
    x = _source_coords(out_size, in_size, align_corners, half_pixel_centers, bilinear=False)
    picked = np.floor(x + np.float32(0.5)) if align_corners else np.floor(x)  # roundf: x >= 0
    return np.clip(picked.astype(np.int64), 0, in_size - 1)


@kernel("ResizeBilinear")
def resize_bilinear(ctx, images, size, align_corners, half_pixel_centers):
    height, width = _check_resize(ctx, images, size, align_corners, half_pixel_centers)
    top, bottom, y_lerp = _bilinear_axis(height, images.shape[1], align_corners,
                                         half_pixel_centers)
    left, right, x_lerp = _bilinear_axis(width, images.shape[2], align_corners,
                                         half_pixel_centers)
    x_lerp = x_lerp[:, None]
    y_lerp = y_lerp[:, None, None]
    images = images.astype(np.float32)
    top_rows, bottom_rows = images[:, top], images[:, bottom]
    top_value = top_rows[:, :, left] + (top_rows[:, :, right] - top_rows[:, :, left]) * x_lerp
    bottom_value = (bottom_rows[:, :, left]
                    + (bottom_rows[:, :, right] - bottom_rows[:, :, left]) * x_lerp)
    return top_value + (bottom_value - top_value) * y_lerp


@kernel("ResizeBilinearGrad")
def resize_bilinear_grad(ctx, grads, original_image, align_corners, half_pixel_centers):
    """Scatters each output pixel's gradient onto its four neighbours by their weights."""
    _, in_height, in_width, _ = original_image.shape
    top, bottom, y_lerp = _bilinear_axis(grads.shape[1], in_height, align_corners,
                                         half_pixel_centers)
    left, right, x_lerp = _bilinear_axis(grads.shape[2], in_width, align_corners,
                                         half_pixel_centers)
    dtype = ctx.output_dtypes[0]
    output = np.zeros(original_image.shape, dtype=dtype)
    grads = grads.astype(dtype)
    y_lerp, x_lerp = y_lerp.astype(dtype), x_lerp.astype(dtype)
    for rows, row_weight in ((top, 1 - y_lerp), (bottom, y_lerp)):
        for cols, col_weight in ((left, 1 - x_lerp), (right, x_lerp)):
            weight = row_weight[:, None, None] * col_weight[None, :, None]
            np.add.at(output, (slice(None), rows[:, None], cols[None, :]), grads * weight)
    return output


@kernel("ResizeNearestNeighbor")
def resize_nearest_neighbor(ctx, images, size, align_corners, half_pixel_centers):
    height, width = _check_resize(ctx, images, size, align_corners, half_pixel_centers)
    rows = _nearest_axis(height, images.shape[1], align_corners, half_pixel_centers)
    cols = _nearest_axis(width, images.shape[2], align_corners, half_pixel_centers)
    return images[:, rows][:, :, cols]


@kernel("ResizeNearestNeighborGrad")
def resize_nearest_neighbor_grad(ctx, grads, size, align_corners, half_pixel_centers):
    """Sums each output pixel's gradient into the input pixel it was copied from."""
    height, width = _check_resize(ctx, grads, size, align_corners, half_pixel_centers)
    rows = _nearest_axis(grads.shape[1], height, align_corners, half_pixel_centers)
    cols = _nearest_axis(grads.shape[2], width, align_corners, half_pixel_centers)
    output = np.zeros((grads.shape[0], height, width, grads.shape[3]), dtype=grads.dtype)
    np.add.at(output, (slice(None), rows[:, None], cols[None, :]), grads)
    return output


# ---- colour spaces ------------------------------------------------------------------------------
# The formulas of TF's kernels (colorspace_op.h, adjust_hue_op.cc,
# adjust_saturation_op.cc), vectorised over the pixels of the last axis.
def _rgb_to_hsv(rgb):
    """``(h, s, v)`` of ``rgb`` ``[..., 3]``: RGBToHSV's formulas, ties as TF's ``select``s."""
    red, green, blue = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    value = rgb.max(axis=-1)
    v_range = value - rgb.min(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        saturation = np.where(value > 0, v_range / value, 0).astype(rgb.dtype)
        norm = (1 / v_range) * (1 / 6)
        hue = np.where(red == value, norm * (green - blue),
                       np.where(green == value, norm * (blue - red) + 2 / 6,
                                norm * (red - green) + 4 / 6))
    hue = np.where(v_range > 0, hue, 0)
    hue = np.where(hue < 0, hue + 1, hue).astype(rgb.dtype)
    return hue, saturation, value


def _hsv_to_rgb(hue, saturation, value, dtype):
    """RGB ``[..., 3]`` of HSV channels: HSVToRGB's formulas (no modulo of the hue, as TF)."""
    dh = hue * 6
    dr = np.clip(np.abs(dh - 3) - 1, 0, 1)
    dg = np.clip(2 - np.abs(dh - 2), 0, 1)
    db = np.clip(2 - np.abs(dh - 4), 0, 1)
    one_s = 1 - saturation
    return np.stack([(one_s + saturation * d) * value for d in (dr, dg, db)],
                    axis=-1).astype(dtype)


@kernel("RGBToHSV")
def rgb_to_hsv(ctx, images):
    return np.stack(_rgb_to_hsv(images), axis=-1)


@kernel("HSVToRGB")
def hsv_to_rgb(ctx, images):
    return _hsv_to_rgb(images[..., 0], images[..., 1], images[..., 2], images.dtype)


def _check_rgb(ctx, images):
    if images.ndim < 3:
        raise ctx.invalid_argument("input must be at least 3-D, got shape %s"
                                   % (list(images.shape),))
    if images.shape[-1] != 3:
        raise ctx.invalid_argument("input must have 3 channels but instead has %d channels."
                                   % images.shape[-1])


def _hue_category_to_rgb(h, v_min, v_max):
    """adjust_hue_op.cc's ``hv_range_to_rgb``: ``h`` in ``[0, 6)`` back to RGB."""
    category = h.astype(np.int64)
    ratio = h - category
    ratio = np.where(category % 2 == 0, ratio, 1 - ratio)
    v_mid = v_min + ratio * (v_max - v_min)
    # (red, green, blue) of each hue category: which of max, mid, min it is.
    order = {0: (v_max, v_mid, v_min), 1: (v_mid, v_max, v_min), 2: (v_min, v_max, v_mid),
             3: (v_min, v_mid, v_max), 4: (v_mid, v_min, v_max), 5: (v_max, v_min, v_mid)}
    choices = [np.stack(order[c], axis=-1) for c in range(6)]
    return np.choose(np.clip(category, 0, 5)[..., None], choices)


@kernel("AdjustHue")
def adjust_hue(ctx, images, delta):
    """Turns each pixel's hue, in adjust_hue_op.cc's ``[0, 6)`` scale.

    The kernel's ``rgb_to_hv_range`` gives the hue as a category (which
    channel is largest and which smallest) plus the middle channel's
    position between them; only the hue moves, min and max stay.
    """
    _check_rgb(ctx, images)
    rgb = images.astype(np.float32)
    red, green, blue = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    v_max, v_min = rgb.max(axis=-1), rgb.min(axis=-1)
    v_mid = rgb.sum(axis=-1) - v_max - v_min
    # The six orders of r, g, b (TF's comparisons; ties may land on either side).
    category = np.select(
        [(red < green) & (blue < red), (red < green) & (blue > green), red < green,
         blue < green, blue > red],
        [1, 3, 2, 0, 4], default=5)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (v_mid - v_min) / (v_max - v_min)
    hue = category + np.where(category % 2 == 0, ratio, 1 - ratio)
    hue = np.where(v_max == v_min, 0, hue).astype(np.float32)
    hue = np.mod(hue + np.float32(delta) * 6, 6).astype(np.float32)
    hue = np.where(hue >= 6, 0, hue)
    return _hue_category_to_rgb(hue, v_min, v_max).astype(images.dtype)


@kernel("AdjustSaturation")
def adjust_saturation(ctx, images, scale):
    """Scales each pixel's saturation in HSV and converts back (adjust_saturation_op.cc)."""
    _check_rgb(ctx, images)
    rgb = images.astype(np.float32)
    hue, saturation, value = _rgb_to_hsv(rgb)
    saturation = np.clip(saturation * np.float32(scale), 0, 1)
    return _hsv_to_rgb_wheel(hue, saturation, value).astype(images.dtype)


def _hsv_to_rgb_wheel(hue, saturation, value):
    """adjust_saturation_op.cc's ``hsv_to_rgb``: the textbook sector formula."""
    chroma = saturation * value
    m = value - chroma
    dh = hue * 6
    category = dh.astype(np.int64)
    x = chroma * (1 - np.abs(np.mod(dh, 2) - 1))
    zero = np.zeros_like(chroma)
    order = {0: (chroma, x, zero), 1: (x, chroma, zero), 2: (zero, chroma, x),
             3: (zero, x, chroma), 4: (x, zero, chroma), 5: (chroma, zero, x)}
    choices = [np.stack(order[c], axis=-1) for c in range(6)] + [np.stack([zero] * 3, -1)]
    category = np.where((category >= 0) & (category <= 5), category, 6)
    return np.choose(category[..., None], choices) + m[..., None]
