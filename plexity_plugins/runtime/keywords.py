"""A mistyped keyword argument of one of our classes is told the argument meant, on every Python.

``PerplexitySentenceFilter(treshold=900)`` was Python 3.11's "PerplexitySentenceFilter.__init__() got an unexpected
keyword argument 'treshold'" (Debian 12's Python: 3.13 adds "Did you mean ...?"), and a user of the library had to
read the signature to find the name.  `suggests_keywords` makes the class say the name meant (or list its arguments)
before its ``__init__`` runs; a class whose ``__init__`` takes ``**kwargs`` (passed on to datatrove) is left as it is.
Another package's keyword, ported with its code (pyplexity's ``perpl_limit``), is told what it is here by `hints`.
"""

from __future__ import annotations

import difflib
import functools
import inspect
from collections.abc import Mapping


def suggests_keywords(cls: type | None = None, *, hints: Mapping[str, str] | None = None):
    """`cls`, its ``__init__`` refusing a keyword argument it does not take with the one meant (a class decorator;
    ``@suggests_keywords(hints={word: what it is here})`` for words no near miss names)."""
    if cls is None:
        return functools.partial(suggests_keywords, hints=hints)
    init = cls.__init__
    parameters = inspect.signature(init).parameters.values()
    if any(p.kind is p.VAR_KEYWORD for p in parameters):
        return cls
    names = [p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "self"]

    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        for word in kwargs:
            if word not in names:
                raise TypeError(unexpected_keyword(type(self).__name__, word, names, hints))
        init(self, *args, **kwargs)

    cls.__init__ = __init__
    return cls


def unexpected_keyword(name: str, word: str, names: list[str], hints: Mapping[str, str] | None = None) -> str:
    """What a call of `name` with the keyword argument `word`, none of `names`, is told."""
    if hints and word in hints:
        return f"{name}() got an unexpected keyword argument {word!r}: {hints[word]}"
    meant = difflib.get_close_matches(word, names, n=1, cutoff=0.6)
    hint = f". Did you mean {meant[0]!r}?" if meant else f" (its arguments: {', '.join(names)})"
    return f"{name}() got an unexpected keyword argument {word!r}{hint}"
