"""Converters from the public datasets in ../shared/data to assay's records (never packaged)."""
