"""Integrations with the systems teams already run: Prometheus (metrics source), Alertmanager and webhooks (paging)."""
