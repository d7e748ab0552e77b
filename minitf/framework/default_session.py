"""The default-session stack behind ``Tensor.eval`` and ``Operation.run``.

``with sess.as_default():`` (and ``InteractiveSession``) push a session here;
``tf.get_default_session()`` reads the top.  Kept in the framework layer, as in
TF's ``ops.py``, so that tensors can evaluate themselves without the framework
importing the runtime.
"""

import threading

_local = threading.local()


def _stack():
    if not hasattr(_local, "stack"):
        _local.stack = []
    return _local.stack


def get_default_session():
    """The innermost session entered with ``as_default()``, or None."""
    stack = _stack()
    return stack[-1] if stack else None


def push(session):
    _stack().append(session)


def pop(session):
    stack = _stack()
    if stack and stack[-1] is session:
        stack.pop()
    elif session in stack:
        stack.remove(session)


def run_in_default_session(fetch, feed_dict, session):
    """Runs ``fetch`` in ``session`` or the default one (``Tensor.eval``)."""
    session = session or get_default_session()
    if session is None:
        raise ValueError("Cannot evaluate tensor using `eval()`: No default session is "
                         "registered. Use `with sess.as_default()` or pass an explicit "
                         "session to `eval(session=sess)`")
    if session.graph is not fetch.graph:
        raise ValueError("Cannot use the given session to evaluate tensor: the tensor's graph "
                         "is different from the session's graph.")
    return session.run(fetch, feed_dict)
