"""The four hooks a minitf plugin may implement — the plugin author's manual.

A plugin is any module or object with functions marked ``@hookimpl`` whose names
match the specs below.  Install it with an entry point in your package::

    [project.entry-points.minitf]
    my_ops = "my_package.plugin"

or register it at run time with :func:`minitf.plugin.register_plugin`.  Everything
the examples below use (``hookimpl``, ``OpDef``, ``unchanged_shape``...) is
imported from :mod:`minitf.plugin`, the stable surface for plugins.  minitf
calls the hooks once, lazily, the first time anything needs the registry, in the
order ops → kernels → gradients → devices; each receives the one
:class:`~minitf.registry.Registry`.  A name registered twice is an error that
reports both sites.

An installed plugin whose import or hook raises, or that implements a hook not
listed here (``minitf_register_device``: the error names the closest hook), is
skipped with a :class:`~minitf.registry.PluginLoadWarning` naming it; the other
plugins load as usual (:mod:`minitf.registry.loading`).

The bundled NumPy CPU backend (``plugins/numpy_cpu``) uses exactly these hooks.
"""

import pluggy

PROJECT_NAME = "minitf"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec
def minitf_register_ops(registry):
    """Declare new ops with ``registry.register_op(OpDef(...))``.

    An :class:`~minitf.registry.OpDef` names the op, its inputs, outputs and
    attrs, and carries its shape function.  Declaring an op makes it usable in
    graphs; it runs only where some plugin also registers a kernel for it.

    Example::

        @hookimpl
        def minitf_register_ops(registry):
            registry.register_op(OpDef("Cube", inputs=("x",), shape_fn=unchanged_shape))
    """


@hookspec
def minitf_register_kernels(registry):
    """Register kernels with ``registry.register_kernel(op, device_type, fn)``.

    A kernel is ``fn(ctx, *inputs, **attrs) -> output`` (or a tuple of outputs
    for an op with several).  ``inputs`` are the device's buffers (NumPy arrays
    on the CPU); ``attrs`` are the attrs the OpDef declares.  ``ctx`` is the
    :class:`~minitf.runtime.kernel_context.KernelContext` (the op, its device,
    the session's resources).  Pass ``dtypes=`` to restrict a kernel to some
    element types.

    Example::

        @hookimpl
        def minitf_register_kernels(registry):
            registry.register_kernel("Cube", "CPU", lambda ctx, x: x * x * x)
    """


@hookspec
def minitf_register_gradients(registry):
    """Register gradient functions with ``registry.register_gradient(op, fn)``.

    ``fn(op, *output_grads) -> list of input gradients`` builds ordinary ops
    (TF1's ``@ops.RegisterGradient``); it returns one entry per input, None for
    an input that gets no gradient.  ``registry.register_gradient(op, None,
    reason="...")`` declares an op not differentiable and says why.

    Example::

        @hookimpl
        def minitf_register_gradients(registry):
            registry.register_gradient("Cube", lambda op, grad: [3.0 * op.inputs[0] ** 2 * grad])
    """


@hookspec
def minitf_register_devices(registry):
    """Register device types with ``registry.register_device(DeviceFactory)``.

    A device factory says how many devices of its type exist on this machine
    and creates them; a device implements the small protocol of
    :class:`~minitf.registry.device.Device` (allocate, to_host, from_host,
    sync).  A plugin that finds no hardware registers nothing and explains why
    through ``registry.note_unavailable(type, reason)``.
    """
