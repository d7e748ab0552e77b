"""The devices of a session, as the registry's device factories offer them.

``ConfigProto(device_count={"CPU": 4})`` asks for exactly four CPU devices
(``/cpu:0`` ... ``/cpu:3``), and works the same for any device type a plugin
registers:

* a type whose factory keeps its buffers in host memory
  (:attr:`~minitf.registry.device.DeviceFactory.host_memory`, the CPU's) can
  have any number of devices: the count is exact, and the devices beyond the
  first each run in a process of their own (see
  :mod:`~minitf.runtime.worker.processes`);
* a type with device memory can have at most what the machine has
  (``factory.count()``); asking for more is an error, not a silent cap;
* a count of 0 removes the type; a type missing from ``device_count`` gets
  what its factory offers; a type no plugin registers is ignored, so one
  config runs on machines with and without a GPU.

TF's ``device_count`` is a maximum for GPUs and exact for CPUs; minitf makes
it exact for every type, since a device it cannot provide is one a program
would otherwise silently run without.  Devices are listed by priority (GPU
before CPU), which is the order the placer tries them in.
"""

from minitf.framework import errors
from minitf.registry import plugin_reports
from minitf.registry.loading import RUN_TIME


def device_specs(registry, config):
    """``[(factory, index, in_process)]`` for every device the session should have.

    Devices beyond the first of a host-memory type (``/cpu:1`` and up) run in
    their own processes unless ``config.device_processes`` is False.

    Raises:
        InvalidArgumentError: if ``device_count`` asks for more devices of a
            type with device memory than the machine has, or for device
            processes of a type whose plugin was registered at run time.
        RuntimeError: if no plugin registers any device.
    """
    specs = []
    for factory in registry.device_factories():
        count = _device_count(factory, config.device_count)
        for index in range(count):
            remote = factory.host_memory and index > 0 and config.device_processes
            specs.append((factory, index, not remote))
        if count > 1 and factory.host_memory and config.device_processes:
            _check_installed(registry, factory.device_type)
    if not specs:
        raise RuntimeError("No devices are available: no installed plugin registered a device. "
                           "Run `python -m minitf plugins` to see what is installed.")
    return specs


def _device_count(factory, device_count):
    """How many devices of ``factory``'s type the session gets."""
    offered = factory.count()
    requested = device_count.get(factory.device_type)
    if requested is None:
        return offered
    if requested < 0:
        raise errors.InvalidArgumentError(
            None, None, "ConfigProto.device_count[%r] is %d; a count cannot be negative"
            % (factory.device_type, requested))
    if requested > offered and not factory.host_memory:
        raise errors.InvalidArgumentError(
            None, None, "ConfigProto.device_count asks for %d %s devices, but this machine has "
            "%d (%s devices keep their buffers in device memory, so minitf cannot simulate "
            "more of them)" % (requested, factory.device_type, offered, factory.device_type))
    return requested


def _check_installed(registry, device_type):
    """Raises unless ``device_type``'s plugin is installed (an entry point): a
    device process loads the installed plugins only, so it could not make a
    device whose plugin this process registered at run time."""
    plugin, _ = registry.device_origin(device_type)
    report = next((r for r in plugin_reports() if r.name == plugin), None)
    if report is not None and report.distribution == RUN_TIME:
        raise errors.InvalidArgumentError(
            None, None, "ConfigProto.device_count asks for several %s devices, each beyond the "
            "first in a device process of its own; but a device process loads only installed "
            "plugins, and plugin '%s' was registered at run time. Install it with an entry "
            "point (group 'minitf'), or keep the devices in this process with "
            "ConfigProto(device_processes=False)" % (device_type, plugin))


class DeviceAttributes:
    """What ``Session.list_devices()`` reports about one device."""

    def __init__(self, device):
        self.name = device.name
        self.device_type = device.device_type
        self.memory_limit_bytes = getattr(device, "memory_limit_bytes", 0)
        self.incarnation = id(device)

    def __repr__(self):
        return "_DeviceAttributes(%s, %s, %d)" % (self.name, self.device_type,
                                                   self.memory_limit_bytes)
