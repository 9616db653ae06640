"""A config file's bytes → its YAML document, refused in one line naming the file and line when it
is no UTF-8 text, gives a key twice in one mapping (PyYAML would keep the last silently), nests too
deep or expands its aliases past what a config holds (:mod:`spbench.pipeline.config` checks the keys)."""
from __future__ import annotations

import yaml


class YamlProblem(ValueError):
    """A config file that is no YAML document a config can be; the message is one line."""


#: a config nests a few levels deep and holds at most thousands of values; beyond these limits a
#: file is refused before it is built (deep nesting overflows the YAML composer's recursion,
#: aliases of aliases expand exponentially when the config is copied into meta.json)
MAX_YAML_DEPTH = 64
MAX_YAML_VALUES = 100_000


def parse_yaml(raw: bytes, src: str):
    """The YAML document in ``raw``: UTF-8 text, nested at most MAX_YAML_DEPTH levels, expanding
    to at most MAX_YAML_VALUES values with its aliases; else a one-line YamlProblem."""
    nul = raw.find(b"\0")
    if nul >= 0:
        raise YamlProblem(f"{src}: expected a YAML text file, found binary data (a NUL byte at offset {nul})")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise YamlProblem(f"{src}: line {line}: expected UTF-8 text, found byte 0x{raw[exc.start]:02x}") from None
    try:
        _check_yaml_size(text, src)
        return yaml.load(text, Loader=_ConfigLoader)
    except _DuplicateKey as exc:
        raise YamlProblem(f"{src}: line {exc.line}: key {exc.key!r} given twice") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise YamlProblem(f"{src}:{where} {problem}") from None


class _DuplicateKey(yaml.YAMLError):
    """A mapping that gives a key twice (PyYAML would keep the last silently)."""

    def __init__(self, key, line: int):
        super().__init__(f"line {line}: key {key!r} given twice")
        self.key, self.line = key, line


class _ConfigLoader(yaml.SafeLoader):
    """yaml.SafeLoader refusing a key given twice in one mapping, at any depth; the keys a merge
    (``<<: *anchor``) brings may be overridden."""

    def flatten_mapping(self, node):
        checked = self.__dict__.setdefault("_checked_mappings", set())
        if id(node) not in checked:  # before the merge pulls in other mappings' keys
            checked.add(id(node))
            seen = set()
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge" or not isinstance(key_node, yaml.ScalarNode):
                    continue
                key = self.construct_object(key_node)
                if key in seen:
                    raise _DuplicateKey(key, key_node.start_mark.line + 1)
                seen.add(key)
        super().flatten_mapping(node)


def _check_yaml_size(text: str, src: str) -> None:
    """Walk the YAML events (no recursion, nothing built): depth and alias-expanded value count."""
    sizes: dict = {}  # anchor -> values its node expands to
    stack: list = []  # [anchor, values so far] per open collection
    total = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            stack.append([event.anchor, 1])
            if len(stack) > MAX_YAML_DEPTH:
                raise YamlProblem(f"{src}: line {event.start_mark.line + 1}: nested more than "
                                  f"{MAX_YAML_DEPTH} levels deep; expected a config of a few levels")
            continue
        if isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            anchor, count = stack.pop()
        elif isinstance(event, yaml.ScalarEvent):
            anchor, count = event.anchor, 1
        elif isinstance(event, yaml.AliasEvent):
            anchor, count = None, sizes.get(event.anchor, 1)
        else:
            continue
        if anchor is not None:
            sizes[anchor] = count
        if stack:
            stack[-1][1] += count
        else:
            total += count
        if (stack[0][1] if stack else total) > MAX_YAML_VALUES:
            raise YamlProblem(f"{src}: line {event.start_mark.line + 1}: its aliases expand to more than "
                              f"{MAX_YAML_VALUES} values; expected a config of at most thousands")
