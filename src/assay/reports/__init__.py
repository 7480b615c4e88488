"""Reports: one typed data model (`model.Report`), rendered as Markdown, JSON and JUnit XML."""
