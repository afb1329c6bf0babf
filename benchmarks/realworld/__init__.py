"""The real-world accuracy benchmark: corpus, labels, recall set (see docs/benchmarks.md)."""
