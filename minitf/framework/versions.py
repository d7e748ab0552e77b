"""minitf's version, in the one place every layer may read it.

``tf.__version__`` and ``tf.VERSION`` re-export it; a library that records
which minitf wrote a file (``tf.train.export_meta_graph``) reads it here
rather than from the ``minitf`` package above it.  Mirrors TF1's
``tensorflow/python/framework/versions.py``.
"""

__version__ = "0.1.0"
VERSION = __version__  # TF1's spelling of tf.__version__
