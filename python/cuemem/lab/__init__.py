"""The lab: cuemem's demo, benchmarks and evaluations, shipped in the wheel beside the engine.

The engine (every module outside this package) never imports it; the ``cuemem`` command line
finds its commands (:func:`cuemem.lab.commands.commands`) through the ``cuemem.commands``
entry-point group that pyproject.toml declares.

- :mod:`cuemem.lab.demo`: a synthetic year of work life, and the tour ``cuemem demo`` gives.
- :mod:`cuemem.lab.bench`: ``cuemem bench`` and its parts, ``bench-dedupe``, ``bench-jobs``.
- :mod:`cuemem.lab.eval`: ``cuemem eval``: recall quality (LoCoMo, the everyday questions),
  dedupe's precision and recall, write-path security on injection corpora.
"""
