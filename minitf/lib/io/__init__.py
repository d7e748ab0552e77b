"""File formats: :mod:`~minitf.lib.io.tf_record`, TF's record files.

Mirrors ``tensorflow/python/lib/io``.
"""
