"""Plugins that fail safely and loudly: one broken plugin breaks nothing else.

Each test reloads the registry from the installed entry points plus fake
ones — small plugin modules written to ``tmp_path`` — and checks that the
broken plugin is skipped and named (with its traceback), that minitf itself
keeps working, that ``MINITF_DISABLE_PLUGINS`` switches plugins off and that
``python -m minitf plugins`` shows every plugin's state.  The real registry
comes back after each test (``monkeypatch`` restores it).
"""

import importlib.metadata
import os
import pathlib
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import minitf as tf
from minitf import cli
from minitf.registry import (
    OpDef, PluginError, PluginLoadWarning, hookimpl, register_plugin, unregister_plugin)
from minitf.registry import loading
from minitf.registry import registry as registry_lib

ROOT = pathlib.Path(__file__).resolve().parent.parent


@pytest.fixture
def fake_plugin(tmp_path, monkeypatch, request):
    """``fake_plugin(name, source)``: an entry point ``name`` whose module (named
    after it) is ``source``, written to ``tmp_path`` and imported only when the
    registry loads it."""
    monkeypatch.syspath_prepend(str(tmp_path))

    def make(name, source):
        module = "minitf_fake_%s" % name
        (tmp_path / (module + ".py")).write_text(textwrap.dedent(source))
        request.addfinalizer(lambda: sys.modules.pop(module, None))
        return importlib.metadata.EntryPoint(name=name, value=module, group="minitf")
    return make


@pytest.fixture
def load_plugins(monkeypatch):
    """``load_plugins(*fake_entry_points, disabled="")`` loads a fresh registry from
    the installed plugins plus the fakes; returns it with the PluginLoadWarnings."""
    installed = loading.entry_points()

    def load(*fakes, disabled=""):
        monkeypatch.setattr(loading, "entry_points", lambda: installed + list(fakes))
        monkeypatch.setenv(loading.DISABLE_VARIABLE, disabled)
        monkeypatch.setattr(registry_lib, "_registry", None)
        monkeypatch.setattr(registry_lib, "_loader", None)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            registry = registry_lib.get_registry()
        return registry, [str(w.message) for w in caught
                          if issubclass(w.category, PluginLoadWarning)]
    return load


def _report(name):
    (report,) = [r for r in registry_lib.plugin_reports() if r.name == name]
    return report


def _minitf_still_works():
    x = tf.placeholder(tf.float32, [2])
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(tf.square(x) + 1.0, {x: [1.0, 3.0]}), [2.0, 10.0])


BROKEN_IMPORT = """
    import minitf.registry

    raise OSError("libFancyAccel.so: cannot open shared object file")
"""

BROKEN_HOOK = """
    from minitf.registry import OpDef, hookimpl

    @hookimpl
    def minitf_register_ops(registry):
        registry.register_op(OpDef("HalfDone", inputs=("x",), doc="Declared before the crash."))

    @hookimpl
    def minitf_register_kernels(registry):
        raise RuntimeError("kernel table is corrupt")
"""

MISSPELLED_HOOK = """
    from minitf.registry import hookimpl

    @hookimpl
    def minitf_register_device(registry):
        raise AssertionError("never called")
"""

NO_HARDWARE = """
    from minitf.registry import hookimpl

    @hookimpl
    def minitf_register_devices(registry):
        registry.note_unavailable("TPU", "no TPU board on this machine")
"""


# ---- a plugin whose import or hook raises ------------------------------------------------
def test_plugin_whose_import_raises_is_skipped_and_named(fake_plugin, load_plugins):
    registry, warned = load_plugins(fake_plugin("fancy_accel", BROKEN_IMPORT))
    (message,) = warned
    assert "plugin 'fancy_accel'" in message and "MINITF_DISABLE_PLUGINS=fancy_accel" in message
    assert "minitf_fake_fancy_accel.py" in message  # the traceback, down to the file
    assert "OSError: libFancyAccel.so" in message
    report = _report("fancy_accel")
    assert report.state == "failed" and report.reason.startswith("OSError: libFancyAccel.so")
    assert "Traceback" in report.traceback
    assert [_report(n).state for n in ("core_ops", "numpy_cpu")] == ["loaded", "loaded"]
    assert registry.device_factory("CPU") is not None
    _minitf_still_works()


def test_plugin_whose_hook_raises_leaves_nothing_behind(fake_plugin, load_plugins):
    registry, warned = load_plugins(fake_plugin("half_done", BROKEN_HOOK))
    (message,) = warned
    assert "plugin 'half_done'" in message and "RuntimeError: kernel table is corrupt" in message
    report = _report("half_done")
    assert report.state == "failed"
    assert "minitf_register_kernels" in report.reason  # which hook raised
    assert not registry.has_op("HalfDone")  # its first hook's op was removed again
    assert "half_done" not in registry_lib.plugin_names()
    # A program that needs the plugin learns why it is missing.
    with pytest.raises(KeyError, match="failed to load.*half_done"):
        registry.op_def("HalfDone")
    _minitf_still_works()


def test_core_ops_failing_is_an_import_error_naming_it(load_plugins):
    with pytest.raises(ImportError, match="plugin 'core_ops' is disabled"):
        load_plugins(disabled="core_ops")


# ---- a misspelled hook -----------------------------------------------------------------
def test_misspelled_hook_fails_naming_plugin_and_closest_hook(fake_plugin, load_plugins):
    registry, warned = load_plugins(fake_plugin("typo", MISSPELLED_HOOK))
    (message,) = warned
    expected = ("Plugin 'typo' implements 'minitf_register_device', which is not a minitf "
                "hook; did you mean 'minitf_register_devices'?")
    assert expected in message
    assert _report("typo").state == "failed" and expected in _report("typo").reason
    assert "typo" not in registry_lib.plugin_names()
    _minitf_still_works()


def test_misspelled_hook_at_run_time_raises_plugin_error():
    class Typo:
        @hookimpl
        def minitf_register_kernel(self, registry):
            raise AssertionError("never called")

    with pytest.raises(PluginError, match="did you mean 'minitf_register_kernels'"):
        register_plugin(Typo(), name="typo_at_run_time")
    assert "typo_at_run_time" not in registry_lib.plugin_names()


def test_hook_without_marker_is_an_error_not_silence():
    class Unmarked:
        def minitf_register_ops(self, registry):
            raise AssertionError("never called")

    with pytest.raises(PluginError, match="'minitf_register_ops' without the @hookimpl marker"):
        register_plugin(Unmarked(), name="unmarked")


def test_hook_with_wrong_argument_is_reported(fake_plugin, load_plugins):
    source = """
        from minitf.registry import hookimpl

        @hookimpl
        def minitf_register_ops(reg):
            pass
    """
    _, warned = load_plugins(fake_plugin("bad_args", source))
    assert len(warned) == 1 and "plugin 'bad_args'" in warned[0]
    assert _report("bad_args").state == "failed" and "reg" in _report("bad_args").reason


# ---- a name already taken ----------------------------------------------------------------
def test_run_time_plugin_under_a_taken_name_names_both_sources():
    class Impostor:
        pass

    with pytest.raises(PluginError) as info:
        register_plugin(Impostor(), name="numpy_cpu")
    message = str(info.value)
    assert "Plugin name 'numpy_cpu' is already taken" in message
    assert "entry point 'numpy_cpu = minitf_numpy_cpu' of minitf" in message
    assert "Impostor registered at run time" in message
    assert isinstance(info.value, ValueError)  # what pluggy raised before
    assert registry_lib.get_registry().kernel("Add", "CPU", (tf.float32,)).plugin == "numpy_cpu"


def test_same_plugin_registered_twice_is_a_plugin_error():
    class Twice:
        @hookimpl
        def minitf_register_ops(self, registry):
            registry.register_op(OpDef("TwiceOp", inputs=("x",)))

    plugin = Twice()
    register_plugin(plugin, name="twice")
    try:
        with pytest.raises(PluginError, match="already registered as plugin 'twice'"):
            register_plugin(plugin, name="twice_again")
    finally:
        unregister_plugin(plugin)
    assert not registry_lib.get_registry().has_op("TwiceOp")


def test_entry_point_under_a_taken_name_is_skipped(fake_plugin, load_plugins):
    registry, warned = load_plugins(fake_plugin("numpy_cpu", NO_HARDWARE))
    (message,) = warned
    assert "Plugin name 'numpy_cpu' is already taken" in message
    assert "minitf_fake_numpy_cpu" in message  # the second source
    states = sorted(r.state for r in registry_lib.plugin_reports() if r.name == "numpy_cpu")
    assert states == ["failed", "loaded"]
    assert "TPU" not in registry.unavailable_devices()
    _minitf_still_works()


# ---- switching plugins off, no hardware ----------------------------------------------------
def test_disabled_plugins_are_not_even_imported(fake_plugin, load_plugins):
    registry, warned = load_plugins(fake_plugin("fancy_accel", BROKEN_IMPORT),
                                    disabled=" fancy_accel , opencl_gpu")
    assert warned == []
    assert "minitf_fake_fancy_accel" not in sys.modules
    for name in ("fancy_accel", "opencl_gpu"):
        report = _report(name)
        assert report.state == "disabled" and "MINITF_DISABLE_PLUGINS" in report.reason
    assert registry.device_factory("GPU") is None
    _minitf_still_works()


def test_plugin_without_hardware_says_why(fake_plugin, load_plugins):
    registry, warned = load_plugins(fake_plugin("tpu", NO_HARDWARE))
    assert warned == []
    report = _report("tpu")
    assert report.state == "no hardware"
    assert report.reason == "TPU: no TPU board on this machine"


# ---- python -m minitf plugins ------------------------------------------------------------
def test_plugins_command_shows_every_state(fake_plugin, load_plugins, capsys):
    load_plugins(fake_plugin("fancy_accel", BROKEN_IMPORT), fake_plugin("typo", MISSPELLED_HOOK),
                 fake_plugin("tpu", NO_HARDWARE), fake_plugin("spare", NO_HARDWARE),
                 disabled="spare")
    assert cli.main(["plugins"]) == 1  # a plugin failed
    out = capsys.readouterr().out
    # Each plugin's row, its cells joined by single spaces.
    rows = {line.split()[0]: " ".join(line.split()) for line in out.splitlines()[2:9]}
    assert rows["fancy_accel"].endswith(
        "minitf_fake_fancy_accel failed OSError: libFancyAccel.so: cannot open shared object file")
    assert rows["typo"].endswith(
        "failed PluginError: Plugin 'typo' implements 'minitf_register_device', which is not "
        "a minitf hook; did you mean 'minitf_register_devices'?")
    assert rows["tpu"].endswith("no hardware TPU: no TPU board on this machine")
    assert rows["spare"].endswith("disabled switched off by MINITF_DISABLE_PLUGINS")
    assert rows["numpy_cpu"] == "numpy_cpu minitf %s minitf_numpy_cpu loaded" % tf.__version__
    assert ("Plugin 'fancy_accel' failed and was skipped (switch it off with "
            "MINITF_DISABLE_PLUGINS=fancy_accel):") in out
    assert 'raise OSError("libFancyAccel.so' in out  # its traceback's source line
    assert "Add" in out  # the ops table is still there


def test_plugins_command_from_a_shell_with_a_plugin_disabled():
    run = subprocess.run([sys.executable, "-m", "minitf", "plugins"], capture_output=True,
                         text=True, cwd=str(ROOT), timeout=120,
                         env={**os.environ, "MINITF_DISABLE_PLUGINS": "opencl_gpu"})
    assert run.returncode == 0, run.stderr
    (row,) = [line.split() for line in run.stdout.splitlines()
              if line.split()[:1] == ["opencl_gpu"]]
    assert row[4:] == ["disabled", "switched", "off", "by", "MINITF_DISABLE_PLUGINS"]
    assert not [line for line in run.stdout.splitlines() if line.split()[:1] == ["GPU"]]
