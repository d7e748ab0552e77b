"""MetaGraphDef: a graph plus what a program needs to keep using it.

A checkpoint holds values; the ``.meta`` file next to it holds the program:

``graph_def``
    every op (:mod:`minitf.framework.graph_def`), and in ``library`` the
    functions ``Dataset.map``/``filter`` traced (:mod:`minitf.data.function`);
``collection_def``
    the graph's collections, by name — ``variables`` and
    ``trainable_variables`` (so ``tf.global_variables()`` works after an
    import), ``train_op``, ``losses`` ...;
``saver_def``
    the names of the Saver's ops (:class:`~minitf.train.saver_builder.SaverDef`);
``meta_info_def``
    the op types used, the minitf version, free-form tags.

``tf.train.import_meta_graph("model.ckpt-100.meta")`` rebuilds all of it in
the default graph without the code that built it, and returns a Saver to
restore the values with.  The file is JSON (no pickle)::

    {"format": "minitf-meta-graph", "version": 1,
     "meta_info_def": {...}, "graph_def": {...}, "saver_def": {...},
     "collection_def": {"train_op": {"node_list": ["GradientDescent"]},
                        "variables": {"proto_list": {"kind": "Variable",
                                                     "value": [{"variable_name": "w:0", ...}]}},
                        "my_ints": {"int64_list": [1, 2]}}}

A collection is stored by the kind of its items: ``node_list`` for Tensors
and Operations (by name), ``bytes_list``/``int64_list``/``float_list`` for
strings and numbers, and ``proto_list`` for objects whose class registered a
(to_proto, from_proto) pair with :func:`register_proto_function` — Variables
do here, Savers in :mod:`minitf.train.saver`.  Collections of anything else
are skipped with a warning, as TF does.  (TF keys proto functions by
collection name; minitf keys them by the items' class, so e.g. the
``global_step`` collection's Variable is rebuilt as a Variable too.)

Mirrors ``tensorflow/python/framework/meta_graph.py``.
"""

import json
import logging

from minitf.data import function as function_lib  # tf.data's traced functions: the library
from minitf.framework import graph as graph_lib
from minitf.framework import graph_def as graph_def_lib
from minitf.framework.operation import Operation
from minitf.framework.tensor import Tensor
from minitf.framework.versions import __version__
from minitf.ops.variables import Variable
from minitf.train import checkpoint_format

_logger = logging.getLogger("minitf.train")

META_GRAPH_FORMAT = "minitf-meta-graph"
META_GRAPH_VERSION = 1

# kind -> (python class, to_proto(value, export_scope), from_proto(record, graph, import_scope))
_PROTO_FUNCTIONS = {}


def register_proto_function(kind, python_type, to_proto, from_proto):
    """Lets collections of ``python_type`` objects travel in a MetaGraphDef.

    Args:
        kind: the name recorded in the file (e.g. ``"Variable"``).
        python_type: the class whose instances this handles.
        to_proto: ``to_proto(value, export_scope) -> JSON-compatible dict``.
        from_proto: ``from_proto(record, graph, import_scope) -> object``.
    """
    _PROTO_FUNCTIONS[kind] = (python_type, to_proto, from_proto)


def _kind_of(value):
    for kind, (python_type, _, _) in _PROTO_FUNCTIONS.items():
        if isinstance(value, python_type):
            return kind
    return None


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
    names = {"variable_name": var.name, "initial_value_name": var.initial_value.name,
             "initializer_name": var.initializer.name, "snapshot_name": var.value().name}
    record = {key: _strip(value, export_scope) for key, value in names.items()}
    if any(value is None for value in record.values()):
        return None
    record["trainable"] = bool(var.trainable)
    return record


def _variable_from_proto(record, graph, import_scope):
    """Rebuilds a :class:`~minitf.ops.variables.Variable` around imported ops.

    Like TF's ``Variable(variable_def=...)`` it creates no op: it looks up the
    ``VariableV2``, its ``Assign`` initializer and ``read`` snapshot by name.
    """
    def element(key):
        return graph.as_graph_element(_prepend(record[key], import_scope))
    var = Variable.__new__(Variable)
    var._variable = element("variable_name")
    var._initializer_op = element("initializer_name")
    var._snapshot = element("snapshot_name")
    var._initial_value = element("initial_value_name")
    var._trainable = record.get("trainable", True)
    var._constraint = None
    return var


register_proto_function("Variable", Variable, _variable_to_proto, _variable_from_proto)


# ---- export -------------------------------------------------------------------------------
def _collection_record(name, items, export_scope):
    """The CollectionDef of one collection, or None (logged) when it cannot be stored."""
    if not items:
        return None
    kinds = {_kind_of(item) for item in items}
    if len(kinds) == 1 and None not in kinds:
        kind = kinds.pop()
        to_proto = _PROTO_FUNCTIONS[kind][1]
        values = [to_proto(item, export_scope) for item in items]
        return {"proto_list": {"kind": kind, "value": [v for v in values if v is not None]}}
    if all(isinstance(item, (Tensor, Operation)) for item in items):
        names = [_strip(item.name, export_scope) for item in items]
        return {"node_list": [n for n in names if n is not None]}
    if all(isinstance(item, (str, bytes)) for item in items):
        return {"bytes_list": [item.decode("utf-8") if isinstance(item, bytes) else item
                               for item in items]}
    if all(isinstance(item, int) and not isinstance(item, bool) for item in items):
        return {"int64_list": list(items)}
    if all(isinstance(item, (int, float)) and not isinstance(item, bool) for item in items):
        return {"float_list": [float(item) for item in items]}
    _logger.warning("Collection '%s' is not exported to the meta graph: it holds %s, which "
                    "minitf cannot serialize (register_proto_function adds a kind).",
                    name, ", ".join(sorted({type(item).__name__ for item in items})))
    return None


def export_scoped_meta_graph(filename=None, graph_def=None, graph=None, export_scope=None,
                             clear_devices=False, saver_def=None, collection_list=None,
                             meta_info_def=None):
    """The MetaGraphDef dict of ``graph`` (default: the default graph), also written
    (atomically) to ``filename`` when given.

    Args:
        filename: where to write the JSON, or None.
        graph_def: a GraphDef dict to use instead of ``graph.as_graph_def()``.
        graph: the graph.
        export_scope: export only the ops under this name scope, with the
            scope stripped from their names.
        clear_devices: drop device requests (to import on another machine).
        saver_def: a :class:`SaverDef` (or its dict) to include.
        collection_list: the collection names to export (default: all).
        meta_info_def: a dict merged into ``meta_info_def``.

    Raises:
        ValueError: if an op under ``export_scope`` has an input outside it.
    """
    graph = graph or graph_lib.get_default_graph()
    graph_def = graph_def if graph_def is not None else graph.as_graph_def()
    nodes = []
    for record in graph_def["node"]:
        record = dict(record)
        if export_scope:
            stripped = _strip(record["name"], export_scope)
            if stripped is None:
                continue
            inputs = [_strip(i, export_scope) for i in record["input"]]
            if None in inputs:
                raise ValueError("Op '%s' under export_scope '%s' has an input from outside it: "
                                 "%s" % (record["name"], export_scope, record["input"]))
            record["name"], record["input"] = stripped, inputs
        if clear_devices:
            record["device"] = ""
        nodes.append(record)
    info = {"meta_graph_version": "", "tags": [], "minitf_version": __version__,
            "stripped_op_list": sorted({r["op"] for r in nodes})}
    info.update(meta_info_def or {})
    collection_def = {}
    keys = graph.get_all_collection_keys() if collection_list is None else collection_list
    # As in TF, only string keys are serialised: tuple keys mark private
    # bookkeeping (tf.layers' name counters), not part of the model.
    for key in sorted(key for key in keys if isinstance(key, str)):
        record = _collection_record(key, graph.get_collection(key), export_scope)
        if record is not None:
            collection_def[key] = record
    exported_graph_def = {"versions": graph_def.get("versions", {}), "node": nodes}
    library = function_lib.library_records(graph)
    if library:
        exported_graph_def["library"] = library
    meta = {"format": META_GRAPH_FORMAT, "version": META_GRAPH_VERSION,
            "meta_info_def": info, "graph_def": exported_graph_def,
            "collection_def": collection_def}
    if saver_def is not None:
        meta["saver_def"] = saver_def if isinstance(saver_def, dict) else saver_def.to_dict()
        if export_scope:
            for key in ("filename_tensor_name", "save_tensor_name", "restore_op_name"):
                meta["saver_def"][key] = _strip(meta["saver_def"][key], export_scope)
    if filename:
        write_meta_graph_file(filename, meta)
    return meta


def write_meta_graph_file(filename, meta_graph_def):
    """Writes a MetaGraphDef dict as JSON, atomically."""
    text = json.dumps(meta_graph_def, separators=(",", ":"), sort_keys=True)
    checkpoint_format.write_atomically(filename, text.encode("utf-8"))


def read_meta_graph_file(filename):
    """Reads a ``.meta`` file.

    Raises:
        OSError: if it does not exist.
        ValueError: if it is not a minitf MetaGraphDef (e.g. damaged or from TF).
    """
    try:
        with open(filename, "rb") as f:
            content = f.read()
    except FileNotFoundError:
        raise OSError("File %s does not exist." % filename) from None
    try:
        meta = json.loads(content.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise ValueError("%s is not a minitf meta graph file (not valid JSON: %s). Files "
                         "written by TensorFlow are protocol buffers, which minitf does not "
                         "read." % (filename, e)) from None
    if not isinstance(meta, dict) or meta.get("format") != META_GRAPH_FORMAT:
        raise ValueError("%s is not a minitf meta graph file (no \"format\": \"%s\")"
                         % (filename, META_GRAPH_FORMAT))
    return meta


# ---- import ---------------------------------------------------------------------------------
def import_scoped_meta_graph(meta_graph_or_file, clear_devices=False, graph=None,
                             import_scope=None):
    """Adds the graph and collections of a MetaGraphDef to ``graph``.

    Args:
        meta_graph_or_file: a MetaGraphDef dict or the path of a ``.meta`` file.
        clear_devices: ignore the ops' device requests.
        graph: the target graph (default: the default graph).
        import_scope: put every imported name under this scope.

    Returns:
        A dict ``{name: Variable}`` of the imported variables.

    Raises:
        ValueError: if an imported op's name is already taken in ``graph``.
    """
    meta = meta_graph_or_file
    if isinstance(meta, str):
        meta = read_meta_graph_file(meta)
    graph = graph or graph_lib.get_default_graph()
    graph_def = meta["graph_def"]
    if clear_devices:
        graph_def = dict(graph_def, node=[dict(r, device="") for r in graph_def["node"]])
    graph_def_lib.import_graph_def(
        graph_def, name=(import_scope.rstrip("/") + "/") if import_scope else "", graph=graph)
    function_lib.add_library_records(graph, graph_def.get("library", {}))
    cache = {}
    for key, record in sorted(meta.get("collection_def", {}).items()):
        for value in _collection_values(key, record, graph, import_scope, cache):
            graph.add_to_collection(key, value)
    return {v.op.name: v for (kind, _), v in cache.items() if kind == "Variable"}


def _collection_values(key, record, graph, import_scope, cache):
    (kind, values), = record.items()
    if kind == "node_list":
        found = []
        for name in values:
            try:
                found.append(graph.as_graph_element(_prepend(name, import_scope)))
            except (KeyError, ValueError):
                _logger.warning("Collection '%s': %s is not in the graph; skipped", key, name)
        return found
    if kind in ("bytes_list", "int64_list", "float_list"):
        return list(values)
    if kind == "proto_list":
        proto_kind = values["kind"]
        if proto_kind not in _PROTO_FUNCTIONS:
            _logger.warning("Collection '%s' holds %s objects, which no registered proto "
                            "function rebuilds; skipped", key, proto_kind)
            return []
        from_proto = _PROTO_FUNCTIONS[proto_kind][2]
        objects = []
        for item in values["value"]:
            cache_key = (proto_kind, item.get("variable_name") or json.dumps(item, sort_keys=True))
            if cache_key not in cache:  # one object even if it is in several collections
                cache[cache_key] = from_proto(item, graph, import_scope)
            objects.append(cache[cache_key])
        return objects
    _logger.warning("Collection '%s' has unknown kind %r; skipped", key, kind)
    return []
