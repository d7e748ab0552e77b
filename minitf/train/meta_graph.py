"""MetaGraphDef: a graph plus what a program needs to keep using it.

A checkpoint holds values; the ``.meta`` file next to it holds the program, as
TF's ``MetaGraphDef`` protocol buffer (binary, or text with ``as_text=True``;
TensorFlow reads minitf's files and minitf TensorFlow's):

``graph_def``
    every op (a ``GraphDef``, :mod:`minitf.framework.graph_def`), and in its
    ``library`` the functions ``Dataset.map``/``filter`` traced;
``collection_def``
    the graph's collections, by name (``CollectionDef``): ``node_list`` for
    Tensors and Operations (by name), ``bytes_list``/``int64_list``/
    ``float_list`` for strings and numbers, and for the collections that
    registered a proto type with :func:`register_proto_function` a
    ``bytes_list`` of serialized protos — ``variables``,
    ``trainable_variables`` ... hold ``VariableDef``\\ s (so
    ``tf.global_variables()`` works after an import), ``savers`` ``SaverDef``\\ s;
``saver_def``
    the names of the Saver's ops (``SaverDef``);
``meta_info_def``
    the op types used (``stripped_op_list``), the minitf version (in
    ``tensorflow_git_version``: TF parses ``tensorflow_version`` as a number), free-form tags.

``tf.train.import_meta_graph("model.ckpt-100.meta")`` rebuilds all of it in
the default graph without the code that built it, and returns a Saver to
restore the values with.  In text form (``tf.train.export_meta_graph(path,
as_text=True)``) a collection reads::

    collection_def { key: "train_op" value { node_list { value: "GradientDescent" } } }

As in TF, proto functions are registered by collection name; other
collections of objects that are neither ops, tensors, strings nor numbers are
skipped with a warning (a Variable in such a collection is stored by its
tensor's name and comes back as that Tensor).

Mirrors ``tensorflow/python/framework/meta_graph.py`` and ``meta_graph.proto``.
"""

import logging

import numpy as np

from minitf.framework import graph as graph_lib
from minitf.framework import graph_def as graph_def_lib
from minitf.framework import protos
from minitf.framework.graph import GraphKeys
from minitf.framework.operation import Operation
from minitf.framework.tensor import Tensor
from minitf.framework.versions import __version__
from minitf.ops.variables import Variable
from minitf.train import checkpoint_format

_logger = logging.getLogger("minitf.train")

# collection name -> (proto module and message, to_proto(value, export_scope),
#                     from_proto(message, graph, import_scope))
_PROTO_FUNCTIONS = {}


def register_proto_function(collection_name, proto_type, to_proto, from_proto):
    """Lets the objects of collection ``collection_name`` travel in a MetaGraphDef.

    Args:
        collection_name: the collection (e.g. ``"variables"``).
        proto_type: the message type, as ``"<module>.<message>"`` of
            ``tensorboard.compat.proto`` (``"variable_pb2.VariableDef"``).
        to_proto: ``to_proto(value, export_scope) -> message`` (None: leave
            the value out).
        from_proto: ``from_proto(message, graph, import_scope) -> object``.
    """
    _PROTO_FUNCTIONS[collection_name] = (proto_type, to_proto, from_proto)


def _message_class(proto_type):
    module, name = proto_type.split(".")
    return getattr(protos.load(module), name)


# ---- names and scopes -----------------------------------------------------------------------
def _strip(name, export_scope):
    """``scope/x:0`` -> ``x:0`` for an export under ``scope`` (None: outside it)."""
    if not export_scope:
        return name
    prefix = export_scope.rstrip("/") + "/"
    carets = "^" if name.startswith("^") else ""
    bare = name[len(carets):]
    return carets + bare[len(prefix):] if bare.startswith(prefix) else None


def _prepend(name, import_scope):
    if not import_scope:
        return name
    return import_scope.rstrip("/") + "/" + name


# ---- Variables as protos (TF's VariableDef) --------------------------------------------------
def _variable_to_proto(var, export_scope):
    if not isinstance(var, Variable):
        return None
    names = {"variable_name": var.name, "initial_value_name": var.initial_value.name,
             "initializer_name": var.initializer.name, "snapshot_name": var.value().name}
    stripped = {key: _strip(value, export_scope) for key, value in names.items()}
    if any(value is None for value in stripped.values()):
        return None
    return _message_class("variable_pb2.VariableDef")(trainable=bool(var.trainable), **stripped)


def _variable_from_proto(variable_def, graph, import_scope):
    """Rebuilds a :class:`~minitf.ops.variables.Variable` around imported ops.

    Like TF's ``Variable(variable_def=...)`` it creates no op: it looks up the
    ``VariableV2``, its ``Assign`` initializer and ``read`` snapshot by name.
    """
    def element(name):
        return graph.as_graph_element(_prepend(name, import_scope))
    var = Variable.__new__(Variable)
    var._variable = element(variable_def.variable_name)
    var._initializer_op = element(variable_def.initializer_name)
    var._snapshot = element(variable_def.snapshot_name)
    var._initial_value = element(variable_def.initial_value_name)
    var._trainable = variable_def.trainable
    var._constraint = None
    return var


# The collections TF stores as VariableDefs (tensorflow/python/ops/variables.py).
for _key in (GraphKeys.GLOBAL_VARIABLES, GraphKeys.TRAINABLE_VARIABLES,
             GraphKeys.LOCAL_VARIABLES, GraphKeys.MODEL_VARIABLES, GraphKeys.METRIC_VARIABLES,
             GraphKeys.GLOBAL_STEP, "moving_average_variables"):
    register_proto_function(_key, "variable_pb2.VariableDef", _variable_to_proto,
                            _variable_from_proto)


# ---- export -------------------------------------------------------------------------------
def _collection_def(name, items, export_scope):
    """The ``CollectionDef`` of one collection, or None (logged) when it cannot be stored."""
    if not items:
        return None
    collection = protos.load("meta_graph_pb2").CollectionDef()
    if name in _PROTO_FUNCTIONS:
        to_proto = _PROTO_FUNCTIONS[name][1]
        messages = (to_proto(item, export_scope) for item in items)
        collection.bytes_list.value.extend(m.SerializeToString(deterministic=True)
                                           for m in messages if m is not None)
    elif all(isinstance(item, (Tensor, Operation, Variable)) for item in items):
        names = (_strip(item.name, export_scope) for item in items)
        collection.node_list.value.extend(n for n in names if n is not None)
    elif all(isinstance(item, (str, bytes)) for item in items):
        collection.bytes_list.value.extend(
            item.encode("utf-8") if isinstance(item, str) else item for item in items)
    elif all(isinstance(item, int) and not isinstance(item, bool) for item in items):
        collection.int64_list.value.extend(items)
    elif all(isinstance(item, (int, float)) and not isinstance(item, bool) for item in items):
        collection.float_list.value.extend(items)
    else:
        _logger.warning("Collection '%s' is not exported to the meta graph: it holds %s, which "
                        "minitf cannot serialize (register_proto_function adds a kind).",
                        name, ", ".join(sorted({type(item).__name__ for item in items})))
        return None
    return collection


def _scoped_graph_def(graph_def, export_scope, clear_devices):
    """A copy of ``graph_def`` with only the nodes under ``export_scope`` (scope
    stripped from every name) and, with ``clear_devices``, no device requests.

    Raises:
        ValueError: if a node under ``export_scope`` has an input outside it.
    """
    scoped = protos.load("graph_pb2").GraphDef()
    scoped.versions.CopyFrom(graph_def.versions)
    if graph_def.HasField("library"):
        scoped.library.CopyFrom(graph_def.library)
    for node in graph_def.node:
        name = _strip(node.name, export_scope)
        if name is None:
            continue
        inputs = [_strip(i, export_scope) for i in node.input]
        if None in inputs:
            raise ValueError("Op '%s' under export_scope '%s' has an input from outside it: %s"
                             % (node.name, export_scope, list(node.input)))
        copy = scoped.node.add()
        copy.CopyFrom(node)
        copy.name = name
        del copy.input[:]
        copy.input.extend(inputs)
        if clear_devices:
            copy.device = ""
    return scoped


def export_scoped_meta_graph(filename=None, graph_def=None, graph=None, export_scope=None,
                             as_text=False, clear_devices=False, saver_def=None,
                             collection_list=None, meta_info_def=None):
    """The ``MetaGraphDef`` of ``graph`` (default: the default graph), also written
    (atomically) to ``filename`` when given.

    Args:
        filename: where to write it, or None.
        graph_def: a ``GraphDef`` to use instead of ``graph.as_graph_def()``.
        graph: the graph.
        export_scope: export only the ops under this name scope, with the
            scope stripped from their names.
        as_text: write the text format instead of the binary one.
        clear_devices: drop device requests (to import on another machine).
        saver_def: a :class:`SaverDef` (or ``saver_pb2.SaverDef``) to include.
        collection_list: the collection names to export (default: all).
        meta_info_def: a ``MetaInfoDef`` merged into ``meta_info_def``.

    Raises:
        ValueError: if an op under ``export_scope`` has an input outside it.
    """
    graph = graph or graph_lib.get_default_graph()
    meta = protos.load("meta_graph_pb2").MetaGraphDef()
    meta.graph_def.CopyFrom(_scoped_graph_def(
        graph_def if graph_def is not None else graph.as_graph_def(), export_scope,
        clear_devices))
    info = meta.meta_info_def
    # TF parses tensorflow_version as a version number ("1.15.0"); which program
    # wrote the file goes in the free-form git version, as TF's "v1.15.0-g590d6ee".
    info.tensorflow_git_version = "minitf-" + __version__
    for op_type in sorted({node.op for node in meta.graph_def.node}):
        info.stripped_op_list.op.add(name=op_type)
    if meta_info_def is not None:
        info.MergeFrom(meta_info_def)
    keys = graph.get_all_collection_keys() if collection_list is None else collection_list
    # As in TF, only string keys are serialised: tuple keys mark private
    # bookkeeping (tf.layers' name counters), not part of the model.
    for key in sorted(key for key in keys if isinstance(key, str)):
        collection = _collection_def(key, graph.get_collection(key), export_scope)
        if collection is not None:
            meta.collection_def[key].CopyFrom(collection)
    if saver_def is not None:
        meta.saver_def.CopyFrom(saver_def.to_proto() if hasattr(saver_def, "to_proto")
                                else saver_def)
        for field in ("filename_tensor_name", "save_tensor_name", "restore_op_name"):
            setattr(meta.saver_def, field, _strip(getattr(meta.saver_def, field), export_scope))
    if filename:
        write_meta_graph_file(filename, meta, as_text)
    return meta


def write_meta_graph_file(filename, meta_graph_def, as_text=False):
    """Writes a ``MetaGraphDef``, binary or as text, atomically."""
    from google.protobuf import text_format  # not at import: protobuf takes ~40 ms to load
    if as_text:
        content = text_format.MessageToString(meta_graph_def).encode("utf-8")
    else:
        content = meta_graph_def.SerializeToString(deterministic=True)
    checkpoint_format.write_atomically(filename, content)


def read_meta_graph_file(filename):
    """Reads a ``.meta`` file, binary or text (``tf.train.read_meta_graph_file``...).

    Raises:
        OSError: if it does not exist, or holds no MetaGraphDef in either form.
    """
    try:
        with open(filename, "rb") as f:
            content = f.read()
    except FileNotFoundError:
        raise OSError("File %s does not exist." % filename) from None
    from google.protobuf import message, text_format
    meta_class = protos.load("meta_graph_pb2").MetaGraphDef
    try:
        meta = meta_class.FromString(content)
    except message.DecodeError:
        meta = None
    if meta is None or not (meta.HasField("graph_def") or meta.HasField("meta_info_def")):
        try:
            meta = text_format.Parse(content.decode("utf-8"), meta_class())
        except (UnicodeDecodeError, text_format.ParseError) as error:
            raise OSError("Cannot parse file %s: it is not a MetaGraphDef, in binary or text "
                          "form (%s)." % (filename, error)) from None
    return meta


# ---- import ---------------------------------------------------------------------------------
def import_scoped_meta_graph(meta_graph_or_file, clear_devices=False, graph=None,
                             import_scope=None):
    """Adds the graph and collections of a ``MetaGraphDef`` to ``graph``.

    Args:
        meta_graph_or_file: a ``MetaGraphDef`` or the path of a ``.meta`` file.
        clear_devices: ignore the ops' device requests.
        graph: the target graph (default: the default graph).
        import_scope: put every imported name under this scope.

    Returns:
        A dict ``{name: Variable}`` of the imported variables.

    Raises:
        ValueError: if an imported op's name is already taken in ``graph``,
            the graph is malformed (see :func:`~minitf.framework.graph_def.
            import_graph_def`), or a collection's proto is damaged or names
            an op the graph does not have.
    """
    meta = meta_graph_or_file
    if isinstance(meta, str):
        meta = read_meta_graph_file(meta)
    graph = graph or graph_lib.get_default_graph()
    graph_def = _scoped_graph_def(meta.graph_def, None, clear_devices) if clear_devices \
        else meta.graph_def
    graph_def_lib.import_graph_def(
        graph_def, name=(import_scope.rstrip("/") + "/") if import_scope else "", graph=graph)
    rebuilt = {}  # one object per proto, even if it is in several collections
    for key, collection in sorted(meta.collection_def.items()):
        for value in _collection_values(key, collection, graph, import_scope, rebuilt):
            graph.add_to_collection(key, value)
    return {v.op.name: v for v in rebuilt.values() if isinstance(v, Variable)}


def _rebuilt(key, number, proto_type, serialized, from_proto, graph, import_scope):
    """The object one serialized proto of collection ``key`` describes.

    Raises:
        ValueError: if the bytes are not a ``proto_type`` message, or the
            message names ops or tensors the graph does not have (TF raises
            a raw ``DecodeError``/``KeyError`` here).
    """
    try:
        message = _message_class(proto_type).FromString(serialized)
    except Exception as e:  # protobuf's DecodeError
        raise ValueError("Collection '%s': value %d is not a serialized %s (%s)"
                         % (key, number, proto_type, e)) from None
    try:
        return from_proto(message, graph, import_scope)
    except KeyError as e:
        raise ValueError("Collection '%s': value %d names something the graph does not have: "
                         "%s" % (key, number, e.args[0] if e.args else e)) from None


def _collection_values(key, collection, graph, import_scope, rebuilt):
    kind = collection.WhichOneof("kind")
    if kind is None:
        return []
    values = getattr(collection, kind).value
    if kind == "node_list":
        found = []
        for name in values:
            try:
                found.append(graph.as_graph_element(_prepend(name, import_scope)))
            except (KeyError, ValueError):
                _logger.warning("Collection '%s': %s is not in the graph; skipped", key, name)
        return found
    if kind == "bytes_list" and key in _PROTO_FUNCTIONS:
        proto_type, _, from_proto = _PROTO_FUNCTIONS[key]
        objects = []
        for number, serialized in enumerate(values):
            if serialized not in rebuilt:
                rebuilt[serialized] = _rebuilt(key, number, proto_type, serialized, from_proto,
                                               graph, import_scope)
            objects.append(rebuilt[serialized])
        return objects
    if kind == "float_list":
        return [float(str(np.float32(v))) for v in values]  # the shortest decimal of the float32
    return list(values)
