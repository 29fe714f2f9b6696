"""One router per resource; fleetdesk.server.app mounts them under /v1."""
