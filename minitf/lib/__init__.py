"""Libraries beneath the TF API that are neither ops nor runtime: file formats.

Mirrors ``tensorflow/python/lib``; :mod:`minitf.lib.io` holds the TFRecord
format (``tf.python_io``).
"""
