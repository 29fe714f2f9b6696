"""Pure domain logic: registry, type-string grammar, stability and SLO math.

Nothing in here does I/O or imports from the rest of fleetdesk.
"""
