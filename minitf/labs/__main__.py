"""``python -m minitf.labs``: list the gradient-check labs, or start one.

::

    $ python -m minitf.labs list
    $ python -m minitf.labs start sigmoid ./my_lab
    $ pytest ./my_lab

See :mod:`minitf.labs`.
"""

import argparse
import sys

from minitf import labs


def main(argv=None):
    """Runs the command line; returns the process exit status.

    Args:
        argv: the arguments after ``python -m minitf.labs`` (default: ``sys.argv[1:]``).
    """
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    return args.run(args)


def _parser():
    parser = argparse.ArgumentParser(
        prog="python -m minitf.labs",
        description="minitf's gradient-check labs: write an op's gradient, run pytest.")
    parser.set_defaults(command=None)
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")
    listing = commands.add_parser("list", help="list the labs",
                                  description="List the labs, in teaching order.")
    listing.set_defaults(command="list", run=_list_command)
    start = commands.add_parser(
        "start", help="write a lab's starter files into a folder",
        description="Write the lab's README.md, its module to complete and its tests into "
                    "DEST (default: ./NAME). Existing files are never overwritten.")
    start.add_argument("name", metavar="NAME", help="the lab (see: python -m minitf.labs list)")
    start.add_argument("dest", metavar="DEST", nargs="?", help="the folder (default: ./NAME)")
    start.set_defaults(command="start", run=_start_command)
    return parser


def _list_command(args):
    del args
    width = max(len(lab.name) for lab in labs.LABS)
    for lab in labs.LABS:
        print("%s  %s" % (lab.name.ljust(width), lab.title))
    print("\nStart one with: python -m minitf.labs start NAME [DEST]")
    return 0


def _start_command(args):
    dest = args.dest or args.name
    try:
        written = labs.start_lab(args.name, dest)
    except (ValueError, OSError) as error:
        print("python -m minitf.labs start: %s" % error, file=sys.stderr)
        return 1
    lab = labs.get_lab(args.name)
    print("Started lab %r in %s:" % (lab.name, dest))
    for path in written:
        print("  %s" % path)
    print("\nRead %s, complete %s, then run:\n\n    pytest %s\n"
          % (written[0], written[1], dest))
    return 0


if __name__ == "__main__":
    sys.exit(main())
