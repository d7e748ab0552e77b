"""Checking an op against its declaration while the graph is built.

Two checks run in ``Graph.create_op``, so a mistake is reported at the line
that made the op rather than when a session runs it:

* :func:`checked_attrs`: the attrs given match the op's typed declarations
  (:class:`~minitf.registry.op_def.AttrSpec`, ``"alpha: float = 0.2"``).
  An unknown attr, a missing required one or a value of the wrong kind is a
  ``TypeError``; an int below its minimum, a list too short or a string
  outside its enum is a ``ValueError``.  The defaults of the attrs left out
  are recorded, so ``op.get_attr("alpha")`` answers in a gradient function.
  These are the checks and messages of TF's ``_apply_op_helper``
  (``tensorflow/python/framework/op_def_library.py``).
* :func:`check_kernel_dtypes`: an op whose dtypes its type constraint
  accepts, but which no registered kernel on any device takes, is a
  ``TypeError`` listing the dtypes the kernels do take (TF fails only when
  the step runs: "No registered 'Relu' OpKernel ...").

Ops declared with the untyped ``{name: default}`` dict, and ops with no
kernel at all (graph-construction ops, functions, control flow run by the
executor), are not checked.
"""

import functools
import numbers

import numpy as np

from minitf.framework import dtypes as dtypes_lib
from minitf.framework import tf_op_defs
from minitf.framework.tensor_shape import TensorShape


def checked_attrs(op_def, attrs, op_name):
    """``attrs`` with every declared attr: converted to its kind, defaults filled in.

    Private attrs (``_class``, ``_gradient_op_type``) pass unchecked, and so
    do the attrs TF's own OpDef of the op has (an imported NodeDef's ``T``,
    ``data_format``...: the importer checked them).  An op declared with the
    untyped dict gets ``attrs`` back unchanged.

    Raises:
        TypeError: an unknown attr, a missing required attr, a value of the
            wrong kind, a dtype outside the allowed ones.
        ValueError: an int below its minimum, a list shorter than its minimum,
            a string outside its enum.
    """
    if not op_def.attr_specs:
        return attrs
    where = "op '%s' of type %s" % (op_name, op_def.name)
    specs = {spec.name: spec for spec in op_def.attr_specs if not spec.inferred}
    passed = {name: value for name, value in attrs.items() if name not in specs}
    for name in passed:
        if not name.startswith("_") and name not in _tf_attr_names(op_def.name):
            _refuse_unknown(op_def, name, where)
    checked = dict(passed)
    for spec in specs.values():
        if spec.name in attrs:
            value = attrs[spec.name]
        elif spec.required:
            raise TypeError("No argument found for attr %s for %s (%s): it has no default"
                            % (spec.name, op_def.name, where))
        else:
            value = spec.default
        checked[spec.name] = _checked_value(spec, value, op_def.name, where)
    return checked


def _refuse_unknown(op_def, name, where):
    if any(spec.inferred and spec.name == name for spec in op_def.attr_specs):
        raise TypeError("Should not specify value for inferred attr '%s' for %s (%s): it is "
                        "the dtype of the inputs" % (name, op_def.name, where))
    raise TypeError("%s got an unexpected attr '%s' (%s; its attrs: %s)"
                    % (op_def.name, name, where, ", ".join(sorted(op_def.attrs)) or "none"))


@functools.lru_cache(maxsize=None)
def _tf_attr_names(op_type):
    """The attrs TF's own OpDef of ``op_type`` has: those of an imported NodeDef
    (``T``, ``use_cudnn_on_gpu``...) are kept, unchecked, to be written back
    (the importer has refused the values minitf cannot honour)."""
    definition = tf_op_defs.op_def(op_type)
    return frozenset() if definition is None else frozenset(a.name for a in definition.attr)


def _checked_value(spec, value, op_type, where):
    if value is None and spec.default is None:
        return None  # declared "= None": the attr may be left unset
    if spec.kind == spec.item_kind:
        value = _converted(spec.kind, value, spec.name, where)
        _check_allowed(spec, value, op_type, where)
        if spec.minimum is not None and value < spec.minimum:
            raise ValueError("Attr '%s' of '%s' Op passed %d less than minimum %d (%s)."
                             % (spec.name, op_type, value, spec.minimum, where))
        return value
    if not isinstance(value, (list, tuple)):
        raise TypeError("Expected list for attr %s, obtained %s instead (%s)."
                        % (spec.name, type(value).__name__, where))
    items = [_converted(spec.item_kind, item, spec.name, where) for item in value]
    for item in items:
        _check_allowed(spec, item, op_type, where)
    if spec.minimum is not None and len(items) < spec.minimum:
        raise ValueError("Attr '%s' of '%s' Op passed list of length %d less than minimum %d "
                         "(%s)." % (spec.name, op_type, len(items), spec.minimum, where))
    return items


def _check_allowed(spec, value, op_type, where):
    if spec.allowed is None or value in spec.allowed:
        return
    if spec.item_kind == "type":
        raise TypeError("Value passed to parameter '%s' has DataType %s not in list of allowed "
                        "values: %s (%s)" % (spec.name, value.name,
                                             ", ".join(d.name for d in spec.allowed), where))
    raise ValueError("Attr '%s' of '%s' Op passed string '%s' not in: \"%s\" (%s)."
                     % (spec.name, op_type, value, '", "'.join(spec.allowed), where))


def _converted(kind, value, name, where):
    """``value`` as the Python value of attr kind ``kind`` (TF's ``_MakeInt`` ...)."""
    try:
        return _CONVERTERS[kind](value)
    except (TypeError, ValueError):
        raise TypeError("Expected %s for argument '%s' not %r (%s)."
                        % (_KIND_NAMES.get(kind, kind), name, value, where)) from None


def _int(value):
    if isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return int(value)
    raise TypeError(value)


def _float(value):
    if isinstance(value, (numbers.Real, np.integer, np.floating)) and not isinstance(value, bool):
        return float(value)
    raise TypeError(value)


def _bool(value):
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise TypeError(value)


def _string(value):
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, str):
        return value
    raise TypeError(value)


def _shape(value):
    return value if isinstance(value, TensorShape) else TensorShape(value)


_CONVERTERS = {
    "int": _int, "float": _float, "bool": _bool, "string": _string,
    "type": dtypes_lib.as_dtype, "shape": _shape,
    "tensor": lambda value: value, "func": _string,
}
_KIND_NAMES = {"type": "DataType", "shape": "a TensorShape", "tensor": "a tensor",
               "func": "a function name"}


# ---- kernels ------------------------------------------------------------------------------
def kernel_dtypes(op):
    """The dtypes a kernel is chosen by: the inputs', or the outputs' for sources."""
    tensors = op.inputs or op.outputs
    return tuple(t.dtype.base_dtype for t in tensors)


def check_kernel_dtypes(op, registry):
    """Refuses an op with a type constraint when no kernel of it takes its dtypes.

    Only ops with a ``type_constraint`` and at least one kernel are checked:
    an op with no kernel anywhere is run by the executor itself, or is
    rewritten away before it runs.

    Raises:
        TypeError: naming the op and listing the kernels' dtypes per device type.
    """
    if op.op_def.type_constraint is None:
        return
    dtype_sets = registry.kernel_dtype_sets(op.type)
    if not dtype_sets:
        return
    dtypes = kernel_dtypes(op)
    if any(s is None or all(d in s for d in dtypes) for s in dtype_sets):
        return
    offered = ["%s: %s" % (k.device_type, ", ".join(sorted(d.name for d in k.dtypes)))
               for k in registry.kernel_defs(op.type)]
    raise TypeError("No kernel of op %s takes input dtypes [%s] (op '%s' of type %s); its "
                    "registered kernels take: %s"
                    % (op.type, ", ".join(d.name for d in dtypes), op.name, op.type,
                       "; ".join(offered)))
