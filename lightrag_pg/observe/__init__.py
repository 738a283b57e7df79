"""Observability: OpenTelemetry spans and Prometheus metrics, each through an optional package.

Nothing here imports the rest of lightrag_pg, so every layer may use it.
"""
