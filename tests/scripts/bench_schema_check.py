#!/usr/bin/env python3
"""Checks JSON files against a JSON Schema, with the standard library only.

    bench_schema_check.py SCHEMA FILE...

Understands the subset tools/bench-schema.json uses: type, enum, const,
minimum, properties, required, additionalProperties, items, anyOf and local
$ref ("#/$defs/NAME"); title, description and $schema are notes.  A schema
keyword outside that subset is an error, not silently ignored, so the schema
cannot claim a constraint this checker does not enforce.  Prints each problem
with its place in the document ($.results[3].native.median) and exits 1 if
there is any."""
import json
import sys

NOTES = {"$schema", "$id", "$defs", "title", "description"}
CHECKED = {"type", "enum", "const", "minimum", "properties", "required",
           "additionalProperties", "items", "anyOf", "$ref"}


def type_matches(value, name):
    if name == "null":
        return value is None
    if name == "boolean":
        return isinstance(value, bool)
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if name == "string":
        return isinstance(value, str)
    if name == "array":
        return isinstance(value, list)
    if name == "object":
        return isinstance(value, dict)
    raise ValueError(f"schema: unknown type {name!r}")


def same(a, b):
    """JSON equality: true is not 1."""
    return type(a) is type(b) and a == b or (
        type_matches(a, "number") and type_matches(b, "number") and a == b)


class Checker:
    def __init__(self, schema):
        self.root = schema
        self.problems = []

    def resolve(self, ref):
        if not ref.startswith("#/"):
            raise ValueError(f"schema: only local $ref is understood, not {ref!r}")
        node = self.root
        for part in ref[2:].split("/"):
            node = node[part]
        return node

    def errors(self, value, schema, where):
        """The problems of value against schema, as a list (empty: valid)."""
        unknown = set(schema) - NOTES - CHECKED
        if unknown:
            raise ValueError(f"schema at {where}: keywords not understood: {sorted(unknown)}")
        found = []
        if "$ref" in schema:
            found += self.errors(value, self.resolve(schema["$ref"]), where)
        if "type" in schema:
            names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            if not any(type_matches(value, n) for n in names):
                return found + [f"{where}: {json.dumps(value)[:60]} is not {' or '.join(names)}"]
        if "const" in schema and not same(value, schema["const"]):
            found.append(f"{where}: {json.dumps(value)[:60]} is not {json.dumps(schema['const'])}")
        if "enum" in schema and not any(same(value, e) for e in schema["enum"]):
            found.append(f"{where}: {json.dumps(value)[:60]} is not one of {schema['enum']}")
        if "minimum" in schema and type_matches(value, "number") and value < schema["minimum"]:
            found.append(f"{where}: {value} is below the minimum {schema['minimum']}")
        if "anyOf" in schema:
            results = [self.errors(value, s, where) for s in schema["anyOf"]]
            if all(results):
                best = min(results, key=len)
                found.append(f"{where}: matches none of the {len(results)} choices; "
                             f"closest: {best[0]}")
        if isinstance(value, dict):
            found += self.object_errors(value, schema, where)
        if isinstance(value, list) and "items" in schema:
            for i, item in enumerate(value):
                found += self.errors(item, schema["items"], f"{where}[{i}]")
        return found

    def object_errors(self, value, schema, where):
        found = []
        props = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                found.append(f"{where}: lacks {key!r}")
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            if key in props:
                found += self.errors(item, props[key], f"{where}.{key}")
            elif extra is False:
                found.append(f"{where}: {key!r} is not in the schema")
            elif isinstance(extra, dict):
                found += self.errors(item, extra, f"{where}.{key}")
        return found


def main(argv):
    if len(argv) < 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        schema = json.load(f)
    failed = 0
    for path in argv[2:]:
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            print(f"{path}: not readable as JSON: {e}")
            failed = 1
            continue
        problems = Checker(schema).errors(doc, schema, "$")
        for p in problems[:20]:
            print(f"{path}: {p}")
        if len(problems) > 20:
            print(f"{path}: ... and {len(problems) - 20} more")
        if problems:
            failed = 1
        else:
            print(f"{path}: valid against {argv[1]}")
    return failed


if __name__ == "__main__":
    sys.exit(main(sys.argv))
