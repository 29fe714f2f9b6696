"""The console and snapshots: exporting what the console shows, and reopening a snapshot read-only."""
