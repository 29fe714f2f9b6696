"""fleetdesk: the on-call console for a fleet of production ML models."""

__version__ = "0.1.0"
