"""Gradient-check labs: write an op's gradient, let pytest check it numerically.

Each lab is a folder of package data, ``minitf/labs/lab-files/<name>/`` (the
hyphen keeps Python and setuptools from taking the folders for packages):

* ``README.md`` — what the op computes and the gradient to derive;
* ``lab_<name>.py`` — the *complete* solution: gradient functions registered
  with ``tf.RegisterGradient`` and wrappers that build the forward op under
  ``Graph.gradient_override_map``, so that ``tf.gradients`` calls the lab's
  gradient.  The lines the student writes are fenced by ``# BEGIN SOLUTION``
  and ``# END SOLUTION`` comments;
* ``test_<name>.py`` — pytest tests built on minitf's pytest plugin (the
  ``gradcheck`` fixture and the ``gradient`` marker), so a lab folder needs
  no ``conftest.py``.

:func:`start_lab` copies a lab into a student's folder with each fenced
region replaced by ``raise NotImplementedError`` (see
:mod:`minitf.labs.starter`).  From a shell::

    $ python -m minitf.labs list
    $ python -m minitf.labs start sigmoid ./my_lab
    $ pytest ./my_lab          # fails until the gradient is written

The project's tests run every lab both ways: the starter must fail with
NotImplementedError, the solution must pass.
"""

import dataclasses
import importlib.resources
import pathlib

from minitf.labs.starter import make_starter


@dataclasses.dataclass(frozen=True)
class Lab:
    """One lab of the catalogue.

    Attributes:
        name: what ``start_lab`` and ``python -m minitf.labs start`` take.
        title: one line: the op, and what its gradient teaches.
    """

    name: str
    title: str

    @property
    def module_file(self):
        """The solution module (the starter is generated from it)."""
        return "lab_%s.py" % self.name

    @property
    def test_file(self):
        """The pytest file the student runs."""
        return "test_%s.py" % self.name

    @property
    def files(self):
        """The files a started lab consists of, in the order they are written."""
        return ("README.md", self.module_file, self.test_file)


LAB_FILES = "lab-files"  # the folder, beside this module, that holds one folder per lab

# The catalogue, in teaching order.  A lab is listed here explicitly (a test
# checks that every lab folder is listed and every listed lab has its files).
LABS = (
    Lab("sigmoid", "Sigmoid: an elementwise op, differentiated using its own output"),
    Lab("dense", "A dense layer, matmul + bias_add: matrix gradients, and the gradient "
                 "of a broadcast"),
    Lab("softmax_cross_entropy", "Softmax cross-entropy: the classifier's loss, "
                                 "differentiated row by row"),
    Lab("max_pool", "Max pooling over non-overlapping windows: routing the gradient "
                    "to each window's winner"),
)


def list_labs():
    """The names of the labs, in teaching order.

    Example:
        >>> list_labs()[0]
        'sigmoid'
    """
    return [lab.name for lab in LABS]


def get_lab(name):
    """The :class:`Lab` called ``name``.

    Raises:
        ValueError: if there is no such lab (the message lists the labs).
    """
    for lab in LABS:
        if lab.name == name:
            return lab
    raise ValueError("Unknown lab %r. The labs are: %s (python -m minitf.labs list)."
                     % (name, ", ".join(list_labs())))


def lab_files(name):
    """The lab's files as shipped (solution included): ``{file name: Traversable}``.

    For instructors and the project's tests; students start from
    :func:`start_lab`.

    Raises:
        ValueError: if there is no such lab.
    """
    lab = get_lab(name)
    folder = importlib.resources.files(__name__) / LAB_FILES / lab.name
    return {file_name: folder / file_name for file_name in lab.files}


def starter_files(name):
    """The text of each file of the lab's starter: ``{file name: text}``.

    The solution module goes through :func:`~minitf.labs.starter.make_starter`;
    the README and the tests are copied as they are.

    Raises:
        ValueError: if there is no such lab, or its markers are malformed.
    """
    lab = get_lab(name)
    texts = {}
    for file_name, resource in lab_files(name).items():
        text = resource.read_text(encoding="utf-8")
        if file_name == lab.module_file:
            text = make_starter(text, filename="%s/%s" % (lab.name, file_name))
        texts[file_name] = text
    return texts


def start_lab(name, dest):
    """Writes the starter of lab ``name`` into the folder ``dest``.

    ``dest`` is created if needed; it may already exist, but none of the
    lab's files may be in it: nothing is overwritten (and nothing is written
    when one of them is there).

    Args:
        name: a lab of :func:`list_labs`.
        dest: the folder (a path).

    Returns:
        The paths written, as :class:`pathlib.Path`.

    Raises:
        ValueError: if there is no such lab.
        FileExistsError: if one of the lab's files already exists in ``dest``.

    Example::

        start_lab("sigmoid", "my_lab")   # then: pytest my_lab
    """
    texts = starter_files(name)
    dest = pathlib.Path(dest)
    existing = [str(dest / file_name) for file_name in texts if (dest / file_name).exists()]
    if existing:
        raise FileExistsError("Refusing to overwrite %s: start the lab in a new folder, or "
                              "move your files away first." % ", ".join(existing))
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    for file_name, text in texts.items():
        path = dest / file_name
        with open(path, "x", encoding="utf-8", newline="") as f:  # "x": never overwrite
            f.write(text)
        written.append(path)
    return written
