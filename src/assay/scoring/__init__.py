"""Score rows: the rubric, loading and validating `scores.jsonl`, and pairing conditions."""
