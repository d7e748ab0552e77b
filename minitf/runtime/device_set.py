"""The devices of a session, created from the registry's device factories.

``ConfigProto(device_count={"CPU": 4})`` asks for up to four CPU devices
(``/cpu:0`` ... ``/cpu:3``); a type missing from ``device_count`` gets what its
factory offers.  Devices are listed by priority (GPU before CPU), which is the
order the placer tries them in.
"""


def create_devices(registry, config):
    """Creates the session's devices, highest-priority type first.

    Raises:
        RuntimeError: if no plugin registers any device.
    """
    devices = []
    for factory in registry.device_factories():
        count = factory.count()
        if factory.device_type in config.device_count:
            requested = config.device_count[factory.device_type]
            count = requested if factory.device_type == "CPU" else min(count, requested)
        for index in range(count):
            devices.append(factory.create(index, options=config))
    if not devices:
        raise RuntimeError("No devices are available: no installed plugin registered a device. "
                           "Run `python -m minitf plugins` to see what is installed.")
    return devices


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
