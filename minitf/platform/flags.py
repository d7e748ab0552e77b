"""``tf.app.flags`` (also ``tf.flags``): command-line flags declared where they are used.

TF1 scripts declare flags at module level and read them as attributes of
``FLAGS``, which parses ``sys.argv`` the first time a flag is read (or when
``tf.app.run()`` starts the program)::

    flags = tf.app.flags
    flags.DEFINE_integer("batch_size", 100, "Batch size.")
    FLAGS = flags.FLAGS
    print(FLAGS.batch_size)       # --batch_size=32 on the command line gives 32

This is absl's flag API (the one TF1 re-exports) built on :mod:`argparse`.
Mirrors ``tensorflow/python/platform/flags.py``.
"""

import argparse
import sys


class FlagValues:
    """The registry of defined flags; ``FLAGS.name`` is a flag's parsed value."""

    def __init__(self):
        self.__dict__["_parser"] = argparse.ArgumentParser(allow_abbrev=False)
        self.__dict__["_values"] = {}
        self.__dict__["_parsed"] = False
        self.__dict__["_booleans"] = set()

    def define(self, name, default, help_text, type_fn, **kwargs):
        if name in self._values:
            raise DuplicateFlagError("The flag '%s' is defined twice." % name)
        self._values[name] = default
        if type_fn is not None:
            kwargs["type"] = type_fn
        self._parser.add_argument("--" + name, dest=name, default=default, help=help_text,
                                  **kwargs)

    def __call__(self, argv):
        """Parses the flags in ``argv`` (``argv[0]`` is the program); returns the rest."""
        known, rest = self._parser.parse_known_args([self._boolean_form(a) for a in argv[1:]])
        self._values.update(vars(known))
        self.__dict__["_parsed"] = True
        return [argv[0]] + rest

    def _boolean_form(self, arg):
        """``--fast=false`` as ``--nofast``, ``--fast=true`` as ``--fast``."""
        name, equals, value = arg[2:].partition("=")
        if not (arg.startswith("--") and equals and name in self._booleans):
            return arg
        return "--" + ("" if _boolean(value) else "no") + name

    def is_parsed(self):
        return self._parsed

    def __getattr__(self, name):
        values = self.__dict__["_values"]
        if name not in values:
            raise AttributeError("Unknown command line flag '%s'" % name)
        if not self._parsed:
            self(sys.argv)
        return values[name]

    def __setattr__(self, name, value):
        self._values[name] = value

    def __contains__(self, name):
        return name in self._values

    def flag_values_dict(self):
        return dict(self._values)


class DuplicateFlagError(Exception):
    """A flag defined twice."""


def _boolean(text):
    if text.lower() in ("true", "t", "1", "yes"):
        return True
    if text.lower() in ("false", "f", "0", "no"):
        return False
    raise ValueError("Expected a boolean flag value, got %r" % text)


FLAGS = FlagValues()


def DEFINE_string(name, default, help, flag_values=FLAGS):  # noqa: N802,A002 - absl's names
    flag_values.define(name, default, help, str)


def DEFINE_integer(name, default, help, flag_values=FLAGS):  # noqa: N802,A002
    flag_values.define(name, default, help, int)


def DEFINE_float(name, default, help, flag_values=FLAGS):  # noqa: N802,A002
    flag_values.define(name, default, help, float)


def DEFINE_boolean(name, default, help, flag_values=FLAGS):  # noqa: N802,A002
    """A boolean flag: ``--name``, ``--name=false`` or ``--noname``."""
    flag_values.define(name, default, help, None, action="store_true")
    flag_values._parser.add_argument("--no" + name, dest=name, action="store_false",
                                     help=argparse.SUPPRESS)
    flag_values._booleans.add(name)


DEFINE_bool = DEFINE_boolean


def DEFINE_enum(name, default, enum_values, help, flag_values=FLAGS):  # noqa: N802,A002
    flag_values.define(name, default, help, str, choices=list(enum_values))
