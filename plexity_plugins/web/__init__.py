"""The `plexity serve` web demo (a Starlette app served by uvicorn)."""

# Here rather than in app.py, so that `plexity serve --help` needs no Starlette.
DEFAULT_MAX_BYTES = 2 * 1024 * 1024
DEFAULT_BODY_TIMEOUT = 30.0  # seconds for a request body to arrive, before it may wait for a scoring thread
DEFAULT_WEB_EXTRACTOR = "tags"  # every visible block, so that the filter's work shows
