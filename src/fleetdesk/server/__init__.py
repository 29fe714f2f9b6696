"""The reference backend: FastAPI app over a SQLite store (see fleetdesk.wire for the contract)."""
