"""The one registry of ops, kernels, gradients and devices, filled by plugins.

Plugins are discovered through pluggy entry points (group ``minitf``) the first
time :func:`get_registry` is called — never at ``import minitf`` — and their
hooks are called in the order ops → kernels → gradients → devices.  Everything
a plugin registers is tagged with the plugin's name, so a duplicate reports
both sites and :func:`unregister_plugin` removes exactly what a plugin added.
Each plugin is loaded on its own (:mod:`minitf.registry.loading`): one that
fails is skipped with a warning naming it, and :func:`plugin_reports` says
how each one fared.

The core's own ops arrive the same way (entry point ``core_ops``): there is no
privileged path.  Mirrors TF's ``OpRegistry`` / ``KernelRegistry`` and
``tensorflow/python/framework/registry.py``.

**Where everything about an op was declared.**  For one op type the registry
answers :meth:`Registry.op_origin` (its OpDef), :meth:`Registry.kernel_defs`
(its kernels, each with its device type) and :meth:`Registry.gradient_def`
(its gradient, or why it has none), each with the plugin and the ``file:line``
of the declaration — what ``python -m minitf plugins --op NAME`` prints.

**The bottom layer.**  The registry imports nothing from :mod:`minitf.framework`
(registry ← framework ← ops ← ...).  Yet two of its answers are framework
values: a kernel's ``dtypes=`` are DTypes, and a missing kernel must reach the
user as ``tf.errors.NotFoundError``.  The framework lends both when it is
imported (:func:`use_framework_types`), just as TF's ``errors_impl.py`` hands
its exception classes down to the C++ runtime (``PyExceptionRegistry_Init``).
Moving ``tf.errors`` down here instead would make the registry own part of the
framework's vocabulary and still leave the dtypes with the same problem.
"""

import dataclasses
import inspect
import os
import sys
import threading
from typing import Callable, Optional

from minitf.registry import loading

HOOK_ORDER = ("minitf_register_ops", "minitf_register_kernels",
              "minitf_register_gradients", "minitf_register_devices")


# ---- what the framework lends the registry -----------------------------------------------
@dataclasses.dataclass(frozen=True)
class FrameworkTypes:
    """The framework's values the registry uses but may not import.

    Attributes:
        as_dtype: turns an entry of a kernel's ``dtypes=`` (a DType, its name,
            a NumPy dtype) into a DType.
        not_found_error: ``not_found_error(op, message)`` is the exception a
            missing kernel raises.
    """

    as_dtype: Callable
    not_found_error: Callable


# What a registry used on its own, before the framework is imported, falls back to.
_framework_types = FrameworkTypes(as_dtype=lambda value: value,
                                  not_found_error=lambda op, message: LookupError(message))


def use_framework_types(framework_types):
    """Installs the framework's DTypes and ``tf.errors`` class (a :class:`FrameworkTypes`).

    Called once, by :mod:`minitf.framework` as it is imported — always before
    any plugin's hooks run, since every plugin imports minitf.
    """
    global _framework_types
    _framework_types = framework_types


def framework_dtype(value):
    """``value`` (a dtype's name, a DType ...) as the framework's DType."""
    return _framework_types.as_dtype(value)


# ---- sites ----------------------------------------------------------------------------------
def caller_site():
    """The ``file:line`` of the first frame outside the registry itself (and
    outside generated code, such as a dataclass's ``__init__``)."""
    frame = sys._getframe(1)
    here = os.path.dirname(os.path.abspath(__file__))
    while frame is not None and (
            frame.f_code.co_filename.startswith("<")
            or os.path.dirname(os.path.abspath(frame.f_code.co_filename)) == here):
        frame = frame.f_back
    if frame is None:
        return "<unknown>"
    return "%s:%d" % (frame.f_code.co_filename, frame.f_lineno)


def definition_site(fn):
    """The ``file:line`` where the function ``fn`` is defined (its first decorator
    line), looking through ``functools.wraps`` wrappers; None for an object
    without Python code (a builtin, a callable instance)."""
    code = getattr(inspect.unwrap(fn), "__code__", None)
    return None if code is None else "%s:%d" % (code.co_filename, code.co_firstlineno)


@dataclasses.dataclass(frozen=True)
class KernelDef:
    """A kernel registered for one op on one device type.

    Attributes:
        op_type: the op it implements.
        device_type: the device type it runs on.
        fn: ``fn(ctx, *inputs, **attrs) -> output(s)``.
        dtypes: the input dtypes it accepts (None: any).
        plugin: the name of the plugin that registered it.
        site: ``file:line`` where ``fn`` is defined (for a kernel made by a
            wrapper without ``functools.wraps``: the registration).
    """

    op_type: str
    device_type: str
    fn: Callable
    dtypes: Optional[frozenset]
    plugin: str
    site: str

    def accepts(self, dtypes):
        """True when this kernel runs on inputs of these dtypes."""
        return self.dtypes is None or all(d in self.dtypes for d in dtypes)


@dataclasses.dataclass(frozen=True)
class GradientDef:
    """The gradient of one op type, or the statement that it has none.

    Attributes:
        op_type: the op type (or a name for ``Graph.gradient_override_map``).
        fn: ``fn(op, *output_grads) -> [input grads]``; None when the op is
            not differentiable.
        reason: why it is not differentiable ("" when nobody said).
        plugin: the name of the plugin that registered it.
        site: ``file:line`` where ``fn`` is defined (for a not-differentiable
            op: where that was declared).
    """

    op_type: str
    fn: Optional[Callable]
    reason: str
    plugin: str
    site: str


@dataclasses.dataclass(frozen=True)
class _Entry:
    """One registration of an op, a gradient or a device type.  ``reason``
    says why a gradient entry whose ``value`` is None has no function."""

    value: object
    plugin: str
    site: str
    reason: str = ""


class Registry:
    """What every plugin has registered.  Use :func:`get_registry`."""

    def __init__(self):
        self._ops = {}
        self._kernels = {}  # (op_type, device_type) -> [KernelDef]
        self._kernels_by_op = {}  # op_type -> [KernelDef], every device type
        self._gradients = {}
        self._devices = {}
        self._unavailable = {}
        self._current_plugin = "<runtime>"

    # ---- ops ---------------------------------------------------------------
    def register_op(self, op_def):
        """Declares an op.  Raises ``KeyError`` naming both sites on a duplicate."""
        self._add(self._ops, op_def.name, op_def, "Op", site=op_def.site or None)

    def op_def(self, op_type):
        """The :class:`OpDef` of ``op_type``.

        Raises:
            KeyError: if no plugin declared it.
        """
        try:
            return self._ops[op_type].value
        except KeyError:
            failed = failed_plugin_names()
            raise KeyError("Op type not registered '%s'. Installed plugins: %s%s"
                           % (op_type, ", ".join(plugin_names()),
                              ". Plugins that failed to load (see `python -m minitf plugins`): "
                              + ", ".join(failed) if failed else "")) from None

    def has_op(self, op_type):
        """True when some plugin declared ``op_type``."""
        return op_type in self._ops

    def op_types(self):
        """The names of all declared ops, sorted."""
        return sorted(self._ops)

    def op_origin(self, op_type):
        """``(plugin name, "file:line")`` of ``op_type``'s declaration.

        Raises:
            KeyError: if no plugin declared it.
        """
        entry = self._ops[op_type]
        return entry.plugin, entry.site

    # ---- kernels -----------------------------------------------------------
    def register_kernel(self, op_type, device_type, fn, dtypes=None):
        """Registers ``fn`` as the kernel of ``op_type`` on ``device_type``.

        Raises ``KeyError`` naming both sites when a kernel for overlapping
        dtypes is already registered there.
        """
        as_dtype = _framework_types.as_dtype
        dtypes = None if dtypes is None else frozenset(as_dtype(d) for d in dtypes)
        site = definition_site(fn) or caller_site()
        kernels = self._kernels.setdefault((op_type, device_type), [])
        for k in kernels:
            if k.dtypes is None or dtypes is None or k.dtypes & dtypes:
                raise KeyError(
                    "Kernel for op '%s' on %s registered twice with overlapping dtypes: "
                    "first by plugin '%s' at %s, again by plugin '%s' at %s"
                    % (op_type, device_type, k.plugin, k.site, self._current_plugin, site))
        kernel_def = KernelDef(op_type, device_type, fn, dtypes, self._current_plugin, site)
        kernels.append(kernel_def)
        self._kernels_by_op.setdefault(op_type, []).append(kernel_def)

    def kernel(self, op_type, device_type, dtypes=(), node=None):
        """Finds the kernel of ``op_type`` on ``device_type`` for input ``dtypes``.

        Raises:
            tf.errors.NotFoundError: naming the op, device and dtypes, and
                listing the device types that do have a kernel.
        """
        for k in self._kernels.get((op_type, device_type), ()):
            if k.accepts(dtypes):
                return k
        raise self.missing_kernel_error(op_type, device_type, dtypes, node)

    def missing_kernel_error(self, op_type, device_type, dtypes=(), node=None):
        """The ``tf.errors.NotFoundError`` for a missing kernel, listing where kernels exist."""
        where = ""
        if node is not None:
            where = " (defined at %s:%d)" % node.traceback
        elsewhere = ["%s%s" % (k.device_type, "" if k.dtypes is None else
                               " (dtypes: %s)" % ", ".join(sorted(d.name for d in k.dtypes)))
                     for k in self.kernel_defs(op_type)]
        return _framework_types.not_found_error(
            node,
            "No registered '%s' OpKernel for '%s' devices compatible with node %s%s "
            "(input dtypes: [%s]). Registered kernels: [%s]"
            % (op_type, device_type, node.name if node is not None else op_type, where,
               ", ".join(d.name for d in dtypes), "; ".join(elsewhere) or "none"))

    def has_kernel(self, op_type, device_type, dtypes=()):
        """True when ``op_type`` has a kernel on ``device_type`` for input ``dtypes``."""
        return any(k.accepts(dtypes) for k in self._kernels.get((op_type, device_type), ()))

    def kernel_dtype_sets(self, op_type):
        """The input dtypes each kernel of ``op_type`` takes, on any device type:
        a list of frozensets (None: any dtype); empty when it has no kernel."""
        return [k.dtypes for k in self._kernels_by_op.get(op_type, ())]

    def kernel_device_types(self, op_type):
        """Sorted device types with at least one kernel for ``op_type``."""
        return sorted({dev for (op, dev), ks in self._kernels.items() if op == op_type and ks})

    def kernel_defs(self, op_type):
        """Every :class:`KernelDef` of ``op_type``, sorted by device type.

        Each names its ``device_type``, ``plugin``, ``site`` and ``dtypes``.
        """
        return [k for device_type in self.kernel_device_types(op_type)
                for k in self._kernels[(op_type, device_type)]]

    # ---- gradients ---------------------------------------------------------
    def register_gradient(self, op_type, fn, site=None, reason=""):
        """Registers ``fn(op, *grads) -> [input grads]`` as ``op_type``'s gradient.

        ``fn=None`` declares the op not differentiable: its inputs get no
        gradient (TF's ``ops.NotDifferentiable``), and ``reason`` may say why.
        The site recorded is where ``fn`` is defined (for ``fn=None``: the
        caller), unless ``site`` (``"file:line"``) says otherwise.

        Raises:
            KeyError: if ``op_type`` already has one, naming both sites (TF's
                "Registering two gradient with name ...").
        """
        site = site or (definition_site(fn) if fn is not None else None)
        self._add(self._gradients, op_type, fn, "Gradient", site, reason)

    def gradient(self, op_type):
        """The gradient function of ``op_type`` (None if not differentiable).

        Raises:
            LookupError: if nothing was registered for ``op_type``.
        """
        entry = self._gradients.get(op_type)
        if entry is None:
            raise LookupError("No gradient registered for op type '%s'" % op_type)
        return entry.value

    def has_gradient(self, op_type):
        """True when a gradient (or non-differentiability) was registered."""
        return op_type in self._gradients

    def gradient_def(self, op_type):
        """The :class:`GradientDef` of ``op_type`` — its function or why it has
        none, with the plugin and site — or None if nothing was registered."""
        entry = self._gradients.get(op_type)
        if entry is None:
            return None
        return GradientDef(op_type, entry.value, entry.reason, entry.plugin, entry.site)

    # ---- devices -----------------------------------------------------------
    def register_device(self, factory):
        """Registers a :class:`~minitf.registry.device.DeviceFactory`."""
        self._add(self._devices, factory.device_type, factory, "Device type")

    def device_factories(self):
        """The registered factories, highest priority first."""
        return sorted((e.value for e in self._devices.values()),
                      key=lambda f: (-f.priority, f.device_type))

    def plugin_device_types(self, plugin_name):
        """The device types that plugin ``plugin_name`` registered, sorted."""
        return sorted(t for t, e in self._devices.items() if e.plugin == plugin_name)

    def device_factory(self, device_type):
        """The factory registered for ``device_type``, or None."""
        entry = self._devices.get(device_type)
        return None if entry is None else entry.value

    def device_origin(self, device_type):
        """``(plugin name, "file:line")`` of ``device_type``'s registration.

        Raises:
            KeyError: if no plugin registered it.
        """
        entry = self._devices[device_type]
        return entry.plugin, entry.site

    def note_unavailable(self, device_type, reason):
        """Records why a plugin registered no device of ``device_type``."""
        self._unavailable[device_type] = (self._current_plugin, reason)

    def unavailable_devices(self):
        """``{device_type: (plugin name, reason)}`` noted by :meth:`note_unavailable`."""
        return dict(self._unavailable)

    # ---- bookkeeping -------------------------------------------------------
    def _add(self, table, key, value, what, site=None, reason=""):
        site = site or caller_site()
        if key in table:
            old = table[key]
            raise KeyError("%s '%s' registered twice: first by plugin '%s' at %s, again by "
                           "plugin '%s' at %s" % (what, key, old.plugin, old.site,
                                                  self._current_plugin, site))
        table[key] = _Entry(value, self._current_plugin, site, reason)

    def _remove_plugin(self, plugin_name):
        for table in (self._ops, self._gradients, self._devices):
            for key in [k for k, e in table.items() if e.plugin == plugin_name]:
                del table[key]
        for kernels in list(self._kernels.values()) + list(self._kernels_by_op.values()):
            kernels[:] = [k for k in kernels if k.plugin != plugin_name]
        for key in [k for k, v in self._unavailable.items() if v[0] == plugin_name]:
            del self._unavailable[key]

    def _call_hooks(self, plugin_manager, plugin):
        """Calls ``plugin``'s hooks in HOOK_ORDER, tagging what they register."""
        name = plugin_manager.get_name(plugin)
        for hook_name in HOOK_ORDER:
            for impl in getattr(plugin_manager.hook, hook_name).get_hookimpls():
                if impl.plugin is plugin:
                    self._current_plugin = name
                    try:
                        impl.function(registry=self)
                    except Exception as error:
                        error.add_note("(raised by hook %s of plugin '%s')" % (hook_name, name))
                        raise
                    finally:
                        self._current_plugin = "<runtime>"


_lock = threading.RLock()
_loader = None
_registry = None
_locations = None  # plugin_locations(), until the set of plugins changes


def _load():
    """Loads every entry-point plugin into a new registry, each on its own."""
    global _loader, _registry
    registry = Registry()
    loader = loading.PluginLoader(registry)
    loader.load_entry_points(loading.entry_points(), loading.disabled_names())
    if not registry.has_op("Const"):
        raise ImportError(_missing_core_message(loader))
    _loader, _registry = loader, registry
    _forget_locations()


def _missing_core_message(loader):
    """Why minitf's own ops are missing: core_ops failed, was disabled, or is not installed."""
    core = {r.name: r for r in loader.reports()}.get("core_ops")
    if core is None:
        return ("minitf found none of its own ops: its entry points are missing, which means "
                "the package is not installed. Install it with `pip install -e .` (or "
                "`make demo`).")
    return ("minitf cannot work without its own ops, but the plugin 'core_ops' is %s: %s"
            % (core.state, core.reason))


def get_registry():
    """The process-wide :class:`Registry`, loading every plugin on first use."""
    if _registry is None:
        with _lock:
            if _registry is None:
                _load()
    return _registry


def plugin_manager():
    """The ``pluggy.PluginManager`` behind the registry (loading plugins on first use)."""
    get_registry()
    return _loader.manager


def plugin_reports():
    """A :class:`~minitf.registry.loading.PluginReport` for every plugin found or
    registered — loaded, failed (and why), disabled, or without hardware."""
    get_registry()
    return _loader.reports()


def plugin_names():
    """Names of the plugins loaded so far (entry-point names)."""
    if _loader is None:
        return []
    return [name for name, _ in _loader.manager.list_name_plugin()]


def failed_plugin_names():
    """Names of the installed plugins that failed to load and were skipped."""
    return [] if _loader is None else _loader.failed_names()


def plugin_locations():
    """``(directories, files)`` holding the code of the plugins loaded so far.

    Each directory ends with a path separator.  :func:`user_call_site
    <minitf.framework.operation.user_call_site>` passes over frames there, so
    an op made by a plugin's Python wrapper remembers the user's line.  Asks
    nothing of a registry not loaded yet; the answer is kept until a plugin
    is registered or unregistered.
    """
    global _locations
    if _loader is None:
        return (), frozenset()
    if _locations is None:
        _locations = _loader.code_locations()
    return _locations


def _forget_locations():
    global _locations
    _locations = None


def register_plugin(plugin, name=None):
    """Registers a plugin at run time and calls its hooks at once.

    Args:
        plugin: a module or object with ``@hookimpl`` functions.
        name: its name (default: pluggy's).

    Returns:
        The name it was registered under.

    Raises:
        PluginError: the name is taken (naming both plugins) or the plugin
            implements a hook that does not exist (naming the closest one).
        Exception: whatever one of its hooks raised.  Either way nothing it
            registered is left behind.
    """
    get_registry()
    with _lock:
        name = name or _loader.manager.get_canonical_name(plugin)
        try:
            _loader.add(plugin, name)
        finally:
            _forget_locations()
    return name


def unregister_plugin(plugin):
    """Removes a plugin and everything it registered."""
    with _lock:
        try:
            _loader.remove(plugin)
        finally:
            _forget_locations()
