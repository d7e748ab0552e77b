"""Fetch structures: flattening what ``Session.run`` is asked for, and rebuilding it.

``sess.run`` accepts any nesting of lists, tuples, namedtuples and dicts whose
leaves are graph elements (Tensors, Operations, Variables, or their names) or
SparseTensors (fetched as their three tensors, returned as a
``SparseTensorValue``).
The structure is flattened into a list of *unique* elements — a tensor asked
for twice is computed once — and the results are poured back into the same
structure; an Operation's result is None.  An ``IndexedSlices`` is fetched
as its tensors and comes back as an ``IndexedSlicesValue`` of their arrays.

Mirrors TF's ``_FetchMapper`` family in ``client/session.py``.
"""

import collections.abc

from minitf.framework import errors
from minitf.framework.indexed_slices import IndexedSlices, IndexedSlicesValue
from minitf.framework.operation import Operation
from minitf.framework.sparse_tensor import SparseTensor, SparseTensorValue
from minitf.framework.tensor import Tensor


class FetchMapper:
    """The flat, unique elements of a fetch structure and how to rebuild it.

    Args:
        graph: the session's graph (elements of other graphs are a ValueError).
        fetches: the structure passed to ``Session.run``.

    Raises:
        TypeError: for a leaf that is not a graph element (TF's message).
        ValueError: for an element of another graph.
    """

    def __init__(self, graph, fetches):
        self._graph = graph
        self.elements = []
        self._index = {}
        self._template = self._flatten(fetches)
        self.is_single_tensor = self._template[0] == "leaf" and isinstance(self.elements[0], Tensor)

    def _flatten(self, fetch):
        if fetch is None:
            raise TypeError("Fetch argument None has invalid type <class 'NoneType'>")
        if isinstance(fetch, SparseTensor):  # fetched as its three tensors
            return ("sparse", [self._add(t) for t in
                               (fetch.indices, fetch.values, fetch.dense_shape)])
        if isinstance(fetch, dict):
            return (type(fetch), [(k, self._flatten(v)) for k, v in fetch.items()])
        if isinstance(fetch, IndexedSlices):
            parts = (fetch.values, fetch.indices, fetch.dense_shape)
            return ("indexed_slices", [None if p is None else self._flatten(p) for p in parts])
        if isinstance(fetch, tuple) and hasattr(fetch, "_fields"):
            return ("namedtuple", type(fetch), [self._flatten(v) for v in fetch])
        if isinstance(fetch, (list, tuple)):
            return (type(fetch), [self._flatten(v) for v in fetch])
        return ("leaf", self._add(fetch))

    def _add(self, fetch):
        try:
            element = self._graph.as_graph_element(fetch, allow_tensor=True, allow_operation=True)
        except TypeError as e:
            raise TypeError("Fetch argument %r has invalid type %s, must be a string or Tensor. "
                            "(%s)" % (fetch, type(fetch), e)) from None
        except ValueError as e:
            raise ValueError("Fetch argument %r cannot be interpreted as a Tensor. (%s)"
                             % (fetch, e)) from None
        except KeyError as e:
            raise ValueError("Fetch argument %r cannot be interpreted as a Tensor. (%s)"
                             % (fetch, e.args[0])) from None
        if not self._graph.is_fetchable(element):
            op = element.op if isinstance(element, Tensor) else element
            raise errors.InaccessibleTensorError(
                "Operation %s has been marked as not fetchable. Typically this happens when it "
                "is defined in another function or code block (here: inside a tf.cond branch "
                "or a tf.while_loop). Use return values, explicit Python locals or TensorFlow "
                "collections to access it." % op.name)
        if element not in self._index:
            self._index[element] = len(self.elements)
            self.elements.append(element)
        return self._index[element]

    @property
    def tensors(self):
        return [e for e in self.elements if isinstance(e, Tensor)]

    @property
    def operations(self):
        return [e for e in self.elements if isinstance(e, Operation)]

    def build_results(self, values):
        """Rebuilds the fetch structure from one value per element (None for ops)."""
        return _rebuild(self._template, values)


def _rebuild(template, values):
    kind = template[0]
    if kind == "leaf":
        return values[template[1]]
    if kind == "indexed_slices":
        return IndexedSlicesValue(*[None if t is None else _rebuild(t, values)
                                    for t in template[1]])
    if kind == "namedtuple":
        return template[1](*[_rebuild(t, values) for t in template[2]])
    if kind == "sparse":
        return SparseTensorValue(*[values[i] for i in template[1]])
    if isinstance(kind, type) and issubclass(kind, collections.abc.Mapping):
        result = kind() if kind is not collections.defaultdict else {}
        for key, sub in template[1]:
            result[key] = _rebuild(sub, values)
        return result
    return kind(_rebuild(t, values) for t in template[1])


def structure_key(fetches):
    """A hashable key for a fetch structure (holding its leaves alive)."""
    if isinstance(fetches, dict):
        return (type(fetches),) + tuple((k, structure_key(v)) for k, v in fetches.items())
    if isinstance(fetches, (list, tuple)):
        return (type(fetches),) + tuple(structure_key(v) for v in fetches)
    return fetches
