"""``puffin stats compute`` without Spark: the plan of a snapshot (:mod:`.plan`: columns, live
data files, :mod:`.delete_index`: the deletes attached to each), Iceberg's task groups
(:mod:`.task_groups`) and the work of one Spark task (:mod:`.sketch_task`: :mod:`.data_files`
read, :mod:`.row_deletes` dropped, columns sketched). Plain Python: no pyspark import."""
