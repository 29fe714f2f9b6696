"""Fleet files: loading and validating them, generating them, and explaining one model of a fleet."""

from fleetdesk.fleets.files import (
    BUILTIN_FLEETS,
    Fleet,
    FleetFileError,
    build_fleet,
    load_fleet,
    parse_fleet_file,
    parse_registry_file,
    resolve_fleet_path,
    shift_history,
)

__all__ = [
    "BUILTIN_FLEETS",
    "Fleet",
    "FleetFileError",
    "build_fleet",
    "load_fleet",
    "parse_fleet_file",
    "parse_registry_file",
    "resolve_fleet_path",
    "shift_history",
]
