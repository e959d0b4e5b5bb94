"""Repairing an Iceberg table (`puffin repair`): planning repairs from the `puffin table`
findings (:mod:`.model`), deletion-vector repairs (:mod:`.dvs`), statistics and orphan repairs
(:mod:`.stats`, :mod:`.orphans`), and carrying the plan out as one commit (:mod:`.apply`)."""
