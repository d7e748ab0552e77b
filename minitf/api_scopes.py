"""Module-level context functions of the TF1 API that act on the default graph.

``tf.name_scope``, ``tf.control_dependencies``, ``tf.device``,
``tf.colocate_with`` and ``tf.set_random_seed`` are thin wrappers around the
default graph's methods, plus TF's rule for deriving op-level seeds.
"""

import contextlib

from minitf.framework import graph as graph_lib
from minitf.ops.op_def_library import graph_of

DEFAULT_GRAPH_SEED = 87654321
_MAXINT32 = 2 ** 31 - 1


@contextlib.contextmanager
def name_scope(name, default_name=None, values=None):
    """Opens a name scope in the graph of ``values`` (``tf.name_scope``).

    Example:
        >>> with tf.name_scope("layer1") as scope:
        ...     w = tf.constant(1.0, name="w")
        >>> scope, w.op.name
        ('layer1/', 'layer1/w')
    """
    if name is None and default_name is None:
        name = ""
    graph = graph_of(values or [])
    with graph.as_default(), graph.name_scope(name or default_name) as scope:
        yield scope


def control_dependencies(control_inputs):
    """Ops created inside run after ``control_inputs`` (``tf.control_dependencies``)."""
    return graph_lib.get_default_graph().control_dependencies(control_inputs)


def device(device_name_or_function):
    """Requests a device for the ops created inside (``tf.device``)."""
    return graph_lib.get_default_graph().device(device_name_or_function)


def colocate_with(op, ignore_existing=False):
    """Places the ops created inside with ``op`` (``tf.colocate_with``)."""
    return graph_lib.get_default_graph().colocate_with(op, ignore_existing)


@contextlib.contextmanager
def container(container_name):
    """Accepted for compatibility: minitf keeps one resource container per device."""
    del container_name
    yield


def add_to_collection(name, value):
    """Adds ``value`` to the default graph's collection ``name`` (``tf.add_to_collection``)."""
    graph_lib.get_default_graph().add_to_collection(name, value)


def add_to_collections(names, value):
    """Adds ``value`` to each collection in ``names`` (``tf.add_to_collections``)."""
    graph_lib.get_default_graph().add_to_collections(names, value)


def get_collection(key, scope=None):
    """A copy of the default graph's collection ``key``, filtered by ``scope``
    (``tf.get_collection``)."""
    return graph_lib.get_default_graph().get_collection(key, scope)


def get_collection_ref(key):
    """The default graph's list for collection ``key`` itself (``tf.get_collection_ref``)."""
    return graph_lib.get_default_graph().get_collection_ref(key)


def set_random_seed(seed):
    """Sets the graph-level random seed of the default graph (``tf.set_random_seed``)."""
    graph_lib.get_default_graph().seed = seed


def get_seed(op_seed):
    """The ``(seed, seed2)`` pair a random op uses, by TF1's rules.

    * graph seed and op seed set: both are used;
    * only the graph seed: the op seed is derived from the number of ops in
      the graph, so the same program gives the same numbers on every run;
    * only the op seed: the graph seed defaults to ``DEFAULT_GRAPH_SEED``;
    * neither: ``(None, None)`` — fresh randomness each session.
    """
    graph = graph_lib.get_default_graph()
    graph_seed = graph.seed
    if graph_seed is not None:
        if op_seed is None:
            op_seed = len(graph.get_operations())
        seeds = (graph_seed, op_seed)
    elif op_seed is not None:
        seeds = (DEFAULT_GRAPH_SEED, op_seed)
    else:
        return None, None
    if seeds == (0, 0):
        return 0, _MAXINT32  # (0, 0) means "not set" to the kernels
    return seeds
