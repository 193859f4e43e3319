"""A mistyped keyword argument of one of our classes is told the argument meant, on every Python.

``PerplexitySentenceFilter(treshold=900)`` was Python 3.11's "PerplexitySentenceFilter.__init__() got an unexpected
keyword argument 'treshold'" (Debian 12's Python: 3.13 adds "Did you mean ...?"), and a user of the library had to
read the signature to find the name.  `suggests_keywords` makes the class say the name meant (or list its arguments)
before its ``__init__`` runs.  A class whose ``__init__`` passes ``**kwargs`` on (our executors and dataset readers, to
datatrove's) takes the names of the classes it passes them to, up to the first that takes no ``**kwargs``: datatrove's
own TypeError named neither the argument meant nor our class; one whose chain ends nowhere is left as it is.
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
    names = accepted_keywords(cls)
    if names is None:
        return cls

    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        for word in kwargs:
            if word not in names:
                raise TypeError(unexpected_keyword(type(self).__name__, word, names, hints))
        init(self, *args, **kwargs)

    cls.__init__ = __init__
    return cls


def accepted_keywords(cls: type) -> list[str] | None:
    """The keyword arguments `cls` takes: its ``__init__``'s, and where that passes ``**kwargs`` on, those of the next
    ``__init__`` along its method resolution order, up to the first that takes no ``**kwargs`` (None if none does)."""
    names: list[str] = []
    for klass in cls.__mro__:
        if "__init__" not in vars(klass) or klass is object:
            continue
        parameters = inspect.signature(vars(klass)["__init__"]).parameters.values()
        names += [p.name for p in parameters
                  if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "self" and p.name not in names]
        if not any(p.kind is p.VAR_KEYWORD for p in parameters):
            return names
    return None


def unexpected_keyword(name: str, word: str, names: list[str], hints: Mapping[str, str] | None = None) -> str:
    """What a call of `name` with the keyword argument `word`, none of `names`, is told."""
    if hints and word in hints:
        return f"{name}() got an unexpected keyword argument {word!r}: {hints[word]}"
    meant = difflib.get_close_matches(word, names, n=1, cutoff=0.6)
    hint = f". Did you mean {meant[0]!r}?" if meant else f" (its arguments: {', '.join(names)})"
    return f"{name}() got an unexpected keyword argument {word!r}{hint}"
