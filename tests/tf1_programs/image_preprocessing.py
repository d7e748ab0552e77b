"""TF official CIFAR-10 tutorial (``models/tutorials/image/cifar10/cifar10_input.py``,
``distorted_inputs``/``inputs``) and the TF 1.x "Importing Data" guide's image
``_parse_function`` (``tf.read_file`` + ``tf.image.decode_*`` +
``tf.image.resize_images`` in ``Dataset.map``).

Shortened: six 32x32 images are made by the program and written as PNG and
JPEG files with ``tf.image.encode_png``/``encode_jpeg`` and ``tf.write_file``
(CIFAR's binary files are not downloaded); crops are 24x24 as in the tutorial.
The graph-level seed is fixed; the random distortions are compared by their
shapes and ranges, the deterministic steps by their values.
"""

import numpy as np

import minitf as tf

IMAGE_SIZE = 24

tf.set_random_seed(3)
rng = np.random.RandomState(0)
raw_images = rng.randint(0, 256, size=(6, 32, 32, 3)).astype(np.uint8)
raw_images[:, 8:24, 8:24, 0] = 255  # a red square, so the flips and crops show
png_names = ['image_%d.png' % i for i in range(6)]
jpeg_names = ['image_%d.jpg' % i for i in range(6)]
labels = [i % 3 for i in range(6)]

# Write the files with TensorFlow's own encoders.
image_in = tf.placeholder(tf.uint8, [32, 32, 3])
filename_in = tf.placeholder(tf.string, [])
write_png = tf.write_file(filename_in, tf.image.encode_png(image_in))
write_jpeg = tf.write_file(filename_in, tf.image.encode_jpeg(image_in, quality=95))
with tf.Session() as sess:
  for image, png, jpeg in zip(raw_images, png_names, jpeg_names):
    sess.run(write_png, {image_in: image, filename_in: png})
    sess.run(write_jpeg, {image_in: image, filename_in: jpeg})


def distorted_image(filename):
  """cifar10_input.distorted_inputs, for one file."""
  image_string = tf.read_file(filename)
  reshaped_image = tf.cast(tf.image.decode_png(image_string, channels=3), tf.float32)

  height = IMAGE_SIZE
  width = IMAGE_SIZE

  # Image processing for training the network. Note the many random
  # distortions applied to the image.

  # Randomly crop a [height, width] section of the image.
  distorted_image = tf.random_crop(reshaped_image, [height, width, 3])

  # Randomly flip the image horizontally.
  distorted_image = tf.image.random_flip_left_right(distorted_image)

  # Because these operations are not commutative, consider randomizing
  # the order their operation.
  distorted_image = tf.image.random_brightness(distorted_image,
                                               max_delta=63)
  distorted_image = tf.image.random_contrast(distorted_image,
                                             lower=0.2, upper=1.8)

  # Subtract off the mean and divide by the variance of the pixels.
  float_image = tf.image.per_image_standardization(distorted_image)

  # Set the shapes of tensors.
  float_image.set_shape([height, width, 3])
  return float_image


def eval_image(filename):
  """cifar10_input.inputs(eval_data=True), for one file."""
  reshaped_image = tf.cast(tf.image.decode_png(tf.read_file(filename), channels=3), tf.float32)
  # Crop the central [height, width] of the image.
  resized_image = tf.image.resize_image_with_crop_or_pad(reshaped_image,
                                                         IMAGE_SIZE, IMAGE_SIZE)
  float_image = tf.image.per_image_standardization(resized_image)
  float_image.set_shape([IMAGE_SIZE, IMAGE_SIZE, 3])
  return float_image


# Reads an image from a file, decodes it into a dense tensor, and resizes it
# to a fixed shape.
def _parse_function(filename, label):
  image_string = tf.read_file(filename)
  image_decoded = tf.image.decode_jpeg(image_string)
  image_resized = tf.image.resize_images(image_decoded, [28, 28])
  return image_resized, label


filenames = tf.constant(jpeg_names)
dataset = tf.data.Dataset.from_tensor_slices((filenames, tf.constant(labels)))
dataset = dataset.map(_parse_function).batch(4)
jpeg_batch, label_batch = dataset.make_one_shot_iterator().get_next()

train_image = distorted_image(png_names[0])
test_image = eval_image(png_names[0])
decoded = tf.image.decode_png(tf.read_file(png_names[1]))
as_float = tf.image.convert_image_dtype(decoded, tf.float32)
bilinear = tf.image.resize_images(as_float, [20, 20])
nearest = tf.image.resize_images(decoded, [16, 16],
                                 method=tf.image.ResizeMethod.NEAREST_NEIGHBOR)
flipped = tf.image.flip_left_right(decoded)
jpeg_decoded = tf.image.decode_jpeg(tf.read_file(jpeg_names[1]))

with tf.Session() as sess:
  train_values = [sess.run(train_image) for _ in range(4)]
  (test_value, decoded_value, bilinear_value, nearest_value, flipped_value,
   jpeg_value) = sess.run([test_image, decoded, bilinear, nearest, flipped, jpeg_decoded])
  jpeg_batch_value, label_batch_value = sess.run([jpeg_batch, label_batch])

# What the sweep compares with TensorFlow 2.21 (tests/test_tf1_programs_sweep.py).
results = {
    "train_image": [train_image.shape.as_list(), train_image.dtype.name],
    "train_standardized": bool(all(abs(v.mean()) < 1e-4 and abs(v.std() - 1) < 1e-3
                                   for v in train_values)),
    "test_image_sum_sq": float(np.square(test_value).sum()),
    "test_image_corner": test_value[0, :3, 0].tolist(),
    "decoded": [decoded.shape.as_list(), decoded_value.dtype.name,
                bool((decoded_value == raw_images[1]).all())],
    "as_float": [as_float.dtype.name],
    "bilinear": [bilinear.shape.as_list(), bilinear_value[:2, :2, 0].tolist(),
                 float(bilinear_value.sum())],
    "nearest": [nearest.shape.as_list(), nearest.dtype.name, nearest_value[::5, ::5, 1].tolist()],
    "flipped_ok": bool((flipped_value == raw_images[1][:, ::-1]).all()),
    "jpeg": [jpeg_decoded.shape.as_list(), jpeg_value.shape,
             bool(np.abs(jpeg_value.astype(float) - raw_images[1]).mean() < 40)],
    "jpeg_batch": [jpeg_batch.shape.as_list(), jpeg_batch.dtype.name,
                   list(jpeg_batch_value.shape)],
    "label_batch": label_batch_value.tolist(),
}
