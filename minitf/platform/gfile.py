"""``tf.gfile`` (also ``tf.io.gfile``): file-system helpers under TF1's names.

TF1 scripts manage their log and checkpoint directories with these, e.g. the
TensorBoard tutorial's::

    if tf.gfile.Exists(FLAGS.log_dir):
        tf.gfile.DeleteRecursively(FLAGS.log_dir)
    tf.gfile.MakeDirs(FLAGS.log_dir)

minitf reads and writes local files only, so each is the matching
:mod:`os`/:mod:`shutil`/:mod:`glob` call.  Mirrors
``tensorflow/python/platform/gfile.py`` (``file_io``).
"""

import glob as _glob
import os
import shutil

from minitf.framework import errors


def Exists(filename):  # noqa: N802 - TF's names
    """Whether ``filename`` (a file or a directory) exists."""
    return os.path.exists(filename)


def IsDirectory(dirname):  # noqa: N802
    return os.path.isdir(dirname)


def MakeDirs(dirname):  # noqa: N802
    """Creates ``dirname`` and its missing parents (no error if it exists)."""
    os.makedirs(dirname, exist_ok=True)


def MkDir(dirname):  # noqa: N802
    """Creates ``dirname``; its parent must exist."""
    os.mkdir(dirname)


def ListDirectory(dirname):  # noqa: N802
    """The entries of ``dirname``, without ``.`` and ``..``.

    Raises:
        minitf.errors.NotFoundError: if it does not exist.
    """
    if not os.path.isdir(dirname):
        raise errors.NotFoundError(None, None, "Could not find directory %s" % dirname)
    return os.listdir(dirname)


def Glob(filename):  # noqa: N802
    """The paths matching the pattern ``filename``."""
    return _glob.glob(filename)


def Remove(filename):  # noqa: N802
    """Deletes the file ``filename``.

    Raises:
        minitf.errors.NotFoundError: if it does not exist.
    """
    if not os.path.exists(filename):
        raise errors.NotFoundError(None, None, "%s; No such file or directory" % filename)
    os.remove(filename)


def DeleteRecursively(dirname):  # noqa: N802
    """Deletes ``dirname`` and everything in it.

    Raises:
        minitf.errors.NotFoundError: if it does not exist.
    """
    if not os.path.exists(dirname):
        raise errors.NotFoundError(None, None, "%s; No such file or directory" % dirname)
    shutil.rmtree(dirname)


def Copy(oldpath, newpath, overwrite=False):  # noqa: N802
    """Copies a file.

    Raises:
        minitf.errors.AlreadyExistsError: if ``newpath`` exists and not ``overwrite``.
    """
    if os.path.exists(newpath) and not overwrite:
        raise errors.AlreadyExistsError(None, None, "file already exists: %s" % newpath)
    shutil.copyfile(oldpath, newpath)


def Rename(oldname, newname, overwrite=False):  # noqa: N802
    """Moves a file.

    Raises:
        minitf.errors.AlreadyExistsError: if ``newname`` exists and not ``overwrite``.
    """
    if os.path.exists(newname) and not overwrite:
        raise errors.AlreadyExistsError(None, None, "file already exists: %s" % newname)
    os.replace(oldname, newname)


def GFile(name, mode="r"):  # noqa: N802
    """Opens ``name`` like :func:`open` (``tf.gfile.GFile``, also ``tf.gfile.Open``)."""
    return open(name, mode)


Open = GFile
FastGFile = GFile

# tf.io.gfile's lower-case spellings.
exists = Exists
isdir = IsDirectory
makedirs = MakeDirs
mkdir = MkDir
listdir = ListDirectory
glob = Glob
remove = Remove
rmtree = DeleteRecursively
copy = Copy
rename = Rename
