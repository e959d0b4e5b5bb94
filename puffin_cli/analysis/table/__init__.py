"""Reading Iceberg tables: metadata JSON (:mod:`.metadata`), manifests (:mod:`.manifests`),
the `puffin table` report (:mod:`.report`, built by :mod:`.checks`) and statistics commits
(:mod:`.commit`)."""
