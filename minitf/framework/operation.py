"""``tf.Operation``: one node of the dataflow graph.

An Operation has a type (``"MatMul"``), a unique name, input tensors, control
inputs (ops that must run first though no data flows), attrs, a requested
device and output tensors.  It also remembers the ``file:line`` of the user
code that created it, so run-time errors can point there.

Mirrors ``tf.Operation`` in ``tensorflow/python/framework/ops.py``.
"""

import os
import sys

from minitf.framework.tensor import Tensor
from minitf.registry.registry import plugin_locations

_MINITF_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The code objects of functions marked with hide_from_call_site.
_hidden_code = set()


def hide_from_call_site(fn):
    """Marks ``fn`` as API code: :func:`user_call_site` passes over its frames.

    For a wrapper that builds ops but lives outside minitf and outside any
    plugin package (``minitf.plugin.api_wrapper`` is the public name).
    Returns ``fn`` itself.
    """
    _hidden_code.add(fn.__code__)
    return fn


def user_call_site():
    """``(filename, lineno)`` of the innermost frame of the *user's* code.

    Passed over are frames inside the minitf package, inside the package of a
    loaded plugin (:func:`~minitf.registry.registry.plugin_locations`), of a
    function marked with :func:`hide_from_call_site`, and of a function that
    sets ``__tracebackhide__`` (pytest's convention for helpers) — so an error
    points at the line that called ``tf.add`` or a plugin's ``swish``, not at
    the wrapper in between.

    In a notebook the "file" of a cell is a temporary file of the kernel; it
    is named as IPython names it in tracebacks (``Cell In[3]``) instead.
    """
    directories, files = plugin_locations()
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        path = os.path.abspath(code.co_filename)
        if not (path.startswith(_MINITF_DIR) or path.startswith(directories) or path in files
                or code in _hidden_code or _hides_itself(frame)):
            return _cell_name(code.co_filename), frame.f_lineno
        frame = frame.f_back
    return "<unknown>", 0


def _hides_itself(frame):
    """True when the frame's function set ``__tracebackhide__`` to a true value."""
    return ("__tracebackhide__" in frame.f_code.co_varnames
            and bool(frame.f_locals.get("__tracebackhide__")))


def _cell_name(filename):
    """``"Cell In[N]"`` for the code of a notebook cell (IPython running), else ``filename``."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    label = shell.compile.format_code_name(filename) if shell is not None else None
    return "%s %s" % label if label else filename


class Operation:
    """A node in a :class:`~minitf.framework.graph.Graph`.

    Operations are created by op constructors (``tf.add`` ...) through
    ``Graph.create_op``; users do not build them directly.
    """

    def __init__(self, graph, op_def, name, inputs, attrs, output_dtypes,
                 control_inputs=(), device=""):
        self._graph = graph
        self._op_def = op_def
        self._name = name
        self._inputs = tuple(inputs)
        self._attrs = dict(attrs)
        self._control_inputs = list(control_inputs)
        self._device = device
        self._outputs = [Tensor(self, i, dtype) for i, dtype in enumerate(output_dtypes)]
        self._id = None
        self._traceback = user_call_site()
        self._colocation_groups = []
        self._control_flow_context = None  # the cond/while context that built it

    @property
    def name(self):
        return self._name

    @property
    def type(self):
        return self._op_def.name

    @property
    def op_def(self):
        return self._op_def

    @property
    def graph(self):
        return self._graph

    @property
    def inputs(self):
        return self._inputs

    @property
    def outputs(self):
        return list(self._outputs)

    def values(self):
        return tuple(self._outputs)

    @property
    def control_inputs(self):
        return list(self._control_inputs)

    @property
    def device(self):
        return self._device

    def _set_device(self, device):
        self._device = device

    @property
    def node_def(self):
        """This op as TF's ``NodeDef`` protocol buffer (see :mod:`~minitf.framework.graph_def`)."""
        from minitf.framework.graph_def import node_def
        return node_def(self)

    @property
    def traceback(self):
        """``(filename, lineno)`` of the user code that created this op."""
        return self._traceback

    @property
    def creation_site(self):
        return "%s:%d" % self._traceback

    def get_attr(self, name):
        """Returns the value of attr ``name``.  Raises ``ValueError`` if absent.

        An attr the op's creator left out has its declared default (typed
        attrs record it on the op; see :mod:`~minitf.framework.op_attrs`).

        ``"T"``, TF's element-type attr of type-polymorphic ops, is derived
        from the inputs (see :meth:`_type_attr`) rather than stored, so a TF1
        gradient function calling ``op.get_attr("T")`` works unchanged.
        """
        if name in self._attrs:
            return self._attrs[name]
        dtype = self._type_attr() if name == "T" else None
        if dtype is not None:
            return dtype
        if self._op_def.attrs.get(name) is not None:  # an untyped attr left at its default
            return self._op_def.attrs[name]
        raise ValueError("Operation '%s' has no attr named '%s'." % (self._name, name))

    def _type_attr(self):
        """The dtype of the op's type-checked input: the first of its
        ``same_dtype_inputs``, else its first input when it has a
        ``type_constraint``; None for ops without such an input."""
        op_def = self._op_def
        names = [n.rstrip("*") for n in op_def.inputs]
        if op_def.same_dtype_inputs:
            index = names.index(op_def.same_dtype_inputs[0])
        elif op_def.type_constraint:
            index = 0
        else:
            return None
        if any(n.endswith("*") for n in op_def.inputs[:index]) or index >= len(self._inputs):
            return None  # inputs before it are lists: no fixed position
        return self._inputs[index].dtype.base_dtype

    @property
    def attrs(self):
        return dict(self._attrs)

    def colocation_groups(self):
        return list(self._colocation_groups) or ["loc:@" + self._name]

    def _add_control_input(self, op):
        self._graph._check_not_finalized()
        if op not in self._control_inputs:
            self._control_inputs.append(op)

    def _add_control_inputs(self, ops):
        for op in ops:
            self._add_control_input(op)

    def _remove_control_input(self, op):
        self._graph._check_not_finalized()
        self._control_inputs.remove(op)

    def _update_input(self, index, tensor):
        """Rewires input ``index`` to ``tensor`` (TF's ``Operation._update_input``).

        Control flow needs it: a loop's ``Merge`` is built before the
        ``NextIteration`` that closes the loop, and a value entering a loop
        context is replaced by its ``Enter``.
        """
        self._graph._check_not_finalized()
        old = self._inputs[index]
        old._consumers.remove(self)
        tensor._consumers.append(self)
        self._inputs = self._inputs[:index] + (tensor,) + self._inputs[index + 1:]

    def _get_control_flow_context(self):
        return self._control_flow_context

    def _set_control_flow_context(self, context):
        self._control_flow_context = context

    def run(self, feed_dict=None, session=None):
        """Runs this op in ``session`` (default: the default session)."""
        from minitf.framework.default_session import run_in_default_session
        run_in_default_session(self, feed_dict, session)

    def _as_graph_element(self):
        return self

    def __repr__(self):
        return "<tf.Operation '%s' type=%s>" % (self._name, self.type)

    def __str__(self):
        return str(self.node_def)
