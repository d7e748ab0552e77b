"""``tf.io``: file and parsing functions under their TF 1.13+ names.

``tf.io.gfile`` is :mod:`minitf.platform.gfile` (also ``tf.gfile``) and
``tf.io.decode_csv`` is ``tf.decode_csv``, ``tf.io.write_graph``
``tf.train.write_graph``, ``tf.io.TFRecordWriter``
``tf.python_io.TFRecordWriter``, ``tf.io.parse_example``
``tf.parse_example``; this module only gives them the ``tf.compat.v1.io``
spelling.  ``tf.io.read_file``/``write_file`` are ``tf.read_file``/``tf.write_file``
and the image codecs those of ``tf.image``.
"""

from minitf.framework.graph_io import write_graph  # noqa: F401 - the public API
from minitf.lib.io.tf_record import (  # noqa: F401
    TFRecordCompressionType, TFRecordOptions, TFRecordWriter, tf_record_iterator)
from minitf.ops.parsing_ops import (  # noqa: F401
    FixedLenFeature, FixedLenSequenceFeature, VarLenFeature, decode_csv, decode_raw,
    parse_example, parse_single_example)
from minitf.platform import gfile  # noqa: F401
from minitf.ops.data_flow_ops import (  # noqa: F401
    PaddingFIFOQueue, QueueBase, RandomShuffleQueue)
from minitf.ops.file_io_ops import read_file, write_file  # noqa: F401
from minitf.ops.image_ops import (  # noqa: F401
    decode_image, decode_jpeg, decode_png, encode_jpeg, encode_png)
