"""Where fleetdesk keeps its files, and the settings it reads from them and the environment."""
