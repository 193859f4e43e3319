"""Errors that say the installation is broken, never the input (every layer may raise them)."""

from __future__ import annotations


class InstallationError(RuntimeError):
    """The installation lacks something a document needs (a module, a model file, a runnable
    interpreter for the extraction child ...): the run stops, it never counts a page as failed."""

    def __init__(self, message: str, cause: BaseException | None = None):
        super().__init__(message)
        self.cause = cause
