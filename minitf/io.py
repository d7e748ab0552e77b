"""``tf.io``: file and parsing functions under their TF 1.13+ names.

``tf.io.gfile`` is :mod:`minitf.platform.gfile` (also ``tf.gfile``) and
``tf.io.decode_csv`` is ``tf.decode_csv``, ``tf.io.write_graph``
``tf.train.write_graph``; this module only gives them the
``tf.compat.v1.io`` spelling.
"""

from minitf.framework.graph_io import write_graph  # noqa: F401 - the public API
from minitf.ops.parsing_ops import decode_csv  # noqa: F401
from minitf.platform import gfile  # noqa: F401
