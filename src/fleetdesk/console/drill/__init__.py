"""The console running a drill: the drill app, its scorecard screen, and the headless player."""
