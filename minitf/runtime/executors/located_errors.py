"""Errors that name the user's op and the line that created it.

A kernel raises whatever it raises (a NumPy ``ValueError``, an ``OpError``
from ``ctx.invalid_argument``).  Every executor turns that into a
``tf.errors`` class whose message ends as TF's do::

    [[node layer/add (defined at train.py:12) ]]

The op that ran is often a copy — in the step's graph the master built, in a
device's partition, in a device process's graph rebuilt from a GraphDef — so
the error is about the op of the *user's* graph it was copied from
(``op._original_op``).
"""

import re

import numpy as np

from minitf.framework import errors
from minitf.runtime.planning.step_graph import user_op

_NODE_LOCATION = re.compile(r"\[\[node (\S+) \(defined at [^\n]*?\) \]\]")


def _where(op):
    return "[[node %s (defined at %s:%d) ]]" % ((op.name,) + tuple(op.traceback))


def located_error(error, op):
    """``error`` as a ``tf.errors`` class whose message names ``op`` and its origin."""
    op = user_op(op)
    where = "\n\t " + _where(op)
    if isinstance(error, errors.OpError):
        if error.op is not None and "[[node" in error.message:
            return error
        return type(error)(op.node_def, op, error.message + where)
    if isinstance(error, (ValueError, IndexError, ArithmeticError, np.linalg.LinAlgError)):
        cls = errors.InvalidArgumentError
    elif isinstance(error, MemoryError):
        cls = errors.ResourceExhaustedError
    else:
        cls = errors.InternalError
    message = "%s: %s" % (type(error).__name__, error)
    return cls(op.node_def, op, "%s (op '%s' of type %s)%s" % (message, op.name, op.type, where))


def relocated_error(error, graphs):
    """An error a device process reported, pointing at the user's op again.

    The process runs a copy of the partition rebuilt from its GraphDef: its
    error names the op but can neither say where the user created it nor hand
    the op back.  The session's copy of the partition (one of ``graphs``)
    knows both.
    """
    if not isinstance(error, errors.OpError) or error.op is not None:
        return error
    match = _NODE_LOCATION.search(error.message)
    for graph in graphs if match else ():
        try:
            op = user_op(graph.get_operation_by_name(match.group(1)))
        except (KeyError, ValueError):
            continue
        message = error.message[:match.start()] + _where(op) + error.message[match.end():]
        return type(error)(op.node_def, op, message)
    return error
