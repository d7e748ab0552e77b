"""``python -m minitf``: what the plugin registry holds, printed as tables.

``python -m minitf plugins`` answers the three questions a plugin author or a
student asks first — which plugins were found, which devices they offer, and
which device types can run each op::

    $ python -m minitf plugins
    Plugins (entry-point group "minitf")
      NAME        DISTRIBUTION  MODULE             STATE        NOTE
      core_ops    minitf 0.1.0  minitf.ops.plugin  loaded
      numpy_cpu   minitf 0.1.0  minitf_numpy_cpu   loaded
      opencl_gpu  minitf 0.1.0  minitf_opencl_gpu  no hardware  GPU: no OpenCL platform ...
    ...

A plugin's STATE is ``loaded``, ``failed`` (its import or a hook raised, or
it misspells a hook: it was skipped, and its traceback follows the table),
``disabled`` (listed in ``MINITF_DISABLE_PLUGINS``) or ``no hardware``.  The
exit status is 1 when a plugin failed, so the command doubles as a health check.

``python -m minitf plugins --op NAME`` is the maintainer's map of one op:
where it is declared, where each device type's kernel is, and where its
gradient is (or why it has none)::

    $ python -m minitf plugins --op Add
    Op Add: x + y, elementwise with broadcasting.
      WHAT        WHERE                                     PLUGIN     NOTE
      declared    .../minitf/ops/math_ops.py:158            core_ops
      kernel CPU  .../plugins/numpy_cpu/kernels/math.py:43  numpy_cpu
      gradient    .../minitf/ops/math_ops.py:175            core_ops

``python -m minitf new-plugin NAME [--dir D]`` writes a ready plugin package
(:mod:`minitf.templates`): an op with its kernels, gradient and tests.

Like everything outside the backends, this module knows no backend by name:
it only reads the registry (:func:`minitf.registry.get_registry`) and the
pluggy plugin manager behind it.
"""

import argparse
import difflib
import sys
import warnings

import minitf
from minitf import templates
from minitf.registry import loading
from minitf.registry import registry as registry_lib


def main(argv=None):
    """Runs the command line; returns the process exit status.

    Args:
        argv: the arguments after ``python -m minitf`` (default: ``sys.argv[1:]``).
    """
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    return args.run(args)


def _parser():
    parser = argparse.ArgumentParser(
        prog="python -m minitf",
        description="minitf %s: TensorFlow 1.x's design in readable Python." % minitf.__version__)
    parser.set_defaults(command=None)
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")
    plugins = commands.add_parser(
        "plugins", help="list installed plugins, their devices and each op's kernels",
        description="List the installed plugins, the devices they offer and, for every "
                    "registered op, the device types that have a kernel for it.")
    plugins.add_argument("--op", metavar="NAME",
                         help="show where op NAME, its kernels and its gradient are declared")
    plugins.add_argument("--match", metavar="SUBSTRING",
                         help="only list ops whose type contains SUBSTRING (case-insensitive)")
    plugins.set_defaults(command="plugins", run=_plugins_command)
    new_plugin = commands.add_parser(
        "new-plugin", help="write a ready plugin package: an op, its kernels, gradient, tests",
        description="Write a plugin package NAME (e.g. soft-clip -> minitf-soft-clip/): "
                    "pyproject.toml with the entry point, an op with a shape function, a CPU "
                    "kernel, an OpenCL kernel, a gradient, tests using opcheck, a README.")
    new_plugin.add_argument("name", metavar="NAME",
                            help="lower-case words separated by '-' or '_', e.g. soft-clip")
    new_plugin.add_argument("--dir", default=".", metavar="D",
                            help="the folder to write the package into (default: here)")
    new_plugin.set_defaults(command="new-plugin", run=_new_plugin_command)
    return parser


# ---- python -m minitf new-plugin NAME ----------------------------------------------------

def _new_plugin_command(args):
    """Writes the package; a bad name or an existing folder is exit status 2."""
    try:
        root = templates.write_plugin(args.name, args.dir)
    except (ValueError, FileExistsError) as error:
        print("minitf: %s" % error, file=sys.stderr)
        return 2
    print("Wrote the minitf plugin package %s. Next:\n"
          "  cd %s && pip install -e . && pytest" % (root, root))
    return 0


# ---- python -m minitf plugins ------------------------------------------------------------

def _plugins_command(args):
    try:
        with warnings.catch_warnings():  # the table below reports failed plugins
            warnings.simplefilter("ignore", loading.PluginLoadWarning)
            registry = registry_lib.get_registry()
    except ImportError as error:  # minitf's own ops are missing: nothing else can work
        print("minitf: %s" % error, file=sys.stderr)
        return 1
    if args.op is not None:
        return _op_command(registry, args.op)
    reports = registry_lib.plugin_reports()
    out = []
    out += _plugins_section(reports)
    out += [""] + _devices_section(registry)
    out += [""] + _ops_section(registry, args.match)
    print("\n".join(out))
    return 1 if any(r.state == loading.FAILED for r in reports) else 0


def _plugins_section(reports):
    """One row per plugin found or registered — its name, distribution, module and
    state — then the traceback of each plugin that failed."""
    rows = [(r.name, r.distribution, r.module, r.state, r.reason.splitlines()[0] if r.reason
             else "") for r in sorted(reports, key=lambda r: r.name)]
    title = 'Plugins (entry-point group "%s")' % loading.hookspecs.PROJECT_NAME
    lines = [title] + _table(("NAME", "DISTRIBUTION", "MODULE", "STATE", "NOTE"), rows)
    for report in reports:
        if report.state == loading.FAILED:
            lines += ["", "Plugin '%s' failed and was skipped (switch it off with %s=%s):"
                      % (report.name, loading.DISABLE_VARIABLE, report.name)]
            lines += ["  " + line for line in report.traceback.rstrip().splitlines()]
    return lines


def _devices_section(registry):
    """The devices each factory offers, then the types a plugin could not offer."""
    rows = []
    for factory in registry.device_factories():
        try:
            count = factory.count()
            names = [factory.describe(i) for i in range(count)] or ["(none found)"]
        except Exception as error:  # a factory that fails to probe its hardware
            names = ["error while probing: %s: %s" % (type(error).__name__, error)]
        for i, description in enumerate(names):
            first = i == 0
            rows.append((factory.device_type if first else "",
                         str(factory.priority) if first else "", description))
    lines = ["Devices (highest placement priority first)"]
    lines += _table(("TYPE", "PRIORITY", "DEVICE"), rows) if rows else ["  (no device registered)"]
    unavailable = registry.unavailable_devices()
    if unavailable:
        lines += ["", "Device types registered as unavailable"]
        lines += _table(("TYPE", "PLUGIN", "REASON"),
                        [(device_type, plugin, reason)
                         for device_type, (plugin, reason) in sorted(unavailable.items())])
    return lines


def _ops_section(registry, substring=None):
    """One row per op: its type, the device types with a kernel, who declared it."""
    op_types = registry.op_types()
    if substring:
        op_types = [t for t in op_types if substring.lower() in t.lower()]
    rows = []
    for op_type in op_types:
        plugin, _ = registry.op_origin(op_type)
        kernels = ", ".join(registry.kernel_device_types(op_type)) or "-"
        rows.append((op_type, kernels, plugin, registry.op_def(op_type).doc))
    lines = ["Ops (%d) and the device types with a kernel for them" % len(rows)]
    if not rows:
        return lines + ["  (no op matches)"]
    return lines + _table(("OP", "KERNELS", "DECLARED BY", "DOC"), rows)


# ---- python -m minitf plugins --op NAME ---------------------------------------------------

def _op_command(registry, op_type):
    """Prints the map of one op; an unknown name is exit status 2, with close names."""
    if not registry.has_op(op_type):
        close = _close_names(op_type, registry.op_types())
        hint = " Did you mean: %s?" % ", ".join(close) if close else ""
        print("minitf: no op named '%s' is registered.%s" % (op_type, hint), file=sys.stderr)
        return 2
    print("\n".join(_op_section(registry, op_type)))
    return 0


def _close_names(name, names):
    """The names most like ``name``, ignoring case (``matmul`` finds ``MatMul``)."""
    by_lower = {n.lower(): n for n in names}
    return [by_lower[n] for n in difflib.get_close_matches(name.lower(), by_lower, n=5)]


def _op_section(registry, op_type):
    """One row for the declaration, one per kernel, one for the gradient."""
    plugin, site = registry.op_origin(op_type)
    kernels, gradient = registry.kernel_defs(op_type), registry.gradient_def(op_type)
    rows = [("declared", site, plugin, "")]
    rows += [("kernel %s" % k.device_type, k.site, k.plugin, _dtypes_note(k)) for k in kernels]
    if not kernels:
        rows.append(("kernel", "-", "-", "no kernel registered: the op cannot run"))
    if gradient is None:
        rows.append(("gradient", "-", "-", "no gradient registered"))
    elif gradient.fn is None:
        rows.append(("gradient", gradient.site, gradient.plugin,
                     "not differentiable: %s" % (gradient.reason or "no reason given")))
    else:
        rows.append(("gradient", gradient.site, gradient.plugin, ""))
    title = "Op %s: %s" % (op_type, registry.op_def(op_type).doc or "(no doc)")
    return [title] + _table(("WHAT", "WHERE", "PLUGIN", "NOTE"), rows)


def _dtypes_note(kernel_def):
    """``"dtypes: float32, ..."`` for a kernel restricted to some dtypes, else ``""``."""
    if kernel_def.dtypes is None:
        return ""
    return "dtypes: " + ", ".join(sorted(d.name for d in kernel_def.dtypes))


def _table(header, rows):
    """Left-aligned columns, two spaces apart, indented by two."""
    widths = [max(len(str(row[i])) for row in [header] + rows) for i in range(len(header))]
    lines = []
    for row in [header] + rows:
        cells = [str(cell).ljust(width) for cell, width in zip(row, widths)]
        lines.append(("  " + "  ".join(cells)).rstrip())
    return lines
