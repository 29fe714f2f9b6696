"""Triage handoff snapshots: export (JSON + Markdown + SVG) and read-only reopen."""
