"""The PySpark pipeline (layer 6): ``puffin stats compute`` and ``puffin scan --spark``.

Only this package (and the ``stats`` and ``scan`` commands) imports pyspark, and only inside
functions, so ``import puffin_cli.spark`` stays cheap. :mod:`.planning` and
:mod:`.expressions` are plain Python; :mod:`.session` creates the one SparkSession.
"""
