"""`assay judge-bench`: a judge against public human-labelled pairwise sets."""

from assay.api.judgebench.run import BenchResult, bench_summary, judge_bench, load_items
from assay.api.judgebench.sets import SETS, BenchItem

__all__ = ["SETS", "BenchItem", "BenchResult", "bench_summary", "judge_bench", "load_items"]
