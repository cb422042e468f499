"""The translation unit as the oracle sees it: functions, templates, constants, typedefs, globals.

Built once per (source, target): the source is preprocessed for that target's macros, parsed with
portkit's tree-sitter-cuda parser, and its top level indexed. Declarations are read here too
(`declared`), because a declaration's type and array shape mean the same at namespace scope,
in a kernel and in a parameter list.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tree_sitter import Node

from portkit.core.parse import parse

from .cvalues import NAMED, CType, PtrType, SimError, convert

CONTAINERS = ("namespace_definition", "linkage_specification", "declaration_list")


@dataclass
class Const:
    """A compile-time constant: constexpr/const globals, template arguments, enumerators."""

    ctype: CType
    value: object


@dataclass
class Function:
    name: str
    node: Node  # the function_definition
    template: list[Node] = field(default_factory=list)  # template parameter declarations
    qualifiers: frozenset = frozenset()

    @property
    def params(self) -> list[Node]:
        declarator = self.node.child_by_field_name("declarator")
        while declarator.type != "function_declarator":
            declarator = declarator.child_by_field_name("declarator")
        plist = declarator.child_by_field_name("parameters")
        return [p for p in plist.named_children if p.type in ("parameter_declaration", "optional_parameter_declaration")]


@dataclass
class Declared:
    name: str
    ctype: object  # CType or PtrType
    dims: list[Node]  # array sizes, outermost first
    value: Node | None
    reference: bool = False


def text(node: Node) -> str:
    return node.text.decode()


def base_type(node: Node, types: dict) -> CType:
    kind, spelled = node.type, " ".join(text(node).split())
    if kind in ("primitive_type", "sized_type_specifier", "type_identifier"):
        for name in (spelled, spelled.replace("signed ", "", 1) if spelled.startswith("signed ") else spelled):
            if name in types:
                return types[name]
            if name in NAMED:
                return NAMED[name]
    if kind == "qualified_identifier" and spelled.split("::")[-1] in NAMED:
        return NAMED[spelled.split("::")[-1]]
    raise SimError(f"unsupported type {spelled!r}")


def declared(declarator: Node, base, value: Node | None = None) -> Declared:
    """Name, type and array dimensions of one declarator over the declaration's base type."""
    pointers, dims, reference = 0, [], False
    node = declarator
    while node.type != "identifier":
        if node.type == "init_declarator":
            value = node.child_by_field_name("value")
        elif node.type == "pointer_declarator":
            pointers += 1
        elif node.type == "array_declarator":
            dims.append(node.child_by_field_name("size"))
        elif node.type == "reference_declarator":
            reference = True
            node = node.named_children[-1]
            continue
        elif node.type not in ("parenthesized_declarator",):
            raise SimError(f"unsupported declarator {node.type} at line {node.start_point[0] + 1}")
        inner = node.child_by_field_name("declarator")
        node = inner if inner is not None else node.named_children[-1]
    if pointers > 1:
        raise SimError(f"pointer to pointer {text(node)} is not simulated")
    ctype = PtrType(base) if pointers else base
    return Declared(text(node), ctype, list(reversed(dims)), value, reference)


def qualifiers(node: Node) -> frozenset:
    kinds = ("type_qualifier", "storage_class_specifier", "attribute_specifier", "virtual")
    words = [text(c) for c in node.children if c.type in kinds or text(c).startswith("__")]
    return frozenset(w for word in words for w in word.split())


class Program:
    """Index of a preprocessed source's top level; `const_eval` is supplied by the interpreter."""

    def __init__(self, source: str, const_eval):
        self.tree = parse(source.encode())
        self.functions: dict[str, list[Function]] = {}
        self.globals: dict[str, object] = {}
        self.types: dict[str, CType] = {}
        self.const_eval = const_eval
        self.global_decls: list[Node] = []
        self._index(self.tree.root_node, [])

    def _index(self, node: Node, template: list[Node]) -> None:
        for child in node.named_children:
            if child.type in CONTAINERS:
                body = child.child_by_field_name("body")
                self._index(body if body is not None else child, [])
            elif child.type == "template_declaration":
                params = child.child_by_field_name("parameters").named_children
                self._index_one(child.named_children[-1], params)
            else:
                self._index_one(child, template)

    def _index_one(self, node: Node, template: list[Node]) -> None:
        try:
            self._index_node(node, template)
        except SimError:
            pass  # a typedef of a type the oracle does not model: only its users fail, by name

    def _index_node(self, node: Node, template: list[Node]) -> None:
        if node.type == "function_definition":
            declarator = node.child_by_field_name("declarator")
            while declarator is not None and declarator.type != "function_declarator":
                declarator = declarator.child_by_field_name("declarator")
            if declarator is None:
                return
            name = text(declarator.child_by_field_name("declarator")).split("::")[-1]
            self.functions.setdefault(name, []).append(Function(name, node, template, qualifiers(node)))
        elif node.type == "type_definition":
            ctype = base_type(node.child_by_field_name("type"), self.types)
            for declarator in node.children_by_field_name("declarator"):
                self.types[text(declarator)] = ctype
        elif node.type == "alias_declaration":
            described = node.child_by_field_name("type")
            self.types[text(node.child_by_field_name("name"))] = base_type(described.child_by_field_name("type"), self.types)
        elif node.type == "enum_specifier" or (node.type == "declaration" and node.child_by_field_name("type").type == "enum_specifier"):
            self._enum(node if node.type == "enum_specifier" else node.child_by_field_name("type"))
        elif node.type == "declaration" and not template:
            self.global_decls.append(node)

    def _enum(self, node: Node) -> None:
        body = node.child_by_field_name("body")
        value = -1
        for item in body.named_children if body is not None else []:
            if item.type != "enumerator":
                continue
            given = item.child_by_field_name("value")
            value = self.const_eval(given) if given is not None else value + 1
            self.globals[text(item.child_by_field_name("name"))] = Const(NAMED["int"], convert(value, NAMED["int"]))

    def function(self, name: str, arity: int) -> Function | None:
        for candidate in self.functions.get(name, []):
            params = candidate.params
            required = [p for p in params if p.type == "parameter_declaration"]
            if len(required) <= arity <= len(params) and candidate.node.child_by_field_name("body"):
                return candidate
        return None
