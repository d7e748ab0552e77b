"""Nested structures of dataset elements: flatten them, rebuild them.

An element of a ``tf.data`` dataset is a *structure*: a single tensor, or a
tuple (namedtuples included) or dict whose values are structures in turn,
e.g. ``({"image": img, "mask": m}, label)``.  Ops only know flat lists of
tensors, so every dataset op takes and gives its element as the flat list of
its *components* and the Python side keeps the structure to rebuild it::

    >>> flatten(({"b": 1, "a": 2}, 3))
    [2, 1, 3]
    >>> pack_sequence_as(({"b": 0, "a": 0}, 0), ["A", "B", "C"])
    ({'b': 'B', 'a': 'A'}, 'C')

Dict values are flattened in sorted key order, as TF's ``nest`` does.  A list
is *not* a structure here but a value (``from_tensor_slices([1, 2, 3])`` has
one component), which is also TF's rule for ``tf.data``.

A component may be a :class:`~minitf.SparseTensor` (``parse_single_example``
with a ``VarLenFeature`` inside ``map``).  Its *class* says so
(``output_classes``), its dtype is that of its values and its shape the
dense shape; inside the pipeline it travels as one ``[3]`` variant tensor
(``SerializeSparse``), which ``batch`` stacks to ``[n, 3]`` and
:func:`from_tensor_list` turns back into a SparseTensor with a batch
dimension, as TF 1.x does.  ``from_tensor_slices`` of a SparseTensor starts
from the ``[N, 3]`` form directly (``SerializeManySparse``,
:func:`to_batched_tensor_list`): its elements are the slices
``sp[0], sp[1], ...``.

Mirrors ``tensorflow/python/data/util/nest.py`` and ``structure.py``.
"""

from minitf.framework import dtypes
from minitf.framework.sparse_tensor import SparseTensor, SparseTensorValue
from minitf.framework.tensor import Tensor
from minitf.framework.tensor_shape import TensorShape
from minitf.ops import sparse_ops


def is_structure(value):
    """True for the containers that nest: tuples, namedtuples and dicts (not a
    SparseTensorValue, which is one sparse component)."""
    return isinstance(value, (tuple, dict)) and not isinstance(value, SparseTensorValue)


def _children(structure):
    if isinstance(structure, dict):
        return [structure[key] for key in sorted(structure)]
    return list(structure)


def _rebuild(structure, children):
    if isinstance(structure, dict):
        by_key = dict(zip(sorted(structure), children))
        return type(structure)((key, by_key[key]) for key in structure)
    if hasattr(structure, "_fields"):  # a namedtuple
        return type(structure)(*children)
    return tuple(children)


def flatten(structure):
    """The leaves of ``structure``, depth first (dicts by sorted key)."""
    if not is_structure(structure):
        return [structure]
    flat = []
    for child in _children(structure):
        flat.extend(flatten(child))
    return flat


def pack_sequence_as(structure, flat):
    """Rebuilds ``structure`` with its leaves replaced by ``flat``, in order.

    Raises:
        ValueError: if ``flat`` does not have one value per leaf.
    """
    flat = list(flat)
    expected = len(flatten(structure))
    if len(flat) != expected:
        raise ValueError("Structure had %d elements, but flat_sequence had %d elements."
                         % (expected, len(flat)))
    leaves = iter(flat)

    def pack(node):
        if not is_structure(node):
            return next(leaves)
        return _rebuild(node, [pack(child) for child in _children(node)])
    return pack(structure)


def map_structure(fn, *structures):
    """``fn`` applied leafwise to structures of the same shape.

    Raises:
        ValueError: if the structures differ.
    """
    for other in structures[1:]:
        assert_same_structure(structures[0], other)
    flats = [flatten(s) for s in structures]
    return pack_sequence_as(structures[0], [fn(*leaves) for leaves in zip(*flats)])


def flatten_up_to(shallow, deep):
    """The subtrees of ``deep`` at the leaves of ``shallow``.

    ``flatten_up_to((int, float), ([1, 2], 3.0))`` is ``[[1, 2], 3.0]``: how a
    generator's ``output_shapes`` (whose leaves may be lists) are matched
    against its ``output_types``.

    Raises:
        ValueError: if ``deep`` does not have ``shallow``'s structure.
    """
    if not is_structure(shallow):
        return [deep]
    if not is_structure(deep) or isinstance(deep, dict) != isinstance(shallow, dict) \
            or len(deep) != len(shallow):
        raise ValueError("The value %r does not match the structure %r." % (deep, shallow))
    if isinstance(shallow, dict) and sorted(shallow) != sorted(deep):
        raise ValueError("The value %r has keys %s, expected %s."
                         % (deep, sorted(deep), sorted(shallow)))
    flat = []
    for shallow_child, deep_child in zip(_children(shallow), _children(deep)):
        flat.extend(flatten_up_to(shallow_child, deep_child))
    return flat


def assert_same_structure(first, second):
    """Raises ``ValueError`` unless ``first`` and ``second`` nest the same way."""
    if is_structure(first) != is_structure(second):
        raise ValueError("The two structures don't have the same nested structure.\n\n"
                         "First structure: %r\n\nSecond structure: %r" % (first, second))
    if not is_structure(first):
        return
    if isinstance(first, dict) != isinstance(second, dict) or len(first) != len(second) or (
            isinstance(first, dict) and sorted(first) != sorted(second)):
        raise ValueError("The two structures don't have the same nested structure.\n\n"
                         "First structure: %r\n\nSecond structure: %r" % (first, second))
    for a, b in zip(_children(first), _children(second)):
        assert_same_structure(a, b)


# ---- sparse components ----------------------------------------------------------------------
def classes_of(element):
    """The class of each component of ``element``: ``SparseTensor`` or ``Tensor``."""
    return map_structure(lambda t: SparseTensor if isinstance(t, SparseTensor) else Tensor,
                         element)


def flat_types(types, classes):
    """The dtypes of the tensors the dataset ops carry (variant for a sparse component)."""
    return [dtypes.variant if c is SparseTensor else t
            for t, c in zip(flatten(types), flatten(classes))]


def flat_shapes(shapes, classes):
    """The shapes of the tensors the dataset ops carry (unknown for a sparse component)."""
    return [TensorShape(None) if c is SparseTensor else s
            for s, c in zip(flatten(shapes), flatten(classes))]


def to_tensor_list(element):
    """The flat tensors that carry ``element``: a SparseTensor as its variant form."""
    return [sparse_ops.serialize_sparse(t) if isinstance(t, SparseTensor) else t
            for t in flatten(element)]


def to_batched_tensor_list(element):
    """The flat tensors that carry the slices of ``element`` along its first
    dimension: a SparseTensor as the ``[N, 3]`` variant matrix of its slices
    (``SerializeManySparse``), which ``from_tensor_slices`` slices like any
    other component (TF's ``SparseTensorSpec._to_batched_tensor_list``)."""
    return [sparse_ops.serialize_many_sparse(t) if isinstance(t, SparseTensor) else t
            for t in flatten(element)]


def from_tensor_list(flat, types, shapes, classes):
    """The element carried by the tensors ``flat``: each variant of a sparse
    component back into a SparseTensor of the declared dtype and dense shape."""
    components = []
    for tensor, dtype, shape, cls in zip(flat, flatten(types), flatten(shapes),
                                         flatten(classes)):
        if cls is SparseTensor:
            tensor = sparse_ops.deserialize_sparse(tensor, dtype, rank=shape.ndims)
            tensor.set_shape(shape)
        components.append(tensor)
    return pack_sequence_as(types, components)


class HasElementStructure:
    """The ``output_types/shapes/classes`` of a Dataset or an Iterator.

    Both describe one element the same way; a subclass sets
    ``self._output_types``, ``self._output_shapes`` and
    ``self._output_classes`` (structures of DTypes, TensorShapes and classes).
    """

    @property
    def output_types(self):
        """The dtypes of an element's components, in the element's structure."""
        return self._output_types

    @property
    def output_shapes(self):
        """The static TensorShapes of an element's components (None dims: unknown)."""
        return self._output_shapes

    @property
    def output_classes(self):
        """The Python class of each component: ``tf.Tensor`` or ``tf.SparseTensor``."""
        return self._output_classes

    @property
    def _flat_types(self):
        return flat_types(self._output_types, self._output_classes)

    @property
    def _flat_shapes(self):
        return flat_shapes(self._output_shapes, self._output_classes)


def dense_classes(types):
    """``types``' structure with every component a dense ``Tensor``."""
    return map_structure(lambda _: Tensor, types)
