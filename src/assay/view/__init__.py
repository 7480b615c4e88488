"""assay view: a read-only results explorer over the run store."""
