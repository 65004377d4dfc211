"""Routes by resource. Each module has ``routes() -> list[Route]``; ``app.ROUTE_MODULES`` lists
them in order. Memory, tasks and export arrive later as one more module each."""
