"""``tf.image``: codecs, resizing (TF1's sampling rules), dtype conversion, augmentation.

Expected values are computed by hand from TF's documented formulas, or were
produced once by TensorFlow (the files of ``tests/data/make_tf_images.py``).
Resize numbers below marked "TF" are what TF 1.x/2.x's kernels print for the
same input.
"""

import io
import pathlib

import numpy as np
import pytest

import minitf as tf
from tests.conftest import run_on, run_without_gpu_kernel
from tests.data.make_tf_images import source_pixels

DATA = pathlib.Path(__file__).parent / "data"


def _run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


def _png(array):
    with tf.Session() as sess:
        return sess.run(tf.image.encode_png(array))


# ---- codecs -----------------------------------------------------------------------------------
@pytest.mark.parametrize("channels", [1, 2, 3, 4])
def test_png_round_trip_is_lossless(channels):
    image = np.random.default_rng(channels).integers(0, 256, (5, 7, channels), dtype=np.uint8)
    contents = tf.image.encode_png(image)
    assert contents.dtype == tf.string and contents.shape == []
    decoded = _run(tf.image.decode_png(contents))
    assert decoded.dtype == np.uint8
    np.testing.assert_array_equal(decoded, image)


def test_png_16_bit_gray_round_trip():
    image = np.array([[[0], [1000]], [[65535], [300]]], dtype=np.uint16)
    decoded = _run(tf.image.decode_png(tf.image.encode_png(image), dtype=tf.uint16))
    assert decoded.dtype == np.uint16
    np.testing.assert_array_equal(decoded, image)
    # Read as uint8, a 16-bit image keeps its high byte.
    np.testing.assert_array_equal(_run(tf.image.decode_png(_png(image))), image >> 8)


def test_png_channel_conversions_follow_tf():
    rgba = np.array([[[0, 20, 40, 7], [240, 4, 24, 9]]], dtype=np.uint8)
    png = _png(rgba)
    gray, gray_alpha, rgb = _run([tf.image.decode_png(png, channels=c) for c in (1, 2, 3)])
    # TF: floor(0.299 R + 0.587 G + 0.114 B) -> 16 and 76 (not Pillow's 17 and 77).
    np.testing.assert_array_equal(gray[..., 0], [[16, 76]])
    np.testing.assert_array_equal(gray_alpha, [[[16, 7], [76, 9]]])
    np.testing.assert_array_equal(rgb, rgba[..., :3])  # alpha dropped
    gray_png = _png(np.array([[[9], [200]]], dtype=np.uint8))
    as_rgb, as_rgba = _run([tf.image.decode_png(gray_png, channels=c) for c in (3, 4)])
    np.testing.assert_array_equal(as_rgb, [[[9, 9, 9], [200, 200, 200]]])
    np.testing.assert_array_equal(as_rgba, [[[9, 9, 9, 255], [200, 200, 200, 255]]])


def test_decode_jpeg_of_a_tensorflow_file_matches_tensorflow():
    contents = (DATA / "tf_image.jpg").read_bytes()
    rgb, gray, native = _run([tf.image.decode_jpeg(contents, channels=3),
                              tf.image.decode_jpeg(contents, channels=1),
                              tf.image.decode_jpeg(contents)])
    assert rgb.shape == (6, 8, 3) and gray.shape == (6, 8, 1) and native.shape == (6, 8, 3)
    # Bit-exact with TF's accurate DCT; within a few levels of TF's default fast DCT.
    np.testing.assert_array_equal(rgb, np.load(DATA / "tf_image_rgb_accurate.npy"))
    assert np.abs(rgb.astype(int) - np.load(DATA / "tf_image_rgb.npy")).max() <= 4
    assert np.abs(gray.astype(int) - np.load(DATA / "tf_image_gray.npy")).max() <= 2
    # And near the pixels TF encoded (4:2:0 chroma subsampling blurs the colour edge).
    assert np.abs(rgb.astype(int) - source_pixels()).mean() < 25


def test_decode_png_of_a_tensorflow_file():
    decoded = _run(tf.image.decode_png((DATA / "tf_image.png").read_bytes()))
    np.testing.assert_array_equal(decoded, source_pixels())


def test_every_decoder_reads_every_format_as_in_tf():
    jpeg, png = (DATA / "tf_image.jpg").read_bytes(), (DATA / "tf_image.png").read_bytes()
    from_png, from_jpeg = _run([tf.image.decode_jpeg(png), tf.image.decode_png(jpeg)])
    np.testing.assert_array_equal(from_png, source_pixels())
    np.testing.assert_array_equal(from_jpeg, np.load(DATA / "tf_image_rgb_accurate.npy"))


def test_encode_jpeg_writes_a_jpeg_close_to_the_image():
    from PIL import Image
    image = source_pixels()
    contents = _run(tf.image.encode_jpeg(image, quality=95, chroma_downsampling=False))
    assert contents[:2] == b"\xff\xd8"
    pillow = np.asarray(Image.open(io.BytesIO(contents)))
    assert np.abs(pillow.astype(int) - image).mean() < 3
    gray = _run(tf.image.decode_jpeg(tf.image.encode_jpeg(image[..., :1], format="grayscale")))
    assert gray.shape == (6, 8, 1)


def test_decode_image_dispatches_on_the_bytes():
    from PIL import Image
    frames = [Image.fromarray(np.full((3, 4, 3), v, np.uint8)) for v in (10, 200)]
    buffer = io.BytesIO()
    frames[0].save(buffer, format="GIF", save_all=True, append_images=frames[1:])
    gif = buffer.getvalue()
    png = (DATA / "tf_image.png").read_bytes()
    animated = tf.image.decode_image(gif)
    assert animated.shape.ndims is None  # TF: a GIF may be 4-D
    first = tf.image.decode_image(gif, expand_animations=False)
    assert first.shape.as_list() == [None, None, None]
    as_float = tf.image.decode_image(png, dtype=tf.float32)
    animated, first, as_float = _run([animated, first, as_float])
    assert animated.shape == (2, 3, 4, 3) and first.shape == (3, 4, 3)
    assert animated[0, 0, 0, 0] < 50 < animated[1, 0, 0, 0]
    np.testing.assert_allclose(as_float, source_pixels() / 255.0, rtol=1e-6)


def test_decoded_shapes_are_known_where_tf_knows_them():
    contents = tf.placeholder(tf.string, [])
    assert tf.image.decode_jpeg(contents).shape.as_list() == [None, None, None]
    assert tf.image.decode_jpeg(contents, channels=3).shape.as_list() == [None, None, 3]
    assert tf.image.decode_png(contents, channels=4).dtype == tf.uint8
    assert tf.image.decode_png(contents, dtype=tf.uint16).dtype == tf.uint16


def test_codec_errors():
    with pytest.raises(ValueError, match="rank 0"):
        tf.image.decode_jpeg(["a", "b"])
    with pytest.raises(ValueError, match="channels"):
        tf.image.decode_jpeg("x", channels=2)
    with pytest.raises(ValueError, match="rank 3"):
        tf.image.encode_png(np.zeros((2, 2), np.uint8))
    with pytest.raises(TypeError):
        tf.image.encode_png(np.zeros((2, 2, 1), np.float32))
    bad = tf.image.decode_jpeg(b"not an image")  # built fine: the bytes are checked when it runs
    with pytest.raises(tf.errors.InvalidArgumentError, match="Unknown image file format"):
        _run(bad)
    truncated = (DATA / "tf_image.png").read_bytes()[:40]
    with pytest.raises(tf.errors.InvalidArgumentError, match="DecodePng"):
        _run(tf.image.decode_png(truncated))


# ---- resizing ---------------------------------------------------------------------------------
X = np.arange(6, dtype=np.float32).reshape(1, 2, 3, 1)

# What TF prints for X resized to 3x5 (rows of the single channel).
BILINEAR_3x5 = {
    "legacy": [[0, 0.6, 1.2, 1.8, 2], [2, 2.6, 3.2, 3.8, 4], [3, 3.6, 4.2, 4.8, 5]],
    "align_corners": [[0, 0.5, 1, 1.5, 2], [1.5, 2, 2.5, 3, 3.5], [3, 3.5, 4, 4.5, 5]],
    "half_pixel_centers": [[0, 0.4, 1, 1.6, 2], [1.5, 1.9, 2.5, 3.1, 3.5], [3, 3.4, 4, 4.6, 5]],
}
NEAREST_3x5 = {
    "legacy": [[0, 0, 1, 1, 2], [0, 0, 1, 1, 2], [3, 3, 4, 4, 5]],
    "align_corners": [[0, 1, 1, 2, 2], [3, 4, 4, 5, 5], [3, 4, 4, 5, 5]],
    "half_pixel_centers": [[0, 0, 1, 2, 2], [3, 3, 4, 5, 5], [3, 3, 4, 5, 5]],
}


def _mode(mode):
    return {"legacy": {}, "align_corners": {"align_corners": True},
            "half_pixel_centers": {"half_pixel_centers": True}}[mode]


@pytest.mark.parametrize("mode", sorted(BILINEAR_3x5))
def test_resize_bilinear_matches_tf(device, mode):
    out = run_without_gpu_kernel(device, "ResizeBilinear",
                                 lambda x: tf.image.resize_bilinear(x, [3, 5], **_mode(mode)), X)
    assert out.dtype == np.float32 and out.shape == (1, 3, 5, 1)
    np.testing.assert_allclose(out[0, :, :, 0], BILINEAR_3x5[mode], rtol=1e-6)


@pytest.mark.parametrize("mode", sorted(NEAREST_3x5))
def test_resize_nearest_neighbor_matches_tf(device, mode):
    out = run_without_gpu_kernel(
        device, "ResizeNearestNeighbor",
        lambda x: tf.image.resize_nearest_neighbor(x, [3, 5], **_mode(mode)), X.astype(np.int32))
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out[0, :, :, 0], NEAREST_3x5[mode])


def _bilinear_reference(image, out_h, out_w):
    """TF1's legacy bilinear resize, written out loop by loop from its formula."""
    batch, in_h, in_w, channels = image.shape
    out = np.zeros((batch, out_h, out_w, channels))
    for i in range(out_h):
        y = i * in_h / out_h
        y0, y1, wy = int(np.floor(y)), min(int(np.ceil(y)), in_h - 1), y - np.floor(y)
        for j in range(out_w):
            x = j * in_w / out_w
            x0, x1, wx = int(np.floor(x)), min(int(np.ceil(x)), in_w - 1), x - np.floor(x)
            top = image[:, y0, x0] * (1 - wx) + image[:, y0, x1] * wx
            bottom = image[:, y1, x0] * (1 - wx) + image[:, y1, x1] * wx
            out[:, i, j] = top * (1 - wy) + bottom * wy
    return out


@pytest.mark.parametrize("in_size, out_size", [((4, 5), (7, 3)), ((3, 3), (1, 1)),
                                               ((2, 6), (5, 12)), ((5, 1), (2, 4))])
def test_resize_bilinear_against_the_formula(in_size, out_size):
    image = np.random.default_rng(0).integers(0, 256, (2, *in_size, 3)).astype(np.uint8)
    out = _run(tf.image.resize_bilinear(image, out_size))
    np.testing.assert_allclose(out, _bilinear_reference(image.astype(float), *out_size),
                               rtol=1e-5, atol=1e-4)


def test_resize_gradients_by_hand():
    x = tf.placeholder(tf.float32, [1, 1, 2, 1])
    # Legacy sampling of 2 -> 4 columns: x = 0, 0.5, 1, 1.5 (the last clamps to column 1),
    # so the outputs are a, (a+b)/2, b, b and d(sum)/d[a, b] = [1.5, 2.5].
    bilinear = tf.gradients(tf.reduce_sum(tf.image.resize_bilinear(x, [1, 4])), x)[0]
    # Nearest: columns floor(0, 0.5, 1, 1.5) = 0, 0, 1, 1.
    weights = tf.constant([1.0, 2.0, 3.0, 4.0], shape=[1, 1, 4, 1])
    nearest = tf.gradients(tf.reduce_sum(tf.image.resize_nearest_neighbor(x, [1, 4]) * weights),
                           x)[0]
    got = _run([bilinear, nearest], {x: [[[[1.0], [2.0]]]]})
    np.testing.assert_allclose(got[0].ravel(), [1.5, 2.5])
    np.testing.assert_allclose(got[1].ravel(), [3.0, 7.0])


def test_resize_images_tf1_api():
    image = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3)
    resized = tf.image.resize_images(image, [4, 5])
    assert resized.op.name == "resize/Squeeze" and resized.shape.as_list() == [4, 5, 3]
    assert resized.dtype == tf.float32
    same = tf.image.resize_images(image, [2, 3])  # nothing to do: no resize, no float
    assert same.dtype == tf.uint8
    nearest = tf.image.resize_images(image[None], tf.constant([4, 6]),
                                     method=tf.image.ResizeMethod.NEAREST_NEIGHBOR,
                                     align_corners=True)
    assert nearest.shape.as_list() == [1, 4, 6, 3] and nearest.dtype == tf.uint8
    size = tf.placeholder(tf.int32, [2])
    assert tf.image.resize_images(image, size).shape.as_list() == [None, None, 3]
    fitted = tf.image.resize_images(np.zeros((4, 8, 1), np.float32), [6, 6],
                                    preserve_aspect_ratio=True)
    assert fitted.shape.as_list() == [3, 6, 1]
    resized, same, nearest = _run([resized, same, nearest])
    np.testing.assert_array_equal(same, image)
    assert tf.image.ResizeMethod.BILINEAR == 0 and tf.image.ResizeMethod.AREA == 3
    np.testing.assert_array_equal(nearest[0, ::3, ::5], image[::1, ::2][[0, 1]])


def test_resize_errors():
    with pytest.raises(ValueError, match="3 or 4 dimensions"):
        tf.image.resize_images(np.zeros((2, 2), np.float32), [3, 3])
    with pytest.raises(ValueError, match="2 elements"):
        tf.image.resize_images(np.zeros((2, 2, 1), np.float32), [3, 3, 3])
    with pytest.raises(ValueError, match="rank 4"):
        tf.image.resize_bilinear(np.zeros((2, 2, 1), np.float32), [3, 3])
    with pytest.raises(NotImplementedError, match="BICUBIC|2"):
        tf.image.resize_images(np.zeros((2, 2, 1), np.float32), [3, 3],
                               method=tf.image.ResizeMethod.BICUBIC)
    both = tf.image.resize_bilinear(X, [3, 3], align_corners=True, half_pixel_centers=True)
    with pytest.raises(tf.errors.InvalidArgumentError, match="half_pixel_centers"):
        _run(both)
    size = tf.placeholder(tf.int32, [2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="positive"):
        _run(tf.image.resize_bilinear(X, size), {size: [0, 3]})


# ---- dtypes -----------------------------------------------------------------------------------
@pytest.mark.parametrize("values, source, target, saturate, expected", [
    ([0, 255, 1], tf.uint8, tf.float32, False, [0.0, 1.0, 1 / 255]),
    ([0.5, 1.0, 0.0], tf.float32, tf.uint8, False, [127, 255, 0]),  # * 255.5, then cast
    ([1.2, -0.1], tf.float32, tf.uint8, True, [255, 0]),
    ([255, 2], tf.uint8, tf.int32, False, [255 << 23, 2 << 23]),
    ([2 ** 31 - 1, 2 ** 24], tf.int32, tf.uint8, False, [255, 2]),  # floordiv by 2**23
    ([0.25], tf.float32, tf.float64, False, [0.25]),
    ([65535], tf.uint16, tf.uint8, False, [255]),
])
def test_convert_image_dtype(values, source, target, saturate, expected):
    out = tf.image.convert_image_dtype(tf.constant(values, source), target, saturate=saturate)
    assert out.dtype == target
    np.testing.assert_allclose(_run(out), expected, rtol=1e-6)


def test_convert_image_dtype_to_the_same_dtype_is_an_identity():
    x = tf.constant([1, 2], tf.uint8)
    assert tf.image.convert_image_dtype(x, tf.uint8).op.type == "Identity"
    with pytest.raises(AttributeError, match="floating point or integer"):
        tf.image.convert_image_dtype(x, tf.string)


# ---- flips, crops, pads -----------------------------------------------------------------------
IMAGE = np.arange(2 * 3 * 2, dtype=np.float32).reshape(2, 3, 2)


def test_flips():
    lr, ud, batch_lr = _run([tf.image.flip_left_right(IMAGE), tf.image.flip_up_down(IMAGE),
                             tf.image.flip_left_right(IMAGE[None])])
    np.testing.assert_array_equal(lr, IMAGE[:, ::-1])
    np.testing.assert_array_equal(ud, IMAGE[::-1])
    np.testing.assert_array_equal(batch_lr, IMAGE[None, :, ::-1])
    with pytest.raises(ValueError, match="at least three-dimensional"):
        tf.image.flip_left_right(np.zeros((2, 2)))


def test_random_flips_flip_about_half_the_time_and_follow_seeds():
    tf.set_random_seed(7)
    flipped = tf.image.random_flip_left_right(IMAGE, seed=3)
    assert flipped.shape.as_list() == [2, 3, 2]
    with tf.Session() as sess:
        runs = [sess.run(flipped) for _ in range(40)]
    with tf.Session() as sess:
        again = [sess.run(flipped) for _ in range(40)]
    mirrored = [np.array_equal(r, IMAGE[:, ::-1]) for r in runs]
    assert all(m or np.array_equal(r, IMAGE) for m, r in zip(mirrored, runs))
    assert 5 < sum(mirrored) < 35
    np.testing.assert_array_equal(np.array(runs), np.array(again))  # seeded: same sequence
    batch = np.stack([IMAGE] * 16)
    out = _run(tf.image.random_flip_up_down(batch, seed=1))
    decisions = [np.array_equal(o, IMAGE[::-1]) for o in out]
    assert all(d or np.array_equal(o, IMAGE) for d, o in zip(decisions, out))
    assert 0 < sum(decisions) < 16  # each image decides alone


def test_random_crop():
    value = np.arange(5 * 6 * 2).reshape(5, 6, 2)
    crop = tf.random_crop(value, [3, 4, 2], seed=5)
    assert crop.shape.as_list() == [3, 4, 2] and tf.image.random_crop is tf.random_crop
    with tf.Session() as sess:
        crops = [sess.run(crop) for _ in range(20)]
    corners = set()
    for c in crops:
        top, left = np.argwhere(value[..., 0] == c[0, 0, 0])[0]
        np.testing.assert_array_equal(c, value[top:top + 3, left:left + 4])
        corners.add((top, left))
    assert len(corners) > 1
    with pytest.raises(tf.errors.InvalidArgumentError, match="Need value.shape >= size"):
        _run(tf.random_crop(value, [6, 1, 1]))


def test_crop_and_pad_to_bounding_box():
    image = np.arange(4 * 5 * 1, dtype=np.float32).reshape(4, 5, 1)
    crop = tf.image.crop_to_bounding_box(image, 1, 2, 2, 3)
    pad = tf.image.pad_to_bounding_box(image, 1, 0, 6, 7)
    assert crop.shape.as_list() == [2, 3, 1] and pad.shape.as_list() == [6, 7, 1]
    crop, pad = _run([crop, pad])
    np.testing.assert_array_equal(crop, image[1:3, 2:5])
    expected = np.zeros((6, 7, 1), np.float32)
    expected[1:5, :5] = image
    np.testing.assert_array_equal(pad, expected)
    with pytest.raises(ValueError, match="width must be >= target \\+ offset"):
        tf.image.crop_to_bounding_box(image, 0, 3, 2, 3)
    with pytest.raises(ValueError, match="height must be <= target - offset"):
        tf.image.pad_to_bounding_box(image, 3, 0, 6, 7)


def test_resize_image_with_crop_or_pad_centres_the_image():
    image = np.arange(4 * 4 * 1, dtype=np.float32).reshape(4, 4, 1)
    out = tf.image.resize_image_with_crop_or_pad(image, 2, 6)  # crop rows, pad columns
    assert out.shape.as_list() == [2, 6, 1]
    expected = np.zeros((2, 6, 1), np.float32)
    expected[:, 1:5] = image[1:3]
    np.testing.assert_array_equal(_run(out), expected)
    dynamic = tf.placeholder(tf.float32, [None, None, 1])
    out = tf.image.resize_image_with_crop_or_pad(dynamic, 2, 6)
    np.testing.assert_array_equal(_run(out, {dynamic: image}), expected)


def test_central_crop():
    image = np.arange(4 * 6 * 1, dtype=np.float32).reshape(4, 6, 1)
    crop = tf.image.central_crop(image, 0.5)
    assert crop.shape.as_list() == [2, 4, 1]  # starts int((4 - 2) / 2) = 1 and int(1.5) = 1
    np.testing.assert_array_equal(_run(crop), image[1:3, 1:5])
    with pytest.raises(ValueError, match=r"central_fraction must be within \(0, 1\]"):
        tf.image.central_crop(image, 0.0)


# ---- standardization, brightness, contrast ----------------------------------------------------
def test_per_image_standardization():
    image = np.random.default_rng(1).integers(0, 256, (2, 4, 3, 3)).astype(np.uint8)
    out = tf.image.per_image_standardization(image)
    assert out.dtype == tf.float32 and out.op.name == "per_image_standardization"
    flat = image.reshape(2, -1).astype(np.float64)
    expected = (flat - flat.mean(1, keepdims=True)) / flat.std(1, keepdims=True)
    np.testing.assert_allclose(_run(out).reshape(2, -1), expected, rtol=1e-4, atol=1e-4)
    uniform = _run(tf.image.per_image_standardization(np.full((2, 2, 1), 9.0, np.float32)))
    np.testing.assert_array_equal(uniform, np.zeros((2, 2, 1)))  # stddev floored at 1/sqrt(4)
    tiny = np.array([[[0.0], [0.1]]], np.float32)  # stddev 0.05 < 1/sqrt(2): the floor divides
    np.testing.assert_allclose(_run(tf.image.per_image_standardization(tiny)).ravel(),
                               np.array([-0.05, 0.05]) * np.sqrt(2), rtol=1e-5)


def test_adjust_brightness_and_contrast():
    image = np.array([[[0.2, 0.5], [0.6, 0.1]]], np.float32)  # 1 x 2 x 2
    bright = tf.image.adjust_brightness(image, 0.1)
    contrast = tf.image.adjust_contrast(image, 2.0)
    bytes_ = tf.image.adjust_brightness(np.array([[[200, 10]]], np.uint8), 0.5)
    bright, contrast, bytes_ = _run([bright, contrast, bytes_])
    np.testing.assert_allclose(bright, image + 0.1, rtol=1e-6)
    mean = image.mean(axis=(0, 1))  # per channel: [0.4, 0.3]
    np.testing.assert_allclose(contrast, (image - mean) * 2.0 + mean, rtol=1e-6)
    # 200/255 + 0.5 saturates at 255; 10/255 + 0.5 -> 137 (0.539 * 255.5, truncated)
    np.testing.assert_array_equal(bytes_, [[[255, 137]]])


def test_random_brightness_and_contrast():
    image = np.array([[[0.2, 0.5], [0.6, 0.1]]], np.float32)
    bright = tf.image.random_brightness(image, max_delta=0.3, seed=2)
    contrast = tf.image.random_contrast(image, lower=0.5, upper=1.5, seed=2)
    with tf.Session() as sess:
        for _ in range(10):
            delta = sess.run(bright) - image
            assert np.allclose(delta, delta.flat[0], atol=1e-6) and abs(delta.flat[0]) <= 0.3
            factor = (sess.run(contrast) - image.mean((0, 1))) / (image - image.mean((0, 1)))
            assert np.allclose(factor, factor.flat[0], atol=1e-4) and 0.5 <= factor.flat[0] < 1.5
    with pytest.raises(ValueError, match="max_delta must be non-negative"):
        tf.image.random_brightness(image, -1.0)
    with pytest.raises(ValueError, match="upper must be > lower"):
        tf.image.random_contrast(image, 1.0, 1.0)
    with pytest.raises(ValueError, match="lower must be non-negative"):
        tf.image.random_contrast(image, -1.0, 1.0)


def test_adjustments_are_differentiable():
    x = tf.placeholder(tf.float32, [1, 2, 2, 1])
    y = tf.image.adjust_contrast(tf.image.adjust_brightness(x, 0.1), 3.0)
    grad = tf.gradients(tf.reduce_sum(y * tf.constant([1.0, 0.0, 0.0, 0.0], shape=[1, 2, 2, 1])),
                        x)[0]
    # d y0 / d x = 3 * (e0 - 1/4) + 1/4 per pixel: [2.5, -0.5, -0.5, -0.5].
    np.testing.assert_allclose(_run(grad, {x: np.ones((1, 2, 2, 1))}).ravel(),
                               [2.5, -0.5, -0.5, -0.5], rtol=1e-6)


# ---- colour (values against TF: test_image_nn_sparse_refs.py) ------------------------------
def _hsv_by_hand(rgb):
    """The textbook HSV of one pixel, hue in [0, 1)."""
    r, g, b = rgb
    v, low = max(rgb), min(rgb)
    s = (v - low) / v if v > 0 else 0.0
    if v == low:
        return [0.0, s, v]
    h = {r: (g - b) / (v - low), g: 2 + (b - r) / (v - low), b: 4 + (r - g) / (v - low)}[v]
    return [(h / 6) % 1.0, s, v]


def test_rgb_to_hsv_against_the_textbook_formula_and_back(sess):
    rgb = np.random.default_rng(5).random((4, 3, 3))
    hsv = tf.image.rgb_to_hsv(rgb)
    assert hsv.name == "RGBToHSV:0"
    got, back = sess.run([hsv, tf.image.hsv_to_rgb(hsv)])
    expected = np.array([[_hsv_by_hand(list(p)) for p in row] for row in rgb])
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(back, rgb, rtol=1e-12)


def test_hue_turns_by_delta_and_saturation_scales(sess):
    rgb = np.random.default_rng(6).random((2, 3, 3)).astype(np.float32)
    hsv = sess.run(tf.image.rgb_to_hsv(rgb))
    turned = sess.run(tf.image.rgb_to_hsv(tf.image.adjust_hue(rgb, 0.25)))
    np.testing.assert_allclose(turned[..., 0], (hsv[..., 0] + 0.25) % 1.0, atol=1e-5)
    np.testing.assert_allclose(turned[..., 1:], hsv[..., 1:], atol=1e-5)
    saturated = sess.run(tf.image.rgb_to_hsv(tf.image.adjust_saturation(rgb, 1.5)))
    np.testing.assert_allclose(saturated[..., 1], np.minimum(hsv[..., 1] * 1.5, 1), atol=1e-5)
    np.testing.assert_allclose(sess.run(tf.image.adjust_saturation(rgb, 0.0)),
                               np.repeat(rgb.max(axis=-1, keepdims=True), 3, -1), atol=1e-6)


def test_grayscale_round_trip_and_gamma(sess):
    rgb = np.random.default_rng(7).random((2, 2, 3)).astype(np.float32)
    gray = tf.image.rgb_to_grayscale(rgb)
    assert gray.shape.as_list() == [2, 2, 1]
    np.testing.assert_allclose(sess.run(gray)[..., 0], rgb @ [0.2989, 0.5870, 0.1140], rtol=1e-6)
    rgb_again = tf.image.grayscale_to_rgb(gray)
    assert rgb_again.shape.as_list() == [2, 2, 3]
    np.testing.assert_allclose(sess.run(rgb_again), np.repeat(sess.run(gray), 3, -1))
    np.testing.assert_allclose(sess.run(tf.image.adjust_gamma(rgb, 2.0, 0.5)), 0.5 * rgb ** 2,
                               rtol=1e-6)


def test_random_hue_and_saturation_follow_seeds_and_ranges(sess):
    rgb = np.random.default_rng(8).random((3, 3, 3)).astype(np.float32)
    tf.set_random_seed(1)
    first = sess.run(tf.image.random_hue(rgb, 0.1, seed=2))
    again = tf.Graph()
    with again.as_default():
        tf.set_random_seed(1)
        second = tf.Session().run(tf.image.random_hue(rgb, 0.1, seed=2))
    np.testing.assert_array_equal(first, second)
    shifts = (sess.run(tf.image.rgb_to_hsv(first))[..., 0]
              - sess.run(tf.image.rgb_to_hsv(rgb))[..., 0] + 0.5) % 1.0 - 0.5
    assert np.ptp(shifts) < 1e-4 and abs(shifts[0, 0]) <= 0.1
    saturated = sess.run(tf.image.rgb_to_hsv(tf.image.random_saturation(rgb, 0.5, 0.6)))[..., 1]
    ratio = saturated / sess.run(tf.image.rgb_to_hsv(rgb))[..., 1]
    assert np.ptp(np.minimum(ratio, 0.6)) < 1e-4 and 0.5 <= ratio[0, 0] <= 0.6


def test_colour_errors(sess):
    with pytest.raises(ValueError, match="Dimension must be 3 but is 4"):
        tf.image.rgb_to_hsv(tf.zeros([2, 2, 4]))
    with pytest.raises(TypeError):
        tf.image.rgb_to_hsv(tf.zeros([2, 2, 3], tf.int32))
    with pytest.raises(ValueError, match="Last dimension of a grayscale image should be size 1"):
        tf.image.grayscale_to_rgb(tf.zeros([2, 2, 3]))
    with pytest.raises(ValueError, match="at least rank 3"):
        tf.image.adjust_hue(tf.zeros([2, 3]), 0.1)
    with pytest.raises(ValueError, match="max_delta must be <= 0.5"):
        tf.image.random_hue(tf.zeros([2, 2, 3]), 0.6)
    with pytest.raises(ValueError, match="upper must be > lower"):
        tf.image.random_saturation(tf.zeros([2, 2, 3]), 0.5, 0.5)
    with pytest.raises(ValueError, match="Gamma should be a non-negative real number"):
        tf.image.adjust_gamma(tf.zeros([2, 2, 3]), -1.0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="3 channels"):
        sess.run(tf.image.adjust_saturation(tf.placeholder_with_default(
            np.zeros((2, 2, 4), np.float32), [2, 2, None]), 0.5))
    gamma = tf.placeholder(tf.float32, [])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Gamma should be"):
        sess.run(tf.image.adjust_gamma(tf.zeros([1, 1, 3]), gamma), {gamma: -1.0})
    x = tf.zeros([1, 1, 3])
    assert tf.gradients(tf.image.adjust_hue(x, 0.1), x) == [None]  # TF has no gradient either
