"""A local path given to one of our steps, made absolute against the driver's working directory
when the step is made: the folder the user meant where they wrote the pipeline.

datatrove's `DataFolder` makes a local path absolute when it is made, but it pickles as the
arguments it was made with (fsspec's filesystems do): a ``DataFolder("out")`` unpickled in a Ray or
Slurm worker started in another folder is that folder's ``out``.  Our steps hand datatrove the
absolute path instead, so the copy a worker receives names the same files.  (The model path of the
perplexity filters is made absolute where every front end resolves models:
`plexity_plugins.scoring.models.resolve`.)
"""

from __future__ import annotations

import os

from datatrove.io import DataFolder
from fsspec.core import url_to_fs
from fsspec.implementations.local import LocalFileSystem


def anchored(data):
    """A `DataFolderLike` or `DataFileLike` argument (a str, a (str, options) or (str, filesystem)
    pair, a DataFolder) with its local path absolute; remote ones, and other objects, unchanged."""
    if isinstance(data, os.PathLike):
        data = os.fspath(data)
    if isinstance(data, str):
        fs, path = url_to_fs(data)
        return path if isinstance(fs, LocalFileSystem) else data
    if isinstance(data, tuple) and len(data) == 2 and isinstance(data[0], str):
        path, fs = data
        if isinstance(fs, dict):
            fs, absolute = url_to_fs(path, **fs)
            return (absolute, data[1]) if isinstance(fs, LocalFileSystem) else data
        return (url_to_fs(path)[1], fs) if isinstance(fs, LocalFileSystem) else data
    if type(data) is DataFolder and data.is_local():  # (made again from its absolute path; a subclass is left as is)
        return DataFolder(data.path, fs=data.fs, auto_mkdir=data.auto_mkdir)
    return data
