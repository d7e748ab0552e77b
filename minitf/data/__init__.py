"""``tf.data``: input pipelines as graph ops (``Dataset``, iterators).

* :mod:`~minitf.data.dataset` — ``Dataset`` and its transformations, each one op;
* :mod:`~minitf.data.iterator` — iterators: session state pulling elements;
* :mod:`~minitf.data.readers` — ``TextLineDataset``, ``TFRecordDataset``: files;
* :mod:`~minitf.data.function` — ``map``/``filter`` functions traced into graphs;
* :mod:`~minitf.data.structure` — nested element structures (tuples, dicts);
* :mod:`~minitf.data.experimental` — ``unbatch``, ``shuffle_and_repeat``, ``AUTOTUNE``.
"""

from minitf.data import experimental
from minitf.data.dataset import (
    AUTOTUNE, Dataset, get_output_classes, get_output_shapes, get_output_types)
from minitf.data.iterator import Iterator, make_initializable_iterator, make_one_shot_iterator
from minitf.data.readers import TextLineDataset, TFRecordDataset

__all__ = ["AUTOTUNE", "Dataset", "Iterator", "TFRecordDataset", "TextLineDataset", "get_output_classes",
           "get_output_shapes", "get_output_types", "make_initializable_iterator",
           "make_one_shot_iterator", "experimental"]
