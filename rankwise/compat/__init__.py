"""Drop-in adapters for code written against other evaluation libraries.

Each adapter lives in its own module and is imported only when asked for, so that
``import rankwise`` never loads a peer library:

* ``from rankwise.compat import pytrec_eval``: ``RelevanceEvaluator``, ``parse_qrel``,
  ``parse_run``, ``supported_measures``, with pytrec_eval's dict API, keys and values;
* ``import rankwise.compat.ir_measures``: registers the ``rankwise`` provider in ir_measures'
  provider registry (needs ir-measures).

Learning-to-rank and tensor adapters are top-level modules: :mod:`rankwise.sklearn`,
:mod:`rankwise.lightgbm`, :mod:`rankwise.xgboost` and :mod:`rankwise.torch`. What they share
lives here: :mod:`.candidates` (fixed candidate lists scored again and again), :mod:`.boosting`
(one set of candidates per evaluation data set), :mod:`.tensors` (the torch kernels) and
:mod:`._nested` (dict-of-dicts to Run and Qrels through the fast columns of :mod:`rankwise.io.nested`).
"""
