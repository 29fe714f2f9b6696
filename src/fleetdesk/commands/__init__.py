"""Subcommands of ``fleetdesk``, one module each (see fleetdesk.cli)."""
