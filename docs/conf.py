"""Sphinx configuration: the API reference comes from the installed package's docstrings,
with each signature taken from its type stubs (stridekit/_stridekit.pyi) where they
have one, so the reference shows the types mypy checks."""

import ast
import os
from typing import Any, Dict, Optional, Tuple

import stridekit

project = "stridekit"
release = stridekit.__version__
extensions = ["sphinx.ext.autodoc"]
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "undoc-members": False}
default_role = "code"
html_theme = "alabaster"
exclude_patterns = ["_build"]


def _stub_signatures() -> Dict[str, Tuple[str, Optional[str]]]:
    """'Class.method' (or 'function') -> (argument list, return annotation) from the stubs."""
    path = os.path.join(os.path.dirname(stridekit.__file__), "_stridekit.pyi")
    with open(path) as f:
        tree = ast.parse(f.read())
    found: Dict[str, Tuple[str, Optional[str]]] = {}

    def add(prefix: str, fn: ast.FunctionDef) -> None:
        args = ast.unparse(fn.args)
        ret = ast.unparse(fn.returns) if fn.returns is not None else None
        found[prefix + fn.name] = (f"({args})", ret)

    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            add("", node)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    add(node.name + ".", item)
            init = found.get(node.name + ".__init__")
            if init is not None:
                found[node.name] = (init[0], None)
    return found


_STUBS = _stub_signatures()


def _signature(app: Any, what: str, name: str, obj: Any, options: Any, signature: Any,
               return_annotation: Any) -> Optional[Tuple[str, Optional[str]]]:
    if what not in ("function", "method", "class", "exception"):
        return None  # properties and attributes have no argument list
    key = name[len("stridekit."):] if name.startswith("stridekit.") else name
    stub = _STUBS.get(key)
    if stub is None:
        return None
    args, ret = stub
    # Methods are shown without self/cls, as autodoc shows them.
    for first in ("(self, ", "(cls, ", "(self)", "(cls)"):
        if args.startswith(first):
            args = "(" + args[len(first):] if first.endswith(", ") else "()"
            break
    return args, ret


def setup(app: Any) -> None:
    app.connect("autodoc-process-signature", _signature)
