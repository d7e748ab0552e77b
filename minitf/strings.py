"""``tf.strings``: the string ops under their TF 1.13+ names (``tf.strings.join`` ...).

The same functions as ``tf.string_join``, ``tf.string_to_number``,
``tf.substr``, ``tf.regex_replace``, ``tf.as_string`` and ``tf.reduce_join``
(see :mod:`minitf.ops.string_ops`); ``tf.strings.split`` is TF1's new
splitter (``StringSplitV2``, Python's ``str.split`` rules), where the older
``tf.string_split`` splits at any character of its delimiter.
"""

from minitf.ops.string_ops import (  # noqa: F401 - the public API
    as_string, length, lower, reduce_join, regex_replace, split, string_join as join,
    string_to_number as to_number, strip, substr, upper)
