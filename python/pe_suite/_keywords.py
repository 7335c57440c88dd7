"""Keyword arguments checked by name before the native call: pybind11 answers a misspelt keyword with every
overload's full signature (thousands of characters), where a user needs the one word that is wrong."""
import difflib
import functools
import re


def parameter_names(doc):
    """The parameter names in a pybind11 docstring's first line, `name(a: T, *, b: U = None) -> R`."""
    first = doc.splitlines()[0] if doc else ""
    match = re.match(r"\w+\((.*)\)\s*->", first)
    if not match:
        raise ValueError(f"not a pybind11 signature: {first!r}")
    names, depth, token = [], 0, ""
    for c in match.group(1) + ",":
        depth += c in "[(" and 1 or c in "])" and -1 or 0
        if c == "," and depth == 0:
            name = re.split(r"[:=]", token)[0].strip()
            if name and name not in ("*", "/"):
                names.append(name)
            token = ""
        else:
            token += c
    return names


def checked(function):
    """`function` with its keywords checked: TypeError "f(): unexpected keyword 'bse' (did you mean 'base'?)"."""
    known = parameter_names(function.__doc__)

    @functools.wraps(function)
    def call(*args, **kwargs):
        for word in kwargs:
            if word not in known:
                close = difflib.get_close_matches(word, known, n=1)
                hint = f" (did you mean '{close[0]}'?)" if close else f" (keywords: {', '.join(known)})"
                raise TypeError(f"{function.__name__}(): unexpected keyword '{word}'{hint}")
        return function(*args, **kwargs)

    return call
