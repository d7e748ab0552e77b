"""Writes image files *with TensorFlow*, and what TensorFlow decodes from them.

Run once, from the repository root, with a Python that has TensorFlow
(``tf.compat.v1`` graph mode)::

    /path/to/tf-venv/bin/python tests/data/make_tf_images.py

It writes, into ``tests/data/``:

* ``tf_image.jpg`` — a 6x8 RGB image (smooth colour ramps plus one sharp
  edge), encoded by ``tf.image.encode_jpeg(quality=90)``;
* ``tf_image_rgb.npy`` / ``tf_image_gray.npy`` — what ``tf.image.decode_jpeg``
  gives for it with ``channels=3`` and ``channels=1`` (TF's default, libjpeg's
  fast integer DCT);
* ``tf_image_rgb_accurate.npy`` — the same with ``dct_method="INTEGER_ACCURATE"``
  (libjpeg's accurate DCT, the one Pillow and so minitf use);
* ``tf_image.png`` — the same pixels encoded by ``tf.image.encode_png``
  (lossless: decoding gives :func:`source_pixels` back).

``tests/test_image_ops.py`` decodes the files with minitf and compares.
The ``.npy`` files hold plain uint8 arrays (``np.save``, no pickle).
"""

import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def source_pixels():
    """The 6x8x3 uint8 image the files encode (also rebuilt by the tests)."""
    rows, cols = np.meshgrid(np.arange(6), np.arange(8), indexing="ij")
    image = np.stack([rows * 40, cols * 30, 255 - rows * 20 - cols * 10], axis=-1)
    image[:, 5:] = [250, 250, 20]  # a sharp vertical edge
    return image.astype(np.uint8)


def main():
    import tensorflow as tf
    tf1 = tf.compat.v1
    tf1.disable_eager_execution()
    pixels = source_pixels()
    with tf1.Session() as sess:
        jpeg = sess.run(tf1.image.encode_jpeg(pixels, quality=90))
        png = sess.run(tf1.image.encode_png(pixels))
        rgb = sess.run(tf1.image.decode_jpeg(jpeg, channels=3))
        gray = sess.run(tf1.image.decode_jpeg(jpeg, channels=1))
        accurate = sess.run(tf1.image.decode_jpeg(jpeg, channels=3,
                                                  dct_method="INTEGER_ACCURATE"))
    with open(os.path.join(HERE, "tf_image.jpg"), "wb") as f:
        f.write(jpeg)
    with open(os.path.join(HERE, "tf_image.png"), "wb") as f:
        f.write(png)
    np.save(os.path.join(HERE, "tf_image_rgb.npy"), rgb, allow_pickle=False)
    np.save(os.path.join(HERE, "tf_image_gray.npy"), gray, allow_pickle=False)
    np.save(os.path.join(HERE, "tf_image_rgb_accurate.npy"), accurate, allow_pickle=False)


if __name__ == "__main__":
    main()
