"""``python -m cuemem``: the command line, as the ``cuemem`` script runs it."""

from .cli import main

main(prog_name="cuemem")
