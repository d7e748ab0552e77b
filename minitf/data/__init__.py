"""``tf.data``: input pipelines as graph ops (``Dataset``, iterators).

* :mod:`~minitf.data.dataset` — ``Dataset`` and its transformations, each one op;
* :mod:`~minitf.data.iterator` — iterators: session state pulling elements;
* :mod:`~minitf.data.readers` — ``TextLineDataset``: the lines of text files;
* :mod:`~minitf.data.function` — ``map``/``filter`` functions traced into graphs;
* :mod:`~minitf.data.structure` — nested element structures (tuples, dicts).
"""

import types as _types

from minitf.data.dataset import AUTOTUNE, Dataset
from minitf.data.iterator import Iterator, make_initializable_iterator, make_one_shot_iterator
from minitf.data.readers import TextLineDataset

experimental = _types.SimpleNamespace(AUTOTUNE=AUTOTUNE)  # tf.data.experimental.AUTOTUNE

__all__ = ["Dataset", "Iterator", "TextLineDataset", "make_initializable_iterator",
           "make_one_shot_iterator", "experimental"]
