"""The plugin registry: where ops, kernels, gradients and devices arrive.

minitf's core holds no kernels.  Everything that runs comes from plugins found
through pluggy entry points (group ``minitf``); the bundled NumPy CPU backend
is one such plugin, with no privileged path.  See :mod:`minitf.registry.hookspecs`
for the plugin author's manual, and :mod:`minitf.registry.loading` for what
happens to a plugin that fails.
"""

from minitf.registry.hookspecs import hookimpl, hookspec
from minitf.registry.loading import PluginError, PluginLoadWarning, PluginReport
from minitf.registry.op_def import OpDef
from minitf.registry.registry import (
    GradientDef, KernelDef, Registry, get_registry, plugin_reports, register_plugin,
    unregister_plugin)

__all__ = ["hookimpl", "hookspec", "OpDef", "KernelDef", "GradientDef", "Registry",
           "get_registry", "register_plugin", "unregister_plugin", "plugin_reports",
           "PluginError", "PluginLoadWarning", "PluginReport"]
