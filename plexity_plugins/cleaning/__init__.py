"""Cleaning documents: the verdict on each document, shared by every front end (`policy`),
cleaning WARC and document files (`files`), the statistics of a run (`stats`) and its HTML report (`report`)."""
