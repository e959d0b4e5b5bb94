"""Repairing an Iceberg table (`puffin repair`): what a plan is made of (:mod:`.model`),
deletion-vector repairs (:mod:`.dvs`), statistics and orphan repairs (:mod:`.stats`,
:mod:`.orphans`), the statistics a DV repair's new snapshot carries (:mod:`.carry`), what the
user can do about the findings left alone (:mod:`.left`), and the plan made from the `puffin
table` findings and carried out as one commit (:mod:`.plan`)."""
