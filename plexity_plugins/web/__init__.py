"""The `plexity serve` web demo (a Starlette app served by uvicorn)."""
