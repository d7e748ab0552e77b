"""The devices of a session, as the registry's device factories offer them.

``ConfigProto(device_count={"CPU": 4})`` asks for four CPU devices
(``/cpu:0`` ... ``/cpu:3``).  A factory that can simulate devices
(``simulated_processes``, the CPU's) makes as many as asked, the extra ones
each in a process of its own (see :mod:`~minitf.runtime.worker.processes`);
another makes at most what the machine has.  A type missing from
``device_count`` gets what its factory offers.  Devices are listed by priority (GPU before
CPU), which is the order the placer tries them in.
"""


def device_specs(registry, config):
    """``[(factory, index, in_process)]`` for every device the session should have.

    Extra devices of a simulating factory (``/cpu:1`` and up) run in their
    own processes unless ``config.device_processes`` is False.

    Raises:
        RuntimeError: if no plugin registers any device.
    """
    specs = []
    for factory in registry.device_factories():
        count = factory.count()
        if factory.device_type in config.device_count:
            requested = config.device_count[factory.device_type]
            count = requested if factory.simulated_processes else min(count, requested)
        for index in range(count):
            remote = factory.simulated_processes and index > 0 and config.device_processes
            specs.append((factory, index, not remote))
    if not specs:
        raise RuntimeError("No devices are available: no installed plugin registered a device. "
                           "Run `python -m minitf plugins` to see what is installed.")
    return specs


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
