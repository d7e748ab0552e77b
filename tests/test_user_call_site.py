"""An op remembers the *user's* line, not the line of a plugin's wrapper.

``user_call_site`` passes over frames inside minitf, inside the package of
every loaded plugin, of functions marked with ``minitf.plugin.api_wrapper``
and of functions that set ``__tracebackhide__``.  The plugin here is a real
package written to a temporary directory, as a third-party op package would
be: an op ``Swish`` and its Python wrapper, built from :mod:`minitf.plugin`.
"""

import inspect
import sys
import textwrap

import numpy as np
import pytest

import minitf as tf
import minitf.plugin
from minitf.registry import register_plugin, unregister_plugin
from minitf.registry.registry import plugin_locations

SWISH_PACKAGE = '''
    """minitf_swish: the op Swish (x * sigmoid(x)) with a Python wrapper."""

    import numpy as np

    from minitf.plugin import OpDef, apply_op, hookimpl, unchanged_shape

    SWISH = OpDef("Swish", inputs=("x",), shape_fn=unchanged_shape, doc="x * sigmoid(x).")


    def swish(x, name=None):
        return _checked(apply_op, SWISH, [x], name=name or "Swish")


    def _checked(build, *args, **kwargs):   # a wrapper two frames deep
        return build(*args, **kwargs)


    @hookimpl
    def minitf_register_ops(registry):
        registry.register_op(SWISH)


    @hookimpl
    def minitf_register_kernels(registry):
        registry.register_kernel("Swish", "CPU", lambda ctx, x: x / (1.0 + np.exp(-x)))
'''


@pytest.fixture
def swish_package(tmp_path, monkeypatch):
    """The package ``minitf_swish`` on ``sys.path``, imported, not registered yet."""
    package = tmp_path / "minitf_swish"
    package.mkdir()
    (package / "__init__.py").write_text(textwrap.dedent(SWISH_PACKAGE))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "minitf_swish", raising=False)
    import minitf_swish
    return minitf_swish


class _SwishOpOnly:
    """Declares Swish without being the package: its wrapper is then user code."""

    def __init__(self, package):
        self.package = package

    @minitf.plugin.hookimpl
    def minitf_register_ops(self, registry):
        registry.register_op(self.package.SWISH)


def _line_after(frame_info):
    return frame_info.lineno + 1


def test_an_op_made_by_a_plugin_wrapper_remembers_the_users_line(swish_package):
    register_plugin(swish_package, name="swish")
    try:
        x = tf.placeholder(tf.float32, [2])
        line = _line_after(inspect.stack()[0])
        y = swish_package.swish(x)
        assert y.op.traceback == (__file__, line)
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(y, {x: [0.0, 1.0]}), [0.0, 1 / (1 + np.exp(-1))],
                                       rtol=1e-6)
    finally:
        unregister_plugin(swish_package)


def test_a_wrapper_outside_any_plugin_package_is_user_code(swish_package):
    """The control: the same wrapper, its package not a plugin, is where the op was made."""
    plugin = _SwishOpOnly(swish_package)
    register_plugin(plugin, name="swish_op_only")
    try:
        y = swish_package.swish(tf.placeholder(tf.float32, [2]))
        filename, _ = y.op.traceback
        assert filename == swish_package.__file__
    finally:
        unregister_plugin(plugin)


def test_plugin_locations_follow_registration(swish_package):
    directory = swish_package.__path__[0]
    assert not any(d.startswith(directory) for d in plugin_locations()[0])
    register_plugin(swish_package, name="swish")
    try:
        assert any(d.startswith(directory) for d in plugin_locations()[0])
    finally:
        unregister_plugin(swish_package)
    assert not any(d.startswith(directory) for d in plugin_locations()[0])


@minitf.plugin.api_wrapper
def _marked_square(x):
    return tf.square(x)


def _hidden_square(x):
    __tracebackhide__ = True  # noqa: F841 - read by user_call_site, as pytest reads it
    return tf.square(x)


def _shown_square(x):
    __tracebackhide__ = False  # noqa: F841 - a helper that hides nothing
    return tf.square(x)


@pytest.mark.parametrize("wrapper", [_marked_square, _hidden_square])
def test_marked_wrappers_are_passed_over(wrapper):
    x = tf.placeholder(tf.float32, [2])
    line = _line_after(inspect.stack()[0])
    y = wrapper(x)
    assert y.op.traceback == (__file__, line)


def test_an_unmarked_wrapper_is_the_users_line():
    y = _shown_square(tf.placeholder(tf.float32, [2]))
    assert y.op.traceback == (__file__, inspect.getsourcelines(_shown_square)[1] + 2)
