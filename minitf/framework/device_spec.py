"""Device names: ``tf.DeviceSpec`` and the functions behind ``tf.device``.

A device name is a path of optional fields,
``/job:<name>/replica:<n>/task:<n>/device:<TYPE>:<n>``; the legacy forms
``/cpu:0`` and ``/gpu:1`` mean ``/device:CPU:0`` and ``/device:GPU:1``.  Any
field may be missing (``/device:GPU:*`` or just ``/job:ps``): a partial name
constrains placement only in the fields it gives.  Nested ``tf.device``
blocks *merge*: the inner block's fields override the outer's.

Mirrors ``tensorflow/python/framework/device_spec.py`` and ``device.py``.
"""

class DeviceSpec:
    """A (partial) device specification.

    Example:
        >>> DeviceSpec.from_string("/job:ps/task:0/device:GPU:1").to_string()
        '/job:ps/task:0/device:GPU:1'
        >>> DeviceSpec.from_string("/gpu:1").to_string()
        '/device:GPU:1'
    """

    __slots__ = ("job", "replica", "task", "device_type", "device_index")

    def __init__(self, job=None, replica=None, task=None, device_type=None, device_index=None):
        self.job = job
        self.replica = None if replica is None else int(replica)
        self.task = None if task is None else int(task)
        self.device_type = device_type.upper() if device_type in ("cpu", "gpu") else device_type
        self.device_index = None if device_index is None else int(device_index)

    @classmethod
    def from_string(cls, spec):
        """Parses a device name.  Raises ``ValueError`` naming a malformed string."""
        return cls().parse_from_string(spec)

    def parse_from_string(self, spec):
        if spec is None:
            spec = ""
        if not isinstance(spec, str):
            raise ValueError("Device name must be a string, got %r" % (spec,))
        parts = [p for p in spec.split("/") if p]
        try:
            for part in parts:
                self._parse_part(part, spec)
        except (ValueError, TypeError):
            raise ValueError("Unknown attribute or malformed device string: '%s' in %r"
                             % (part, spec)) from None
        return self

    def _parse_part(self, part, spec):
        key, _, rest = part.partition(":")
        if key == "job" and rest:
            self.job = rest
        elif key == "replica":
            self.replica = int(rest)
        elif key == "task":
            self.task = int(rest)
        elif key == "device":
            dtype, _, index = rest.partition(":")
            if not dtype:
                raise ValueError(spec)
            self.device_type = dtype.upper() if dtype.lower() in ("cpu", "gpu") else dtype
            self.device_index = None if index in ("", "*") else int(index)
        elif key.lower() in ("cpu", "gpu") and rest:
            self.device_type = key.upper()
            self.device_index = None if rest == "*" else int(rest)
        else:
            raise ValueError(spec)

    def merge_from(self, other):
        """Overrides this spec's fields with the fields ``other`` sets."""
        for field in self.__slots__:
            value = getattr(other, field)
            if value is not None:
                setattr(self, field, value)

    def make_merged_spec(self, other):
        merged = self.copy()
        merged.merge_from(other)
        return merged

    def copy(self):
        return DeviceSpec(self.job, self.replica, self.task, self.device_type, self.device_index)

    def to_string(self):
        out = ""
        if self.job is not None:
            out += "/job:" + self.job
        if self.replica is not None:
            out += "/replica:%d" % self.replica
        if self.task is not None:
            out += "/task:%d" % self.task
        if self.device_type is not None:
            index = "*" if self.device_index is None else str(self.device_index)
            out += "/device:%s:%s" % (self.device_type, index)
        return out

    def is_compatible_with(self, other):
        """True when no field set in both specs differs."""
        return all(getattr(self, f) is None or getattr(other, f) is None
                   or getattr(self, f) == getattr(other, f) for f in self.__slots__)

    def __eq__(self, other):
        return isinstance(other, DeviceSpec) and self.to_string() == other.to_string()

    def __hash__(self):
        return hash(self.to_string())

    def __repr__(self):
        return "<DeviceSpec '%s'>" % self.to_string()


def canonical_name(device):
    """The canonical string of a device name or spec (``/gpu:0`` -> ``/device:GPU:0``)."""
    if device is None:
        return ""
    if isinstance(device, DeviceSpec):
        return device.to_string()
    return DeviceSpec.from_string(device).to_string()


def device_function(device_name_or_function):
    """Turns the argument of ``tf.device`` into ``fn(op) -> device string``.

    The graph applies the functions of its nested ``tf.device`` blocks from
    the innermost outwards, each seeing in ``op.device`` what the inner ones
    chose (TF's ``Graph._apply_device_functions``):

    * a string or :class:`DeviceSpec` *merges*: it fills only the fields the
      inner blocks left unset, so inner fields win;
    * a function (``tf.train.replica_device_setter``'s, say) is called with
      the :class:`Operation` and returns a device string or ``DeviceSpec``;
      whether it keeps ``op.device`` is up to it;
    * None returns None: the graph stops there, so blocks outside a
      ``tf.device(None)`` do not apply.
    """
    if device_name_or_function is None:
        return None
    if callable(device_name_or_function) and not isinstance(device_name_or_function, str):
        user_fn = device_name_or_function
        return lambda op: canonical_name(user_fn(op))
    if isinstance(device_name_or_function, DeviceSpec):
        spec = device_name_or_function.copy()
    else:
        spec = DeviceSpec.from_string(device_name_or_function)

    def merge(op):
        return spec.make_merged_spec(DeviceSpec.from_string(op.device)).to_string()
    return merge
