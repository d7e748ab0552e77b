"""``tf.custom_gradient``: a Python function whose gradient you write yourself.

The decorated function returns its result *and* the function computing the
result's gradient::

    @tf.custom_gradient
    def log1pexp(x):
        e = tf.exp(x)
        def grad(dy):
            return dy * (1 - 1 / (1 + e))      # stable where the automatic one is not
        return tf.log(1 + e), grad

TF1 builds this in the graph without any new machinery, and so does minitf
(TF's ``custom_gradient._graph_mode_decorator``):

1. the function runs and builds its forward ops as usual;
2. its results, its inputs and the variables it used go through one
   ``IdentityN`` op, built under ``gradient_override_map({"IdentityN": name})``
   where ``name`` is a fresh gradient registered for this call;
3. the decorator returns IdentityN's outputs for the results.

``tf.gradients`` of those outputs reaches the IdentityN, whose overriding
gradient calls ``grad_fn(dy)`` and hands its answers to IdentityN's inputs:
the function's inputs and variables.  The forward ops inside the function get
no gradient through the results (the override gives them None), so only
``grad_fn`` decides.

A function that uses variables (reads a ``tf.Variable`` it did not receive
as an argument) must have a ``grad_fn(dy, variables=None)`` returning
``(input gradients, variable gradients)``, one per variable in ``variables``.
"""

import inspect
import itertools

from minitf.framework.graph import GraphKeys, get_default_graph
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.ops.array_util import output_list
from minitf.ops.control_flow_context import flatten, pack_sequence_as
from minitf.ops.op_def_library import apply_op, define_op, gradient
from minitf.registry import get_registry

_uids = itertools.count(1)


# ---- IdentityN: the op custom_gradient hangs its gradient on ------------------------------
_identity_n = define_op(
    "IdentityN", inputs=("input*",), attrs={"T": None},
    num_outputs=lambda attrs: len(attrs["T"]),
    dtype_fn=lambda op: [t.dtype.base_dtype for t in op.inputs],
    shape_fn=lambda op: [t.shape for t in op.inputs],
    doc="Returns its inputs, of any dtypes, as one op.")


def identity_n(input, name=None):  # noqa: A002
    """Returns a list of tensors with the values of ``input``, through one op
    (``tf.identity_n``): unlike ``tf.identity`` the inputs may differ in dtype."""
    tensors = [convert_to_tensor(t) for t in input]
    return output_list(apply_op(_identity_n, [tensors],
                                attrs={"T": [t.dtype.base_dtype for t in tensors]},
                                name=name or "IdentityN"))


@gradient("IdentityN")
def _identity_n_grad(op, *grads):
    return list(grads)


# ---- the decorator ----------------------------------------------------------------------
def custom_gradient(f):
    """Decorator giving ``f`` the gradient its own ``grad_fn`` computes
    (``tf.custom_gradient``, TF1 graph-mode semantics).

    ``f(*tensors)`` returns ``(y, grad_fn)``: ``y`` a tensor or a nested
    structure of tensors, ``grad_fn(*dys)`` the gradients of ``f``'s inputs
    given one gradient per tensor of ``y`` (one tensor, or a list of one per
    input).  When ``f`` reads variables, ``grad_fn(*dys, variables=None)``
    returns ``(input grads, variable grads)``.

    Raises:
        ValueError: when the decorated function is called with keyword
            arguments (TF1 accepts them only eagerly).
        TypeError: when it is called and ``f`` uses variables but
            ``grad_fn`` has no ``variables`` argument.
    """
    def decorated(*args, **kwargs):
        if kwargs:
            raise ValueError("The custom_gradient decorator currently supports keywords "
                             "arguments only when eager execution is enabled.")
        return _graph_mode_call(f, args)

    decorated.__name__ = getattr(f, "__name__", "custom_gradient")
    decorated.__doc__ = f.__doc__
    decorated.__wrapped__ = f
    return decorated


def _graph_mode_call(f, args):
    graph = get_default_graph()
    args = [convert_to_tensor(x) for x in args]
    first_new_op = len(graph.get_operations())
    result, grad_fn = f(*args)
    variables = _variables_used(graph, graph.get_operations()[first_new_op:])
    takes_variables = _accepts_variables(grad_fn)
    if variables and not takes_variables:
        raise TypeError("If using @custom_gradient with a function that uses variables, then "
                        "grad_fn must accept a keyword argument 'variables'. %s uses: %s"
                        % (_name(f), ", ".join(v.name for v in variables)))
    flat_result = [convert_to_tensor(t) for t in flatten(result)]
    name = "CustomGradient-%d" % next(_uids)

    def override(op, *result_grads):
        result_grads = result_grads[:len(flat_result)]
        if variables:
            input_grads, variable_grads = grad_fn(*result_grads, variables=variables)
            variable_grads = list(variable_grads)
            if len(variable_grads) != len(variables):
                raise ValueError("Must return gradient for each variable from @custom_gradient "
                                 "grad_fn (%s: %d gradients for %d variables)"
                                 % (_name(f), len(variable_grads), len(variables)))
        else:
            input_grads, variable_grads = grad_fn(*result_grads), []
        input_grads = flatten(input_grads)
        if len(input_grads) != len(args):
            raise ValueError("@custom_gradient grad_fn of %s returned %d gradients for %d inputs"
                             % (_name(f), len(input_grads), len(args)))
        return [None] * len(flat_result) + input_grads + variable_grads

    get_registry().register_gradient(name, override, site=_site(f))
    with graph.gradient_override_map({"IdentityN": name}):
        passed = identity_n(flat_result + args + [v.value() for v in variables])
    return pack_sequence_as(result, passed[:len(flat_result)])


def _variables_used(graph, new_ops):
    """The graph's variables that an op among ``new_ops`` reads, in collection order."""
    read = {id(t) for op in new_ops for t in op.inputs}
    candidates = (graph.get_collection(GraphKeys.GLOBAL_VARIABLES)
                  + graph.get_collection(GraphKeys.LOCAL_VARIABLES))
    used = {}
    for variable in candidates:
        if id(variable.value()) in read or id(variable._ref()) in read:
            used.setdefault(id(variable), variable)
    return list(used.values())


def _accepts_variables(grad_fn):
    parameters = inspect.signature(grad_fn).parameters.values()
    return any(p.name == "variables" or p.kind is p.VAR_KEYWORD for p in parameters)


def _name(f):
    return "'%s'" % getattr(f, "__name__", repr(f))


def _site(f):
    code = getattr(inspect.unwrap(f), "__code__", None)
    return None if code is None else "%s:%d" % (code.co_filename, code.co_firstlineno)
