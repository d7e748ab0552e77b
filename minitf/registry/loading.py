"""Loading plugins one at a time, so that one broken plugin breaks nothing else.

A plugin is third-party code that runs inside every minitf program.  If its
import raises (a missing driver library), a hook raises (a bug), a hook name
is misspelled or its name is already taken, minitf must not fail as a whole —
nor stay silent.  :class:`PluginLoader` therefore adds each plugin on its own:

* a plugin that fails is **skipped**: everything it registered is removed
  again, and a :class:`PluginLoadWarning` names it and carries its traceback;
* every other plugin, and every program that does not need the broken one,
  keeps working;
* ``MINITF_DISABLE_PLUGINS=name,...`` switches plugins off by entry-point name,
  so a user can silence a broken package without uninstalling it;
* each plugin's fate is kept as a :class:`PluginReport` (loaded, failed and
  why, disabled, no hardware), which ``python -m minitf plugins`` prints.

A plugin registered at run time (:func:`minitf.registry.register_plugin`) is
different: its caller asked for it, so the same problems raise instead of
warning.  TF's own ``load_library`` likewise raises; pytest's plugin loading
(which minitf's uses through pluggy) reports failing plugins by name.
"""

import dataclasses
import difflib
import importlib.metadata
import os
import sys
import traceback
import types
import warnings

import pluggy

from minitf.registry import hookspecs

DISABLE_VARIABLE = "MINITF_DISABLE_PLUGINS"

# A plugin's states, as python -m minitf plugins prints them.
LOADED = "loaded"
FAILED = "failed"
DISABLED = "disabled"
NO_HARDWARE = "no hardware"

RUN_TIME = "(registered at run time)"


class PluginError(ValueError):
    """A plugin minitf cannot use as written: its name is already taken, or it
    implements a hook that does not exist.  A ``ValueError``, like the pluggy
    error it replaces, so callers catching that keep working."""


class PluginLoadWarning(RuntimeWarning):
    """An installed plugin failed to load and was skipped; the message names it
    and ends with its traceback."""


@dataclasses.dataclass(frozen=True)
class PluginReport:
    """How loading one plugin went.

    Attributes:
        name: the plugin's name (its entry-point name).
        state: ``"loaded"``, ``"failed"``, ``"disabled"`` or ``"no hardware"``
            (loaded, but it found none of the devices it offers).
        distribution: ``"name version"`` of the package that installed it, or
            ``"(registered at run time)"``.
        module: the module (or object) the plugin is.
        reason: why it failed, is disabled or has no hardware ("" when loaded).
        traceback: the formatted traceback of a failure ("" otherwise).
    """

    name: str
    state: str
    distribution: str
    module: str
    reason: str = ""
    traceback: str = ""

    @property
    def source(self):
        """Where the plugin comes from, in words (for messages naming two plugins)."""
        if self.distribution == RUN_TIME:
            return "%s registered at run time" % self.module
        return "entry point '%s = %s' of %s" % (self.name, self.module, self.distribution)


# ---- discovery -------------------------------------------------------------------------
def entry_points():
    """The entry points of group ``minitf`` of every installed distribution."""
    return list(importlib.metadata.entry_points(group=hookspecs.PROJECT_NAME))


def disabled_names():
    """The plugin names listed in ``MINITF_DISABLE_PLUGINS`` (comma-separated)."""
    return {name.strip() for name in os.environ.get(DISABLE_VARIABLE, "").split(",")
            if name.strip()}


def _distribution_label(entry_point):
    dist = getattr(entry_point, "dist", None)
    if dist is None:
        return "(unknown distribution)"
    return "%s %s" % (dist.metadata["Name"], dist.version)


def _module_label(plugin):
    return getattr(plugin, "__name__", None) or type(plugin).__name__


def _describe(error):
    """``"Type: message"`` of an exception, followed by the notes added to it."""
    notes = "".join(" " + note for note in getattr(error, "__notes__", ()))
    return "%s: %s%s" % (type(error).__name__, error, notes)


_REGISTRY_DIR = os.path.dirname(os.path.abspath(__file__))
_MINITF_DIR = os.path.dirname(_REGISTRY_DIR)


def _plugin_traceback(error):
    """``error``'s traceback without the loader's and importlib's frames, so it
    starts in the plugin's own code (and is just the message for an error the
    loader raised itself, such as a misspelled hook)."""
    summary = traceback.TracebackException.from_exception(error)
    summary.stack = traceback.StackSummary.from_list(
        [frame for frame in summary.stack
         if os.path.dirname(os.path.abspath(frame.filename)) != _REGISTRY_DIR
         and "importlib" not in frame.filename])
    return "".join(summary.format())


def _stacklevel_outside_minitf():
    """The ``stacklevel`` that makes a warning point at the first line outside
    minitf: the user's line that first needed the registry."""
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_MINITF_DIR):
        frame, level = frame.f_back, level + 1
    return level


# ---- the loader ------------------------------------------------------------------------
class PluginLoader:
    """Adds plugins to one :class:`~minitf.registry.Registry`, each on its own.

    Attributes:
        registry: the registry the plugins fill.
        manager: the ``pluggy.PluginManager`` holding the plugins that loaded.
    """

    def __init__(self, registry):
        self.registry = registry
        self.manager = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        self.manager.add_hookspecs(hookspecs)
        self._reports = []  # PluginReports, in loading order; a name may recur

    def reports(self):
        """A :class:`PluginReport` for every plugin seen, in loading order."""
        return list(self._reports)

    def failed_names(self):
        """The names of the plugins that failed to load."""
        return [r.name for r in self._reports if r.state == FAILED]

    def _holder(self, name):
        """The report of the plugin registered under ``name`` now."""
        return next(r for r in self._reports
                    if r.name == name and r.state in (LOADED, NO_HARDWARE))

    # ---- entry points ----------------------------------------------------------------
    def load_entry_points(self, points, disabled=frozenset()):
        """Loads each entry point in ``points`` (``core_ops`` first, then by name),
        skipping the ``disabled`` names; a failure is reported, never raised."""
        for point in sorted(points, key=lambda p: (p.name != "core_ops", p.name)):
            distribution = _distribution_label(point)
            if point.name in disabled:
                self._report(point.name, DISABLED, distribution, point.value,
                             reason="switched off by %s" % DISABLE_VARIABLE)
                continue
            try:
                self.add(point.load(), point.name, distribution, module=point.value)
            except Exception as error:
                self._report_failure(point.name, distribution, point.value, error)

    def _report_failure(self, name, distribution, module, error):
        text = _plugin_traceback(error)
        report = self._report(name, FAILED, distribution, module,
                              reason=_describe(error), traceback=text)
        warnings.warn(
            "minitf skipped the plugin '%s' (%s): it failed to load, so nothing it offers "
            "(ops, kernels, gradients, devices) is available. Set %s=%s to switch it off.\n%s"
            % (name, report.source, DISABLE_VARIABLE, name, text),
            PluginLoadWarning, stacklevel=_stacklevel_outside_minitf())

    # ---- one plugin ------------------------------------------------------------------
    def add(self, plugin, name, distribution=RUN_TIME, module=None):
        """Registers ``plugin`` under ``name`` and calls its hooks.

        Raises:
            PluginError: ``name`` is taken (naming both plugins), the plugin is
                already registered, or it implements a hook that does not exist
                (naming the closest hook).
            pluggy.PluginValidationError: a hook's arguments do not match its spec.
            Exception: whatever a hook raised, with a note naming the hook.

            On any error everything the plugin registered is removed again.
        """
        module = module or _module_label(plugin)
        self._check_free(plugin, name, distribution, module)
        self.manager.register(plugin, name=name)
        try:
            self._check_hook_names(plugin, name)
            self.registry._call_hooks(self.manager, plugin)
        except BaseException:
            self.registry._remove_plugin(name)
            self.manager.unregister(plugin)
            raise
        unavailable = self._unavailable_devices(name)
        if unavailable:
            self._report(name, NO_HARDWARE, distribution, module, reason=unavailable)
        else:
            self._report(name, LOADED, distribution, module)

    def remove(self, plugin):
        """Unregisters ``plugin`` and removes everything it registered."""
        name = self.manager.get_name(plugin)
        self.manager.unregister(plugin)
        self.registry._remove_plugin(name)
        self._reports.remove(self._holder(name))

    def code_locations(self):
        """``(directories, files)`` where the loaded plugin modules' code lives.

        A plugin module inside a package stands for the whole top-level
        package (its directories, each ending with a separator); a top-level
        module that is no package stands for its own file only.  A plugin
        that is an object rather than a module stands for nothing: its class
        may live in the user's own script.
        """
        directories, files = set(), set()
        for _, plugin in self.manager.list_name_plugin():
            name = getattr(plugin, "__name__", None)
            if not isinstance(plugin, types.ModuleType) or name == "__main__":
                continue
            top = sys.modules.get(name.partition(".")[0], plugin)
            for path in getattr(top, "__path__", None) or ():
                directories.add(os.path.join(os.path.abspath(path), ""))
            if not hasattr(top, "__path__") and getattr(top, "__file__", None):
                files.add(os.path.abspath(top.__file__))
        return tuple(sorted(directories)), frozenset(files)

    def _check_free(self, plugin, name, distribution, module):
        """Raises PluginError when ``name`` or ``plugin`` is already registered."""
        new = PluginReport(name, LOADED, distribution, module).source
        if self.manager.get_plugin(name) is not None:
            raise PluginError("Plugin name '%s' is already taken: by %s; cannot register %s "
                              "under the same name" % (name, self._holder(name).source, new))
        if self.manager.is_registered(plugin):
            raise PluginError("%s is already registered as plugin '%s'"
                              % (new, self.manager.get_name(plugin)))

    def _check_hook_names(self, plugin, name):
        """Raises PluginError for a ``@hookimpl`` whose name is no minitf hook, and
        for a function named like a hook that lacks its ``@hookimpl`` marker."""
        hooks = [n for n, caller in vars(self.manager.hook).items()
                 if not n.startswith("_") and caller.has_spec()]
        for caller in self.manager.get_hookcallers(plugin) or ():
            if caller.has_spec():
                continue
            close = difflib.get_close_matches(caller.name, hooks, n=1)
            hint = "did you mean '%s'?" % close[0] if close else "the hooks are: %s" % (
                ", ".join(sorted(hooks)))
            raise PluginError("Plugin '%s' implements '%s', which is not a minitf hook; %s"
                              % (name, caller.name, hint))
        for hook in hooks:
            if (callable(getattr(plugin, hook, None))
                    and self.manager.parse_hookimpl_opts(plugin, hook) is None):
                raise PluginError("Plugin '%s' defines '%s' without the @hookimpl marker, so "
                                  "it would never be called; decorate it with "
                                  "minitf.plugin.hookimpl" % (name, hook))

    def _unavailable_devices(self, name):
        """``"GPU: reason; ..."`` when plugin ``name`` offers no device but noted
        device types it could not offer; ``""`` otherwise."""
        if self.registry.plugin_device_types(name):
            return ""
        return "; ".join("%s: %s" % (device_type, reason) for device_type, (plugin, reason)
                         in sorted(self.registry.unavailable_devices().items())
                         if plugin == name)

    def _report(self, name, state, distribution, module, reason="", traceback=""):
        report = PluginReport(name, state, distribution, module, reason, traceback)
        self._reports.append(report)
        return report
