"""Incident drills: scenario files, time-compressed replay against a backend, and the scorecard."""
