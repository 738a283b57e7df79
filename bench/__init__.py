"""Benchmarks of lightrag_pg: a generated corpus, ingest throughput and query latency."""
