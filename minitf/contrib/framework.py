"""``tf.contrib.framework``: ``arg_scope``, and the global step helpers.

``arg_scope`` sets default arguments for a group of layer functions::

    with tf.contrib.framework.arg_scope([layers.conv2d, layers.fully_connected],
                                        activation_fn=tf.nn.tanh,
                                        weights_regularizer=layers.l2_regularizer(0.01)):
        net = layers.conv2d(images, 32, [3, 3])          # tanh, regularized
        net = layers.fully_connected(net, 10, activation_fn=None)   # an explicit argument wins

Only functions decorated with :func:`add_arg_scope` take part: the decorator
looks the innermost scope's defaults for the function up on every call and
merges them under the caller's keyword arguments.  Scopes nest — an inner
one adds to, or overrides, the defaults of the outer — and the ``dict`` a
``with arg_scope(...) as sc`` yields can be re-entered later with
``with arg_scope(sc):``.

Mirrors ``tensorflow/contrib/framework/python/ops/arg_scope.py``.
"""

import contextlib
import functools
import inspect

from minitf.train.training_util import get_global_step, get_or_create_global_step  # noqa: F401

_ARG_STACK = [{}]  # the active scopes, innermost last: {function key: {argument: value}}
_DECORATED = {}  # function key -> the names of its keyword arguments


def missing(module, name):
    """The AttributeError for a ``tf.contrib`` name minitf does not provide."""
    return AttributeError("minitf does not provide %s.%s (minitf implements only the most used "
                          "names of tf.contrib; see docs/differences.rst)" % (module, name))


def _key(func):
    return getattr(func, "_arg_scope_key", (func.__module__, func.__name__))


def current_arg_scope():
    """The innermost scope's defaults: ``{function key: {argument: value}}``."""
    return _ARG_STACK[-1]


def has_arg_scope(func):
    """Whether ``func`` is decorated with :func:`add_arg_scope`."""
    return _key(func) in _DECORATED


def arg_scoped_arguments(func):
    """The names of the arguments an ``arg_scope`` may set for ``func``."""
    return _DECORATED[_key(func)]


def add_arg_scope(func):
    """Decorates ``func`` so that the active ``arg_scope``\\ s supply its default arguments."""
    key = _key(func)

    @functools.wraps(func)
    def func_with_args(*args, **kwargs):
        defaults = current_arg_scope().get(key)
        if defaults:
            kwargs = {**defaults, **kwargs}
        return func(*args, **kwargs)

    _DECORATED[key] = [name for name, p in inspect.signature(func).parameters.items()
                       if p.default is not inspect.Parameter.empty]
    func_with_args._arg_scope_key = key
    return func_with_args


@contextlib.contextmanager
def arg_scope(list_ops_or_scope, **kwargs):
    """Sets ``kwargs`` as default arguments of the functions ``list_ops_or_scope``.

    Args:
        list_ops_or_scope: a list or tuple of functions decorated with
            :func:`add_arg_scope`, or a scope (the dict an earlier
            ``arg_scope`` yielded) to enter again.
        **kwargs: the defaults (none when re-entering a scope).

    Yields:
        The scope now active, a dict.

    Raises:
        ValueError: for a function not decorated with :func:`add_arg_scope`,
            or ``kwargs`` given with a scope to re-enter.
        TypeError: if ``list_ops_or_scope`` is neither a list/tuple nor a dict.
    """
    if isinstance(list_ops_or_scope, dict):
        if kwargs:
            raise ValueError("When attempting to re-use a scope by suppling a dictionary, kwargs "
                             "must be empty.")
        scope = list_ops_or_scope.copy()
    elif isinstance(list_ops_or_scope, (list, tuple)):
        scope = current_arg_scope().copy()
        for op in list_ops_or_scope:
            if not has_arg_scope(op):
                raise ValueError("%s is not decorated with @add_arg_scope"
                                 % (getattr(op, "__name__", op),))
            scope[_key(op)] = {**scope.get(_key(op), {}), **kwargs}
    else:
        raise TypeError("list_ops_or_scope must either be a list/tuple or reused scope (i.e. "
                        "dict)")
    _ARG_STACK.append(scope)
    try:
        yield scope
    finally:
        _ARG_STACK.pop()


def __getattr__(name):
    raise missing("tf.contrib.framework", name)


__all__ = ["add_arg_scope", "arg_scope", "arg_scoped_arguments", "current_arg_scope",
           "get_global_step", "get_or_create_global_step", "has_arg_scope"]
