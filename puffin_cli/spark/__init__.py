"""The PySpark pipeline (layer 6): ``puffin stats compute`` and ``puffin scan --spark``.

Only this package (and the ``stats`` and ``scan`` commands) imports pyspark, and only inside
functions, so ``import puffin_cli.spark`` stays cheap. :mod:`.session` creates
the one SparkSession. What is not Spark (planning a snapshot, task groups, the work of one task)
is plain Python in :mod:`puffin_cli.analysis.stats`.
"""
