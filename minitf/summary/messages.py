"""``tf.Summary`` and ``tf.Event`` as small Python classes.

TF1 programs build summaries by hand for values computed outside the graph
(``tf.Summary(value=[tf.Summary.Value(tag="accuracy", simple_value=acc)])``)
and read event files back with ``tf.train.summary_iterator``.  These classes
have the protobuf messages' field names and the two methods programs use,
``SerializeToString`` and ``FromString``; the bytes are those of
:mod:`.proto`.
"""

import dataclasses
from typing import List, Optional

from minitf.summary import proto


@dataclasses.dataclass
class HistogramProto:
    """``tensorflow.HistogramProto``: summary statistics and bucket counts."""

    min: float = 0.0
    max: float = 0.0
    num: float = 0.0
    sum: float = 0.0
    sum_squares: float = 0.0
    bucket_limit: List[float] = dataclasses.field(default_factory=list)
    bucket: List[float] = dataclasses.field(default_factory=list)

    @classmethod
    def FromString(cls, data):  # noqa: N802 - the protobuf method name
        fields = proto.parse_message(data)

        def double(number):
            return proto.as_double(fields[number][0]) if number in fields else 0.0

        def packed(number):
            raw = b"".join(fields.get(number, []))
            return [proto.as_double(raw[i:i + 8]) for i in range(0, len(raw), 8)]

        return cls(double(1), double(2), double(3), double(4), double(5), packed(6), packed(7))


@dataclasses.dataclass
class Image:
    """``Summary.Image``: a PNG and its size."""

    height: int = 0
    width: int = 0
    colorspace: int = 0
    encoded_image_string: bytes = b""


@dataclasses.dataclass
class Value:
    """``Summary.Value``: a tag and one value (a scalar, histogram, image or tensor)."""

    tag: str = ""
    simple_value: Optional[float] = None
    histo: Optional[HistogramProto] = None
    image: Optional[Image] = None
    tensor: Optional[bytes] = None  # the serialized TensorProto
    plugin_name: str = ""  # from the value's SummaryMetadata

    def SerializeToString(self):  # noqa: N802 - the protobuf method name
        if self.histo is not None or self.tensor is not None:
            raise NotImplementedError("hand-built Summary values hold simple_value or image; "
                                      "use tf.summary.histogram / tf.summary.text ops")
        image = None if self.image is None else proto.image(
            self.image.height, self.image.width, self.image.colorspace,
            self.image.encoded_image_string)
        return proto.summary_value(self.tag, simple_value=self.simple_value, image=image)

    @classmethod
    def FromString(cls, data):  # noqa: N802
        fields = proto.parse_message(data)
        value = cls(tag=fields[1][0].decode("utf-8"))
        if 2 in fields:
            value.simple_value = proto.as_float(fields[2][0])
        if 4 in fields:
            image = proto.parse_message(fields[4][0])
            value.image = Image(image.get(1, [0])[0], image.get(2, [0])[0],
                                image.get(3, [0])[0], image.get(4, [b""])[0])
        if 5 in fields:
            value.histo = HistogramProto.FromString(fields[5][0])
        if 8 in fields:
            value.tensor = fields[8][0]
        if 9 in fields:
            plugin = proto.parse_message(proto.parse_message(fields[9][0])[1][0])
            value.plugin_name = plugin[1][0].decode("utf-8")
        return value


@dataclasses.dataclass
class Summary:
    """``tf.Summary``: a list of tagged values.

    Example:
        >>> s = Summary(value=[Summary.Value(tag="acc", simple_value=0.5)])
        >>> Summary.FromString(s.SerializeToString()).value[0].simple_value
        0.5
    """

    value: List[Value] = dataclasses.field(default_factory=list)
    Value = Value
    Image = Image

    def SerializeToString(self):  # noqa: N802
        return proto.summary([v.SerializeToString() for v in self.value])

    @classmethod
    def FromString(cls, data):  # noqa: N802
        return cls([Value.FromString(v) for v in proto.parse_message(data).get(1, [])])


@dataclasses.dataclass
class Event:
    """``tf.Event``: one record of an event file."""

    wall_time: float = 0.0
    step: int = 0
    file_version: str = ""
    graph_def: bytes = b""  # the serialized GraphDef
    summary: Optional[Summary] = None

    def HasField(self, name):  # noqa: N802 - the protobuf method name
        return bool(getattr(self, name))

    @classmethod
    def FromString(cls, data):  # noqa: N802
        fields = proto.parse_message(data)
        event = cls(wall_time=proto.as_double(fields[1][0]) if 1 in fields else 0.0,
                    step=proto.as_signed(fields[2][0]) if 2 in fields else 0)
        if 3 in fields:
            event.file_version = fields[3][0].decode("utf-8")
        if 4 in fields:
            event.graph_def = fields[4][0]
        if 5 in fields:
            event.summary = Summary.FromString(fields[5][0])
        return event
