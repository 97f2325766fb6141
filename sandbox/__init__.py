"""A local stand-in for the platform's API: a world of synthetic data behind a real HTTP server.

`sandbox.app.create_app(world, options)` builds the ASGI apps, `sandbox.server` serves them with
uvicorn, `sandbox.cli.main` is the command line and `sandbox.running` has the test fixtures. Nothing
is imported here so that `import sandbox.running` stays cheap and works before the world does.
"""
